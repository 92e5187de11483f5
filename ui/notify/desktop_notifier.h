#pragma once
// A desktop notification (the first overflow of a watched dump): org.freedesktop.Notifications
// over the session D-Bus when a bus exists and a notification server is on it (or can be started
// by it), else QSystemTrayIcon::showMessage when the desktop has a tray, else nothing beyond what
// the window shows (its verdict banner). Never an error: a desktop without either is a normal
// desktop. Clicking the notification raises the window.
#include <QObject>
#include <QSet>
#include <QString>

class QSystemTrayIcon;
class QWidget;

namespace dlui {

class DesktopNotifier : public QObject {
    Q_OBJECT
public:
    enum class Channel { DesktopBus, Tray, WindowOnly };

    explicit DesktopNotifier(QWidget* window);
    // Shows the notification by the first channel the desktop has; says which.
    Channel notify(const QString& title, const QString& body);
    // Whether a session bus exists to ask (its address set, or the per-user socket there): the
    // bus is never started for us (no dbus-launch autolaunch).
    static bool sessionBusExists();
    static QString channelName(Channel c);
    int sent() const { return m_sent; }
    Channel lastChannel() const { return m_last; }

private slots:
    void onActionInvoked(uint id, const QString& action);

private:
    Channel show(const QString& title, const QString& body);
    bool notifyOverBus(const QString& title, const QString& body);
    void raiseWindow();

    QWidget* m_window;
    QSystemTrayIcon* m_tray = nullptr;
    bool m_listening = false;  // connected to the server's ActionInvoked signal
    QSet<uint> m_ids;          // of the notifications we sent
    int m_sent = 0;
    Channel m_last = Channel::WindowOnly;
};

}  // namespace dlui

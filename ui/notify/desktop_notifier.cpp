#include "ui/notify/desktop_notifier.h"

#include <QApplication>
#include <QFileInfo>
#include <QSystemTrayIcon>
#include <QWidget>

#ifdef DUMPLENS_HAVE_QTDBUS
#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QDBusMessage>
#include <QDBusPendingCall>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QDBusReply>
#endif

namespace dlui {

namespace {
constexpr const char* kService = "org.freedesktop.Notifications";
constexpr const char* kPath = "/org/freedesktop/Notifications";
constexpr const char* kInterface = "org.freedesktop.Notifications";
}  // namespace

DesktopNotifier::DesktopNotifier(QWidget* window) : QObject(window), m_window(window) {}

bool DesktopNotifier::sessionBusExists() {
    if (!qEnvironmentVariableIsEmpty("DBUS_SESSION_BUS_ADDRESS")) return true;
    const QString runtime = qEnvironmentVariable("XDG_RUNTIME_DIR");
    return !runtime.isEmpty() && QFileInfo(runtime + QStringLiteral("/bus")).exists();
}

QString DesktopNotifier::channelName(Channel c) {
    switch (c) {
        case Channel::DesktopBus:
            return QStringLiteral("desktop notification");
        case Channel::Tray:
            return QStringLiteral("tray message");
        case Channel::WindowOnly:
            break;
    }
    return QStringLiteral("window only");
}

DesktopNotifier::Channel DesktopNotifier::notify(const QString& title, const QString& body) {
    ++m_sent;
    m_last = show(title, body);
    return m_last;
}

DesktopNotifier::Channel DesktopNotifier::show(const QString& title, const QString& body) {
    if (notifyOverBus(title, body)) return Channel::DesktopBus;
    if (QSystemTrayIcon::isSystemTrayAvailable() && QSystemTrayIcon::supportsMessages()) {
        if (!m_tray) {
            m_tray = new QSystemTrayIcon(QApplication::windowIcon(), this);
            m_tray->setToolTip(QStringLiteral("DumpLens"));
            connect(m_tray, &QSystemTrayIcon::messageClicked, this, &DesktopNotifier::raiseWindow);
            connect(m_tray, &QSystemTrayIcon::activated, this, &DesktopNotifier::raiseWindow);
        }
        m_tray->show();
        m_tray->showMessage(title, body, QSystemTrayIcon::Warning, 0);
        return Channel::Tray;
    }
    return Channel::WindowOnly;
}

bool DesktopNotifier::notifyOverBus(const QString& title, const QString& body) {
#ifdef DUMPLENS_HAVE_QTDBUS
    if (!sessionBusExists()) return false;
    QDBusConnection bus = QDBusConnection::sessionBus();
    if (!bus.isConnected() || !bus.interface()) return false;
    const QString service = QString::fromLatin1(kService);
    if (!bus.interface()->isServiceRegistered(service).value()) {
        // Not running: a bus that can start one on demand still counts.
        const QDBusReply<QStringList> activatable = bus.call(QDBusMessage::createMethodCall(
            QStringLiteral("org.freedesktop.DBus"), QStringLiteral("/org/freedesktop/DBus"),
            QStringLiteral("org.freedesktop.DBus"), QStringLiteral("ListActivatableNames")));
        if (!activatable.isValid() || !activatable.value().contains(service)) return false;
    }
    if (!m_listening)
        m_listening = bus.connect(service, QString::fromLatin1(kPath), QString::fromLatin1(kInterface),
                                  QStringLiteral("ActionInvoked"), this, SLOT(onActionInvoked(uint, QString)));
    QDBusMessage call = QDBusMessage::createMethodCall(service, QString::fromLatin1(kPath),
                                                       QString::fromLatin1(kInterface), QStringLiteral("Notify"));
    QVariantMap hints;
    hints.insert(QStringLiteral("urgency"), QVariant::fromValue(uchar(2)));  // critical: stays until seen
    hints.insert(QStringLiteral("desktop-entry"), QStringLiteral("dumplens"));
    call << QStringLiteral("DumpLens") << uint(0) << QStringLiteral("dumplens") << title << body
         << QStringList{QStringLiteral("default"), tr("Show")} << hints << int(-1);
    // Never waits on the server: the window goes on. The id it answers tells our notification's
    // clicks from other programs' (ActionInvoked goes to every listener).
    auto* watcher = new QDBusPendingCallWatcher(bus.asyncCall(call), this);
    connect(watcher, &QDBusPendingCallWatcher::finished, this, [this](QDBusPendingCallWatcher* w) {
        const QDBusPendingReply<uint> reply = *w;
        if (reply.isValid()) m_ids.insert(reply.value());
        w->deleteLater();
    });
    return true;
#else
    Q_UNUSED(title);
    Q_UNUSED(body);
    return false;
#endif
}

void DesktopNotifier::onActionInvoked(uint id, const QString& action) {
    if (m_ids.contains(id) && action == QLatin1String("default")) raiseWindow();
}

void DesktopNotifier::raiseWindow() {
    if (!m_window) return;
    m_window->showNormal();
    m_window->raise();
    m_window->activateWindow();
}

}  // namespace dlui

// DesktopNotifier: without a session bus (and no tray, offscreen) it says it fell back to the
// window alone, no error; likewise with a bus that has no notification server; with a bus whose
// org.freedesktop.Notifications server is this test, the server receives one Notify call carrying
// the title and the body, and the notifier says it used the bus. The bus is a private dbus-daemon of the test (skipped
// where dbus-daemon is missing; scripts/install-deps.sh installs it, so CI runs it).
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QWidget>

#include "ui/notify/desktop_notifier.h"

#ifdef DUMPLENS_HAVE_QTDBUS
#include <QDBusConnection>
#include <QDBusConnectionInterface>

// The notification server's side of org.freedesktop.Notifications, as much as Notify needs.
class FakeNotificationServer : public QObject {
    Q_OBJECT
    Q_CLASSINFO("D-Bus Interface", "org.freedesktop.Notifications")
public:
    QStringList summaries, bodies;
    QVariantMap lastHints;
public slots:
    uint Notify(const QString& app, uint replaces, const QString& icon, const QString& summary, const QString& body,
                const QStringList& actions, const QVariantMap& hints, int timeout) {
        Q_UNUSED(app);
        Q_UNUSED(replaces);
        Q_UNUSED(icon);
        Q_UNUSED(actions);
        Q_UNUSED(timeout);
        summaries << summary;
        bodies << body;
        lastHints = hints;
        return uint(summaries.size());
    }
};
#endif

using namespace dlui;

class TstDesktopNotifier : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    void withoutABusOrTrayOnlyTheWindowShowsIt() {
        qunsetenv("DBUS_SESSION_BUS_ADDRESS");
        qputenv("XDG_RUNTIME_DIR", m_tmp.path().toUtf8());  // no "bus" socket there
        QVERIFY(!DesktopNotifier::sessionBusExists());
        QWidget window;
        DesktopNotifier n(&window);
        QCOMPARE(n.notify(QStringLiteral("First fp16 overflow in dump"), QStringLiteral("SqrtGrad-op393 on rank 3")),
                 DesktopNotifier::Channel::WindowOnly);
        QCOMPARE(n.sent(), 1);
    }

    void aNotificationServerOnTheSessionBusGetsIt() {
#ifndef DUMPLENS_HAVE_QTDBUS
        QSKIP("built without QtDBus");
#else
        const QString daemon = QStandardPaths::findExecutable(QStringLiteral("dbus-daemon"));
        if (daemon.isEmpty()) QSKIP("dbus-daemon is not installed");
        // A bus of the test's own, without the session bus' service folders: a notification server
        // installed on the machine (dunst, ...) would be started by it, and be "a server on the bus".
        const QString config = m_tmp.filePath(QStringLiteral("bus.conf"));
        {
            QFile f(config);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN\"\n"
                " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                "<busconfig><type>session</type><listen>unix:dir=" +
                m_tmp.path().toUtf8() +
                "</listen><auth>EXTERNAL</auth><policy context=\"default\">"
                "<allow send_destination=\"*\" eavesdrop=\"true\"/><allow eavesdrop=\"true\"/>"
                "<allow own=\"*\"/></policy></busconfig>\n");
        }
        QProcess bus;
        bus.start(daemon,
                  {QStringLiteral("--config-file=") + config, QStringLiteral("--nofork"),
                   QStringLiteral("--print-address=1")});
        QVERIFY(bus.waitForStarted());
        QVERIFY(bus.waitForReadyRead(10000));
        const QByteArray address = bus.readLine().trimmed();
        QVERIFY(!address.isEmpty());
        qputenv("DBUS_SESSION_BUS_ADDRESS", address);
        QVERIFY(DesktopNotifier::sessionBusExists());
        {
            QDBusConnection conn = QDBusConnection::sessionBus();
            QVERIFY2(conn.isConnected(), qPrintable(conn.lastError().message()));
            {
                // No server on the bus yet (none running, none it can start): the next channel,
                // here the window alone.
                QWidget window;
                DesktopNotifier n(&window);
                QCOMPARE(n.notify(QStringLiteral("t"), QStringLiteral("b")), DesktopNotifier::Channel::WindowOnly);
            }
            FakeNotificationServer server;
            QVERIFY(conn.registerObject(QStringLiteral("/org/freedesktop/Notifications"), &server,
                                        QDBusConnection::ExportAllSlots));
            QVERIFY(conn.registerService(QStringLiteral("org.freedesktop.Notifications")));
            QWidget window;
            DesktopNotifier n(&window);
            QCOMPARE(
                n.notify(QStringLiteral("First fp16 overflow in dump"), QStringLiteral("SqrtGrad-op393 on rank 3")),
                DesktopNotifier::Channel::DesktopBus);
            QTRY_COMPARE_WITH_TIMEOUT(server.summaries.size(), 1, 10000);
            QCOMPARE(server.summaries.first(), QStringLiteral("First fp16 overflow in dump"));
            QCOMPARE(server.bodies.first(), QStringLiteral("SqrtGrad-op393 on rank 3"));
            QCOMPARE(server.lastHints.value(QStringLiteral("desktop-entry")).toString(), QStringLiteral("dumplens"));
            conn.unregisterService(QStringLiteral("org.freedesktop.Notifications"));
            conn.unregisterObject(QStringLiteral("/org/freedesktop/Notifications"));
        }
        QDBusConnection::disconnectFromBus(QStringLiteral("qt_default_session_bus"));
        bus.terminate();
        QVERIFY(bus.waitForFinished(10000));
#endif
    }

private:
    QTemporaryDir m_tmp;
};

QTEST_MAIN(TstDesktopNotifier)
#include "test_desktop_notifier.moc"

// File > Export trace…, offscreen: the action is there once an analysed dump is open, the export
// runs on a background thread and writes what core's writer (core/export/trace_events.h) writes for
// the same dump, says so in the status bar, and refuses a path inside the dump.
#include <QAction>
#include <QFile>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include "core/export/trace_events.h"
#include "tests/core/shared_demo.h"
#include "ui/jobs/trace_export.h"
#include "ui/main_window.h"
#include "ui/models/dump_session.h"

using namespace dlui;

class TstTraceExport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        qputenv("XDG_CACHE_HOME", m_tmp.filePath(QStringLiteral("app-cache")).toUtf8());
        qputenv("XDG_CONFIG_HOME", m_tmp.filePath(QStringLiteral("app-config")).toUtf8());
        QCoreApplication::setOrganizationName(QStringLiteral("DumpLensTest"));
        QCoreApplication::setApplicationName(QStringLiteral("dumplens-trace-test"));
        dl::demo::DemoVariantInfo info;
        try {
            m_root = QString::fromStdString(dltest::sharedDemoVariant(dl::demo::DemoOptions{}, info));
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
    }

    void exportsWhatCoreWrites() {
        MainWindow w;
        QAction* action = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->text().contains(QStringLiteral("Export &trace"))) action = a;
        QVERIFY(action);
        QVERIFY(!action->isEnabled());  // nothing open yet
        TraceExporter exporter(&w);
        QString error;
        QVERIFY(!exporter.start(nullptr, m_tmp.filePath(QStringLiteral("none.json")), error));
        QVERIFY(!error.isEmpty());

        w.openFolder(m_root);
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->analysis() != nullptr, 600000);
        QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy(), 60000);
        QVERIFY(action->isEnabled());
        const LoadedDumpPtr dump = w.session()->dump();

        // Inside the dump: refused at once, nothing written.
        const QString inside = m_root + QStringLiteral("/trace.json");
        QVERIFY(!exporter.start(dump, inside, error));
        QVERIFY2(error.contains(QStringLiteral("inside")), qPrintable(error));
        QVERIFY(!QFile::exists(inside));

        const QString path = m_tmp.filePath(QStringLiteral("run.json"));
        QVERIFY2(exporter.start(dump, path, error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(!exporter.isRunning(), 60000);
        QTRY_VERIFY_WITH_TIMEOUT(w.statusBar()->currentMessage().startsWith(QStringLiteral("Trace written to")), 10000);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray written = f.readAll();

        std::string expected, err;
        dl::TraceExportSummary sum;
        QVERIFY(dl::writeTraceEvents(
            *dump->index, dump->analysis.get(), *dump->states, {},
            [&](const char* d, std::size_t n, std::string&) {
                expected.append(d, n);
                return true;
            },
            sum, err));
        QCOMPARE(written.size(), qsizetype(expected.size()));
        QVERIFY(written == QByteArray::fromStdString(expected));
        QVERIFY(w.statusBar()->currentMessage().contains(QString::number(sum.slices)));
    }

private:
    QTemporaryDir m_tmp;
    QString m_root;
};

QTEST_MAIN(TstTraceExport)
#include "test_trace_export.moc"

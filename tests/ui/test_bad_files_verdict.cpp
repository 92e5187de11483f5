// Dumps with files that cannot be read: the count shows with the verdict (banner) and on the
// Issues tab; a folder with nothing readable gets no PDF report from the GUI, as from the CLI; and
// `dumplens-cli report` writes no QStandardPaths warning when XDG_RUNTIME_DIR is unset.
#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "tests/ui/isolated_app_state.h"
#include "tests/ui/long_name_dump.h"
#include "ui/main_window.h"
#include "ui/models/dump_session.h"
#include "ui/models/issues_model.h"
#include "ui/views/verdict_banner.h"

using namespace dlui;

class TstBadFilesVerdict : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        isolateAppState(m_tmp.path(), QStringLiteral("dumplens-bad-files"));
    }

    // An overflow dump with 9 truncated .npy files: the banner names the overflow and says 9 files
    // could not be read; the Issues tab counts its rows.
    void unreadableFilesShowWithTheVerdict() {
        const QString root = m_tmp.filePath(QStringLiteral("nine-unreadable"));
        std::string error;
        QVERIFY2(dltest::writeLongNameDump(root, error), error.c_str());
        for (int k = 0; k < 9; ++k) {
            QFile f(root +
                    QStringLiteral(
                        "/rank_0/net/0/0/Add.Default_Add-op9%1.0.0.17962870084%2.output.0.DefaultFormat.Float16.npy")
                        .arg(k)
                        .arg(10000 + k));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("\x93NUMPY\x01\x00 truncated", 18);
        }
        MainWindow w;
        w.show();
        w.openFolder(root);
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->analysis() && !w.isBusy(), 60000);
        const dl::AnalysisResult* a = w.session()->analysis();
        QVERIFY(a->firstOverflow);
        QCOMPARE(a->unreadableFiles, std::uint64_t(9));
        QVERIFY2(w.banner()->text().contains(QStringLiteral("First overflow")), qPrintable(w.banner()->text()));
        QVERIFY2(w.banner()->text().contains(QStringLiteral("9 files could not be read")),
                 qPrintable(w.banner()->text()));
        QDockWidget* issues = w.findChild<QDockWidget*>(QStringLiteral("dock.issues"));
        QVERIFY(issues);
        QVERIFY2(w.issues()->rowCount() >= 9, qPrintable(QString::number(w.issues()->rowCount())));
        QCOMPARE(issues->windowTitle(), QStringLiteral("Issues (%1)").arg(w.issues()->rowCount()));
    }

    // An empty folder: no verdict, so no report (the CLI exits 2 with "No data"); the action is off.
    void nothingReadableWritesNoReport() {
        const QString root = m_tmp.filePath(QStringLiteral("empty"));
        QVERIFY(QDir().mkpath(root));
        MainWindow w;
        w.show();
        w.openFolder(root);
        QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy() && w.session()->analysis(), 60000);
        QVERIFY(w.session()->analysis()->noData);
        const QString pdf = m_tmp.filePath(QStringLiteral("empty.pdf"));
        QString error;
        QVERIFY(!w.writeReport(pdf, error));
        QVERIFY2(error.startsWith(QStringLiteral("No data")), qPrintable(error));
        QVERIFY(!QFile::exists(pdf));
        QAction* exportAction = nullptr;
        for (QAction* act : w.findChildren<QAction*>())
            if (act->text().startsWith(QStringLiteral("&Export report"))) exportAction = act;
        QVERIFY(exportAction && !exportAction->isEnabled());
        // The CLI says the same.
        QProcess cli;
        cli.start(QStringLiteral(DUMPLENS_CLI_PATH), {QStringLiteral("report"), root, QStringLiteral("-o"), pdf});
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 2);
        QVERIFY(QString::fromUtf8(cli.readAllStandardError()).contains(QStringLiteral("No data")));
    }

    // `dumplens-cli report` without XDG_RUNTIME_DIR: a report, and nothing on stderr.
    void cliReportIsQuietWithoutRuntimeDir() {
        const QString root = m_tmp.filePath(QStringLiteral("quiet"));
        std::string error;
        QVERIFY2(dltest::writeLongNameDump(root, error), error.c_str());
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("XDG_RUNTIME_DIR"));
        env.remove(QStringLiteral("DISPLAY"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        env.remove(QStringLiteral("QT_QPA_PLATFORM"));
        QProcess cli;
        cli.setProcessEnvironment(env);
        const QString pdf = m_tmp.filePath(QStringLiteral("quiet.pdf"));
        cli.start(QStringLiteral(DUMPLENS_CLI_PATH), {QStringLiteral("report"), root, QStringLiteral("-o"), pdf});
        QVERIFY(cli.waitForFinished(60000));
        const QString err = QString::fromUtf8(cli.readAllStandardError());
        QCOMPARE(cli.exitCode(), 0);
        QVERIFY2(!err.contains(QStringLiteral("XDG_RUNTIME_DIR")), qPrintable(err));
        QVERIFY(QFile::exists(pdf));
    }

private:
    QTemporaryDir m_tmp;
};

QTEST_MAIN(TstBadFilesVerdict)
#include "test_bad_files_verdict.moc"

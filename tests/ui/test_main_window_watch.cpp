// File > Watch folder… / `dumplens --watch DIR` (MainWindow::watchFolder): a demo dump's files land
// in a watched folder that does not exist yet, in two rounds (the clean iterations, then the one
// that overflows). The window waits for the folder, the op table grows to what `index` gives for
// the files landed so far, the verdict stays clean after round one and then names the first
// overflow that `analyze` names for the finished folder (computed here by core, independently),
// the desktop notification goes out once, Stop watching gives the full analysis, and closing the
// window while it watches ends the watch without a hang.
#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/index/dump_indexer.h"
#include "tests/core/shared_demo.h"
#include "tests/core/watch/chunked_writer.h"
#include "tests/ui/isolated_app_state.h"
#include "ui/jobs/background_task.h"
#include "ui/jobs/dump_watcher.h"
#include "ui/main_window.h"
#include "ui/models/dump_session.h"
#include "ui/models/op_table_model.h"
#include "ui/notify/desktop_notifier.h"
#include "ui/views/op_table_panel.h"
#include "ui/views/verdict_banner.h"
#include "ui/views/watch_page.h"
#include "ui/views/watch_status.h"

using namespace dlui;
namespace fs = std::filesystem;

namespace {

struct Finished {
    std::size_t tensors = 0;
    nlohmann::json firstOverflow;  // analyze --json's, null when clean
};

// What `index` and `analyze` say of the folder as it is, from scratch (no cache: nothing is
// written anywhere, least of all into the folder).
Finished analyzeFolder(const fs::path& dir) {
    dl::IndexOptions io;
    io.useCache = false;
    dl::DumpIndex index;
    dl::IndexReport report;
    std::string error;
    if (!dl::indexDump(dir.string(), io, index, report, error)) qFatal("index %s: %s", dir.c_str(), error.c_str());
    return {index.tensors.size(), dl::toJson(index, dl::analyze(index))["first_overflow"]};
}

// The iteration folder of a tensor file (rank_N/<net>/<graph>/<iteration>/<file>), -1 for the
// rest (execution order, graphs): what a job writes before its iterations.
int iterationOf(const std::string& rel) {
    std::vector<std::string> parts;
    for (std::size_t at = 0, next; at <= rel.size(); at = next + 1) {
        next = rel.find('/', at);
        if (next == std::string::npos) next = rel.size();
        parts.push_back(rel.substr(at, next - at));
    }
    return parts.size() == 5 ? std::atoi(parts[3].c_str()) : -1;
}

}  // namespace

class TstMainWindowWatch : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        isolateAppState(m_tmp.path(), QStringLiteral("dumplens-watch"));
        // No session bus: the notification must fall back without an error (and none pops up on
        // the desktop of whoever runs the test).
        qunsetenv("DBUS_SESSION_BUS_ADDRESS");
        qputenv("XDG_RUNTIME_DIR", m_tmp.path().toUtf8());
        // Three iterations, the overflow in the last (~1,700 files), written once per ctest run
        // (tests/core/shared_demo.h; the core watch tests use the same variant).
        dl::demo::DemoOptions o;
        o.iterations = 3;
        o.overflowIteration = 2;
        o.decoyIteration = 1;
        dl::demo::DemoVariantInfo info;
        m_source = dltest::sharedDemoVariant(o, info);
        m_overflowIteration = info.firstOverflowIteration;
        QCOMPARE(m_overflowIteration, 2);
        for (dltest::Landing& l : dltest::executionOrder(m_source, false))
            (iterationOf(l.rel) >= m_overflowIteration ? m_round2 : m_round1).push_back(std::move(l));
        QVERIFY(!m_round1.empty() && !m_round2.empty());
    }

    void tableAndVerdictGrowAsFilesLand() {
        const fs::path dir = fs::path(m_tmp.path().toStdString()) / "job" / "dump";  // made later by the "job"
        MainWindow w;
        w.show();
        w.watchFolder(QString::fromStdString(dir.string()));
        QVERIFY(w.isWatching());
        QVERIFY2(w.watchPage()->stateText().contains(QStringLiteral("Waiting for the folder to appear")),
                 qPrintable(w.watchPage()->stateText()));
        QVERIFY2(w.watchStatus()->fullText().contains(QStringLiteral("waiting for the folder to appear")),
                 qPrintable(w.watchStatus()->fullText()));
        QVERIFY(!w.session()->index());

        dltest::ChunkedWriter writer;
        writer.landAll(dir, m_round1, std::chrono::milliseconds(0));
        const Finished one = analyzeFolder(dir);
        QVERIFY(one.firstOverflow.is_null());  // the clean iterations only
        OpTableModel* table = w.opTable()->model();
        QTRY_VERIFY_WITH_TIMEOUT(
            w.session()->index() && w.session()->index()->tensors.size() == one.tensors && w.session()->analysis(),
            30000);
        QVERIFY(w.session()->dump()->live);
        QCOMPARE(std::size_t(table->rowCount()), one.tensors);
        QVERIFY2(w.banner()->text().contains(QStringLiteral("Clean so far")), qPrintable(w.banner()->text()));
        QCOMPARE(w.notifier()->sent(), 0);
        QTRY_VERIFY_WITH_TIMEOUT(
            w.watchStatus()->fullText().contains(QStringLiteral("all %L1 files indexed").arg(m_round1.size())), 30000);
        QVERIFY2(w.watchStatus()->fullText().contains(QStringLiteral("last file landed")),
                 qPrintable(w.watchStatus()->fullText()));

        writer.landAll(dir, m_round2, std::chrono::milliseconds(0));
        const Finished all = analyzeFolder(dir);
        QVERIFY(all.tensors > one.tensors);
        QVERIFY(all.firstOverflow.is_object());
        const QString wantOp = QString::fromStdString(all.firstOverflow["op_name"].get<std::string>());
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->index() && w.session()->index()->tensors.size() == all.tensors &&
                                     w.session()->analysis() && w.session()->analysis()->firstOverflow,
                                 30000);
        QCOMPARE(std::size_t(table->rowCount()), all.tensors);
        const dl::DumpIndex& ix = *w.session()->index();
        const dl::OverflowPoint& p = *w.session()->analysis()->firstOverflow;
        QCOMPARE(QString::fromStdString(ix.strings.str(ix.ops[p.op].name)), wantOp);
        QCOMPARE(p.rank, all.firstOverflow["rank"].get<std::uint32_t>());
        QCOMPARE(p.iteration, all.firstOverflow["iteration"].get<std::uint32_t>());
        QVERIFY2(w.banner()->text().contains(QStringLiteral("First overflow so far")), qPrintable(w.banner()->text()));
        QVERIFY2(w.banner()->text().contains(wantOp.section(QLatin1Char('/'), -1).toHtmlEscaped()),
                 qPrintable(w.banner()->text() + QStringLiteral(" / ") + wantOp));
        // Followed: the origin is selected, as an Open selects it.
        QCOMPARE(w.session()->currentOp(), p.op);
        // Notified once, by what this desktop has (no bus, no tray offscreen: the window alone).
        QTRY_COMPARE_WITH_TIMEOUT(w.notifier()->sent(), 1, 30000);
        QCOMPARE(w.notifier()->lastChannel(), DesktopNotifier::Channel::WindowOnly);

        // Stop watching: the same verdict, from the full analysis (not live any more).
        w.stopWatching();
        QTRY_VERIFY_WITH_TIMEOUT(!w.isWatching() && w.session()->dump() && !w.session()->dump()->live, 30000);
        const dl::DumpIndex& fin = *w.session()->index();
        QVERIFY(w.session()->analysis()->firstOverflow);
        QCOMPARE(QString::fromStdString(fin.strings.str(fin.ops[w.session()->analysis()->firstOverflow->op].name)),
                 wantOp);
        QVERIFY2(w.banner()->text().startsWith(QStringLiteral("<b>First overflow</b>")),
                 qPrintable(w.banner()->text()));
        QVERIFY2(w.watchStatus()->fullText().startsWith(QStringLiteral("Stopped watching")),
                 qPrintable(w.watchStatus()->fullText()));
        QCOMPARE(w.notifier()->sent(), 1);
        // Nothing was written into the watched folder: exactly the files that landed.
        std::size_t files = 0;
        for (const auto& e : fs::recursive_directory_iterator(dir)) files += e.is_regular_file();
        QCOMPARE(files, m_round1.size() + m_round2.size());
    }

    // Closing the window mid-watch (the folder still missing, the watcher polling for it) ends
    // the watch: the window goes, the watch thread returns (a hang would hit the test's timeout).
    void closingTheWindowStopsTheWatch() {
        auto* w = new MainWindow;
        w->show();
        w->watchFolder(m_tmp.filePath(QStringLiteral("never/made")));
        QVERIFY(w->isWatching());
        QVERIFY(w->close());
        QVERIFY(!w->isWatching());
        delete w;
        waitForBackgroundJobs();
        QVERIFY(!QFileInfo::exists(m_tmp.filePath(QStringLiteral("never"))));
    }

    // A path that is a file cannot be watched: said, not crashed on, and the watch ends.
    void aFileIsNotAFolder() {
        const QString file = m_tmp.filePath(QStringLiteral("plain.txt"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("not a dump\n");
        f.close();
        MainWindow w;
        w.show();
        w.watchFolder(file);
        QTRY_VERIFY_WITH_TIMEOUT(!w.isWatching(), 30000);
        QVERIFY2(w.watchPage()->stateText().contains(QStringLiteral("Cannot watch")),
                 qPrintable(w.watchPage()->stateText()));
        QVERIFY2(w.summaryText().contains(file), qPrintable(w.summaryText()));
    }

private:
    QTemporaryDir m_tmp;
    fs::path m_source;
    int m_overflowIteration = -1;
    std::vector<dltest::Landing> m_round1, m_round2;
};

QTEST_MAIN(TstMainWindowWatch)
#include "test_main_window_watch.moc"

// Opens every bundled demo variant, the sample dumps of the tests, an empty folder and a folder
// of junk in one main window (as a user opening dump after dump would), offscreen, under a
// watchdog thread that fails the test when the GUI thread stops answering for more than a second.
// Checks the verdict banner of each against what the dump holds.
#include <QDir>
#include <QFile>
#include <QImage>
#include <QRegularExpression>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "core/demo/demo_dumps.h"
#include "tests/core/shared_demo.h"
#include "tests/ui/isolated_app_state.h"
#include "ui/main_window.h"
#include "ui/models/dump_session.h"
#include "ui/models/op_table_model.h"
#include "ui/views/chain_view.h"
#include "ui/views/log2_histogram_plot.h"
#include "ui/views/op_table_panel.h"
#include "ui/views/tensor_panel.h"
#include "ui/views/timeline/timeline_panel.h"
#include "ui/views/timeline/timeline_toolbar.h"
#include "ui/views/timeline/timeline_widget.h"
#include "ui/views/verdict_banner.h"

using namespace dlui;

namespace {

using Clock = std::chrono::steady_clock;

// A QTimer on the GUI thread stamps a heartbeat every 50 ms; a std::thread checks it. A beat
// older than the limit marks the current case as stalled (the test fails when the GUI thread
// comes back); one older than 20 limits means a freeze for good: report and abort, since the GUI
// thread will never return to fail the test itself.
class GuiWatchdog {
public:
    explicit GuiWatchdog(std::chrono::milliseconds limit) : m_limit(limit) {
        beat();
        QObject::connect(&m_timer, &QTimer::timeout, [this] { beat(); });
        m_timer.start(50);
        m_thread = std::thread([this] { watch(); });
    }
    ~GuiWatchdog() {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        m_thread.join();
    }
    void setCase(const std::string& name) {
        beat();
        std::lock_guard lock(m_mutex);
        m_case = name;
        m_stall.clear();
    }
    // Empty when the GUI thread answered in time throughout the current case.
    std::string stall() {
        std::lock_guard lock(m_mutex);
        return m_stall;
    }

private:
    void beat() { m_beat.store(Clock::now().time_since_epoch().count()); }
    void watch() {
        std::unique_lock lock(m_mutex);
        while (!m_wake.wait_for(lock, std::chrono::milliseconds(50), [this] { return m_stop; })) {
            const auto age = Clock::now() - Clock::time_point(Clock::duration(m_beat.load()));
            const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(age).count();
            if (age > m_limit && m_stall.empty())
                m_stall = m_case + ": the GUI thread did not answer for " + std::to_string(ms) + " ms";
            if (age > 20 * m_limit) {
                std::fprintf(stderr, "FAIL! watchdog: %s: the GUI thread is frozen (no answer for %lld ms)\n",
                             m_case.c_str(), static_cast<long long>(ms));
                std::fflush(stderr);
                std::abort();
            }
        }
    }

    std::chrono::milliseconds m_limit;
    QTimer m_timer;
    std::atomic<Clock::rep> m_beat{0};
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stop = false;
    std::string m_case, m_stall;
    std::thread m_thread;
};

enum class Expect { Overflow, Clean, FromAnalysis, NotClean };

}  // namespace

class TstOpenEveryDump : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        isolateAppState(m_tmp.path(), QStringLiteral("dumplens-open-every-dump"));
        // Demo variants, written once per ctest run (tests/core/shared_demo.h); whether each
        // overflows comes from the writer's own account.
        for (const auto& [name, options] : dl::demo::demoVariants()) {
            dl::demo::DemoVariantInfo info;
            QString root;
            try {
                root = QString::fromStdString(dltest::sharedDemoVariant(options, info));
            } catch (const std::exception& e) {
                QFAIL(e.what());
            }
            m_variants.push_back({name, root, info.firstOverflowIteration >= 0 ? Expect::Overflow : Expect::Clean});
        }
        QVERIFY(m_variants.size() >= 5);
        // Sample dumps of other tools the tests hold: verdict as their analysis says.
        for (const char* rel :
             {"msprobe", "mindspore-tests/gpu_dumps/sync_trans_false", "mindspore-tests/gpu_dumps/sync_trans_true",
              "mindinsight/Ascend_async", "mindinsight/Ascend_sync", "mindspore-docs/sample_code_dump"}) {
            const QString p = QStringLiteral(DUMPLENS_SAMPLES_DIR "/") + QLatin1String(rel);
            QVERIFY2(QFileInfo(p).isDir(), qPrintable(p));
            m_variants.push_back({std::string("sample ") + rel, p, Expect::FromAnalysis});
        }
        // Dumps written by MindSpore itself (tests/data/real/mindspore, three versions): the
        // verdict is the one NumPy finds over the same files (its expected.json).
        for (const char* version : {"2.0.0", "2.7.0", "2.10.0"})
            for (const auto& [net, expect] :
                 {std::pair{"forward_mul", Expect::Overflow}, std::pair{"train_sqrtgrad", Expect::Overflow},
                  std::pair{"train_fixed", Expect::Clean}, std::pair{"multigraph", Expect::Clean}}) {
                const QString p = QStringLiteral(DUMPLENS_TEST_DATA_DIR "/real/mindspore/") + QLatin1String(version) +
                    QLatin1Char('/') + QLatin1String(net);
                QVERIFY2(QFileInfo(p).isDir(), qPrintable(p));
                m_variants.push_back({std::string("MindSpore ") + version + " " + net, p, expect});
            }
        // Dumps written by msprobe's wheels (tests/data/real/msprobe): every generation and mode.
        const QDir msprobeDumps(QStringLiteral(DUMPLENS_TEST_DATA_DIR "/real/msprobe/dumps"));
        for (const QString& version : msprobeDumps.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
            for (const QString& mode :
                 QDir(msprobeDumps.filePath(version)).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
                const QDir modeDir(msprobeDumps.filePath(version + QLatin1Char('/') + mode));
                for (const QString& variant : modeDir.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
                    m_variants.push_back({("msprobe " + version + " " + mode + " " + variant).toStdString(),
                                          modeDir.filePath(variant), Expect::FromAnalysis});
            }
        // An msprobe statistics-only dump whose linear overflows: no data and no kernel to replay
        // it, so the chain dock says why and recommends by rule of thumb.
        const QString stats = m_tmp.path() + QStringLiteral("/msprobe_stats");
        QVERIFY(QDir().mkpath(stats + QStringLiteral("/step0/rank0")));
        QFile json(stats + QStringLiteral("/step0/rank0/dump.json"));
        QVERIFY(json.open(QIODevice::WriteOnly));
        json.write(R"({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {
            "Functional.linear.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2, 2],
            "Max": 900.0, "Min": -1.0, "Mean": 1.0, "Norm": 2.0, "requires_grad": false}], "input_kwargs": {},
            "output": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2, 2], "Max": "Infinity", "Min": -1.0,
            "Mean": "Infinity", "Norm": "Infinity", "requires_grad": false}]}}})");
        json.close();
        m_variants.push_back({"msprobe statistics only", stats, Expect::Overflow});
        // An empty folder and a folder of junk: nothing readable, so never "Clean".
        const QString empty = m_tmp.path() + QStringLiteral("/empty");
        QVERIFY(QDir().mkpath(empty));
        m_variants.push_back({"empty folder", empty, Expect::NotClean});
        const QString junk = m_tmp.path() + QStringLiteral("/junk");
        QVERIFY(QDir().mkpath(junk + QStringLiteral("/rank_0")));
        const auto write = [&](const QString& name, const QByteArray& bytes) {
            QFile f(junk + QLatin1Char('/') + name);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(bytes);
        };
        QByteArray noise(4096, '\0');
        for (int i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 2654435761u) >> 13);
        write(QStringLiteral("notes.txt"), "not a dump\n");
        write(QStringLiteral("rank_0/Add.Add-op1.0.0.1700000000000000.output.0.npy"), noise);
        write(QStringLiteral("rank_0/MatMul.MatMul-op2.0.0.1700000000000001.input.0.npy"), "\x93NUMPY\x01\x00garbage");
        write(QStringLiteral("rank_0/statistic.csv"), noise.left(300));
        write(QStringLiteral("acl_dump.json"), "{ not json");
        write(QStringLiteral("dump.json"), "[1, 2");
        m_variants.push_back({"junk folder", junk, Expect::NotClean});
    }

    void opensEveryDumpWithoutFreezing() {
        MainWindow w;
        w.resize(1366, 768);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        GuiWatchdog dog(std::chrono::milliseconds(1000));
        QStringList nothingReadable;
        bool sawUnavailable = false, sawRuleOfThumb = false;
        for (const Case& c : m_variants) {
            dog.setCase(c.name);
            w.openFolder(c.path);
            // The load runs on a worker; the GUI thread keeps answering meanwhile. Done when this
            // dump is analysed, or refused with a reason naming it.
            const auto done = [&] {
                if (w.isBusy()) return false;
                const auto d = w.session()->dump();
                if (d && d->path == c.path && w.session()->analysis()) return true;
                const QString m = w.statusBar()->currentMessage();
                return m.startsWith(QStringLiteral("Could not open")) && m.contains(c.path);
            };
            QTRY_VERIFY2_WITH_TIMEOUT(done(), c.name.c_str(), 120000);
            QTRY_VERIFY2_WITH_TIMEOUT(!w.timelinePanel()->isBuilding(), c.name.c_str(), 60000);
            // Paint everything (the ruler froze here on epoch timestamps), zoomed out and all the way in.
            TimelineWidget* tw = w.timelinePanel()->timelineWidget();
            QImage img(tw->size(), QImage::Format_ARGB32);
            tw->render(&img);
            for (int i = 0; i < 60; ++i) tw->zoomBy(0.5);
            tw->render(&img);
            tw->fitAll();
            (void)w.grab();
            QTest::qWait(20);
            QVERIFY2(dog.stall().empty(), dog.stall().c_str());

            const bool opened = w.session()->dump() && w.session()->dump()->path == c.path;
            const QString banner = w.banner()->text();
            const QString msg = QString::fromStdString(c.name) + QStringLiteral(": ") + banner + QStringLiteral(" | ") +
                w.statusBar()->currentMessage();
            const bool saysOverflow = banner.contains(QStringLiteral("First overflow"));
            const bool saysClean = banner.contains(QStringLiteral("<b>Clean</b>"));
            switch (c.expect) {
                case Expect::Overflow:
                    QVERIFY2(opened && w.session()->analysis(), qPrintable(msg));
                    QVERIFY2(saysOverflow && !saysClean, qPrintable(msg));
                    // Every dump opened, not only the first, lands on its origin.
                    QVERIFY2(w.session()->currentOp() == w.session()->analysis()->firstOverflow->op, qPrintable(msg));
                    break;
                case Expect::Clean:
                    QVERIFY2(opened && w.session()->analysis(), qPrintable(msg));
                    QVERIFY2(saysClean && !saysOverflow, qPrintable(msg));
                    break;
                case Expect::FromAnalysis: {
                    // A sample either opens with the verdict its analysis holds, or is refused with
                    // a reason in the status bar.
                    if (!opened) {
                        QVERIFY2(w.statusBar()->currentMessage().contains(QStringLiteral("Could not open")),
                                 qPrintable(msg));
                        break;
                    }
                    const dl::AnalysisResult* a = w.session()->analysis();
                    QVERIFY2(a, qPrintable(msg));
                    QVERIFY2(saysOverflow == a->firstOverflow.has_value(), qPrintable(msg));
                    break;
                }
                case Expect::NotClean:
                    // Refused with a reason, or opened with the neutral "Nothing readable" banner
                    // (never "Clean"). Checked after the loop, so every later case still runs.
                    if (opened ? saysClean || !banner.contains(QStringLiteral("<b>Nothing readable</b>")) ||
                                (w.session()->analysis() && !w.session()->analysis()->noData)
                               : !w.statusBar()->currentMessage().contains(QStringLiteral("Could not open")))
                        nothingReadable << msg;
                    break;
            }
            // Captions say a thing once: no empty header field ("float16 · · stats only"), no
            // "not available: replay unavailable: ...", no "(rule of thumb): rule of thumb, ...".
            if (opened) {
                const QString header = w.tensorPanel()->headerText();
                QVERIFY2(!header.contains(QStringLiteral("· ·")), qPrintable(msg + QStringLiteral("\n") + header));
                const QString replay = w.chainView()->replayTitleText(), rec = w.chainView()->recommendationText();
                QVERIFY2(replay.count(QStringLiteral("available"), Qt::CaseInsensitive) <= 1,
                         qPrintable(msg + QStringLiteral("\n") + replay));
                QVERIFY2(rec.count(QStringLiteral("rule of thumb"), Qt::CaseInsensitive) <= 1,
                         qPrintable(msg + QStringLiteral("\n") + rec));
                // One of a thing is singular ("1 op", "1 tensor": the junk folder has one op).
                const QRegularExpression onePlural(QStringLiteral("(^|[^0-9.,])1 (ops|tensors) "));
                QVERIFY2(!w.timelinePanel()->toolbar()->info().contains(onePlural),
                         qPrintable(msg + w.timelinePanel()->toolbar()->info()));
                QVERIFY2(!banner.contains(onePlural), qPrintable(msg));
                // The chain dock shows steps for an overflow, and says why there are none otherwise.
                const QString noChain = w.chainView()->chainPlaceholder();
                const dl::AnalysisResult* a = w.session()->analysis();
                QVERIFY2((a && a->firstOverflow && !a->chain.empty()) == noChain.isEmpty(),
                         qPrintable(msg + QStringLiteral("\n") + noChain));
                if (a && a->noData)
                    QVERIFY2(noChain.contains(QStringLiteral("nothing in this dump could be read")), qPrintable(msg));
                sawUnavailable |= replay.contains(QStringLiteral("not available"));
                if (c.name == "msprobe statistics only") {
                    checkLowerBoundCounts(w);
                    if (QTest::currentTestFailed()) return;
                }
                sawRuleOfThumb |= rec.contains(QStringLiteral("rule of thumb"));
            }
        }
        QVERIFY(sawUnavailable && sawRuleOfThumb);  // the cases above hold both
        QVERIFY2(nothingReadable.isEmpty(), qPrintable(nothingReadable.join(QStringLiteral("\n"))));
    }

private:
    // The msprobe statistics dump says only Max "Infinity" for the linear's output: at least one
    // +Inf, not exactly one. Every place the window shows its Inf count says "at least 1".
    static void checkLowerBoundCounts(MainWindow& w) {
        const dl::DumpIndex* ix = w.session()->index();
        QVERIFY(ix);
        const quint32 op = w.session()->currentOp();
        QVERIFY(op < ix->ops.size());
        quint32 out = UINT32_MAX;
        for (quint32 t = ix->ops[op].firstTensor; t < ix->ops[op].firstTensor + ix->ops[op].tensorCount; ++t)
            if (ix->tensors[t].io == dl::Io::Output) out = t;
        QVERIFY(out != UINT32_MAX);
        const dl::TensorStats st = ix->stats(ix->tensors[out]);
        QVERIFY(st.nonFiniteCountsAreLowerBounds());
        QCOMPARE(st.posInfCount, 1u);  // the bound the index keeps: the bar's height
        QCOMPARE(w.session()->currentTensor(), out);
        const QString header = w.tensorPanel()->headerText();
        QVERIFY2(header.contains(QStringLiteral("Inf at least 1")) && !header.contains(QStringLiteral("Inf 1 ")),
                 qPrintable(header));
        QCOMPARE(w.tensorPanel()->plot()->countLabels()[1], QStringLiteral("at least 1"));
        const OpTableModel* model = w.opTable()->model();
        QString cell;
        for (int row = 0; row < model->rowCount(); ++row)
            if (model->data(model->index(row, 0), OpTableModel::TensorRole).toUInt() == out)
                cell = model->data(model->index(row, int(dl::OpColumn::NanInf)), Qt::DisplayRole).toString();
        QVERIFY2(cell.endsWith(QStringLiteral("/ at least 1")), qPrintable(cell));
        const QString tip = w.timelinePanel()->timelineWidget()->tooltipFor(op);
        QVERIFY2(tip.contains(QStringLiteral("Inf at least 1")), qPrintable(tip));
    }

    struct Case {
        std::string name;
        QString path;
        Expect expect;
    };
    QTemporaryDir m_tmp;
    std::vector<Case> m_variants;
};

QTEST_MAIN(TstOpenEveryDump)
#include "test_open_every_dump.moc"

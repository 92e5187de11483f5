// The compare window on the demo's twin runs (fp16 overflow against the bf16 fix), opened the way
// a user does (demo, then File > Compare the demo with its bf16 fix): the first divergence is the
// NormHead SqrtGrad, the timelines are locked through matched ops, selections cross over, the
// thresholds re-judge the comparison, and the aligned table passes QAbstractItemModelTester.
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QColor>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFontMetrics>
#include <QImage>
#include <QLineEdit>
#include <QSettings>
#include <QStyle>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include "tests/core/shared_demo.h"
#include "tests/ui/isolated_app_state.h"
#include "tests/ui/rendered_pixels.h"

#include "ui/compare_window.h"
#include "ui/main_window.h"
#include "ui/models/compare_session.h"
#include "ui/models/compare_table_model.h"
#include "ui/models/dump_session.h"
#include "ui/models/unmatched_ops_model.h"
#include "ui/style/state_colors.h"
#include "ui/views/compare/compare_link_strip.h"
#include "ui/views/compare/compare_summary_bar.h"
#include "ui/views/compare/compare_table_panel.h"
#include "ui/views/compare/compare_tensor_panel.h"
#include "ui/views/compare/compare_timelines.h"
#include "ui/views/timeline/timeline_painter.h"
#include "ui/views/timeline/timeline_widget.h"

using namespace dlui;

class TstCompareWindow : public QObject {
    Q_OBJECT
private slots:
    // The two bundled variants are written once per ctest run (tests/core/shared_demo.h) and
    // linked into the app's demo folder, with the marker that tells the app they are complete.
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        isolateAppState(m_tmp.path(), QStringLiteral("dumplens-compare"));
        QVERIFY(QDir().mkpath(MainWindow::demoRoot()));
        for (const auto& [name, options] : dl::demo::demoVariants()) {
            if (name != "ms22_async_saturation" && name != "bf16_fix") continue;
            dl::demo::DemoVariantInfo info;
            QString shared;
            try {
                shared = QString::fromStdString(dltest::sharedDemoVariant(options, info, true));
            } catch (const std::exception& e) {
                QFAIL(e.what());
            }
            QVERIFY(QFile::link(shared, MainWindow::demoRoot() + QLatin1Char('/') + QString::fromStdString(name)));
        }
        // The windows are opened once, the way a user does (demo, then File > Compare the demo
        // with its bf16 fix): opening them is what costs. What a user sees right then is the
        // state every slot starts from (init() puts it back and checks it).
        m_main = std::make_unique<MainWindow>();
        m_main->resize(1400, 900);
        m_main->show();
        m_main->openDemo();
        QTRY_VERIFY_WITH_TIMEOUT(m_main->session()->analysis() != nullptr, 600000);
        QTRY_VERIFY_WITH_TIMEOUT(!m_main->isBusy(), 60000);
        m_main->compareWithDemoFix();
        m_cw = m_main->compareWindow();
        QVERIFY(m_cw);
        QTRY_VERIFY_WITH_TIMEOUT(m_cw->session()->isReady(), 600000);
        QTRY_VERIFY_WITH_TIMEOUT(!m_cw->isBusy(), 60000);
        m_cw->resize(1400, 900);
        QTRY_VERIFY_WITH_TIMEOUT(!m_cw->timelines()->isBuilding(), 60000);
        m_opening = snapshot();
        QVERIFY(m_opening.row >= 0);
    }

    void cleanupTestCase() {
        m_cw = nullptr;
        m_main.reset();
    }

    // Every slot starts from the opening state, whatever the slot before it changed: the
    // thresholds, filters, sort, colours, lock, size, folded details, selection and time window.
    void init() {
        QSettings().setValue(QStringLiteral("compare/summaryDetails"), false);
        CompareSummaryBar* bar = m_cw->summary();
        bar->setDetailsShown(false);
        m_cw->resize(1400, 900);
        CompareTimelines* t = m_cw->timelines();
        t->lockCheck()->setChecked(true);
        t->colourChoice()->setCurrentIndex(0);
        m_cw->table()->classFilter()->setCurrentIndex(0);
        m_cw->table()->divergedOnly()->setChecked(false);
        m_cw->table()->model()->sort(-1, Qt::AscendingOrder);
        if (bar->thresholdEdit()->text() != m_opening.thresholds) {
            bar->thresholdEdit()->setText(m_opening.thresholds);
            bar->applyThresholds();
        }
        QTRY_VERIFY_WITH_TIMEOUT(!m_cw->isBusy(), 60000);
        m_cw->session()->selectFirstDivergence();
        QTRY_VERIFY_WITH_TIMEOUT(!t->isBuilding(), 60000);
        t->timelineA()->setWindow(m_opening.windowA.first, m_opening.windowA.second);
        t->timelineB()->setWindow(m_opening.windowB.first, m_opening.windowB.second);
        const Snapshot now = snapshot();
        QCOMPARE(now.row, m_opening.row);
        QCOMPARE(now.diverged, m_opening.diverged);
        QCOMPARE(now.summary, m_opening.summary);
        QCOMPARE(now.rows, m_opening.rows);
        QCOMPARE(now.windowA, m_opening.windowA);
        QCOMPARE(now.windowB, m_opening.windowB);
    }

    void firstDivergenceIsTheNormHeadSqrtGrad() {
        CompareSession* s = m_cw->session();
        const dl::RunComparison* c = s->comparison();
        QVERIFY(c && c->firstDivergence >= 0);
        const dl::DumpIndex& a = *s->indexA();
        const dl::OpRecord& op = a.ops[a.tensors[c->alignment.tensors[std::size_t(c->firstDivergence)].a].op];
        const QString type = QString::fromStdString(a.strings.str(op.type));
        QVERIFY2(type == QLatin1String("SqrtGrad") || type == QLatin1String("Cast"), qPrintable(type));
        QVERIFY(QString::fromStdString(a.strings.str(op.scope)).contains(QStringLiteral("NormHead")));
        // The window opened on it: summary, selection, table row, tensor panel with both histograms.
        QVERIFY2(m_cw->summary()->text().contains(QStringLiteral("First divergence")),
                 qPrintable(m_cw->summary()->text()));
        QVERIFY(m_cw->summary()->text().contains(type));
        QCOMPARE(s->currentRow(), c->firstDivergence);
        QCOMPARE(m_cw->timelines()->timelineA()->selectedOp(), s->currentOpA());
        QCOMPARE(m_cw->timelines()->timelineB()->selectedOp(), s->currentOpB());
        CompareTableModel* model = m_cw->table()->model();
        const QModelIndex cur = m_cw->table()->view()->currentIndex();
        QVERIFY(cur.isValid());
        QCOMPARE(model->comparisonRowAt(cur.row()), c->firstDivergence);
        QCOMPARE(m_cw->tensorPanel()->plottedSeries(), 2);
        QVERIFY(m_cw->tensorPanel()->headerText().contains(QStringLiteral("First divergence")));
        // The first divergence's colour is on screen in both timelines, and links are drawn.
        for (TimelineWidget* tw : {m_cw->timelines()->timelineA(), m_cw->timelines()->timelineB()}) {
            QVERIFY2(renderedPixels(tw, compareColor(dl::CompareState::FirstDivergence)) > 0,
                     "the first divergence is not drawn");
        }
        QImage strip(m_cw->timelines()->links()->size(), QImage::Format_ARGB32);
        m_cw->timelines()->links()->render(&strip);
        QVERIFY(m_cw->timelines()->links()->lastDrawn() > 0);
    }

    void verdictClassesStoryCountsAndFilter() {
        CompareSession* s = m_cw->session();
        const dl::RunComparison* c = s->comparison();
        QVERIFY(c);
        // The core's own comparison of the same two indexes, made here: what the window must show.
        dl::CompareOptions opt;
        opt.thresholds = c->thresholds;
        const dl::RunComparison core = dl::compareRuns(*s->indexA(), *s->indexB(), opt);
        QVERIFY(core.firstDivergence >= 0 && core.firstDifference >= 0);
        QCOMPARE(core.rows[std::size_t(core.firstDivergence)].verdict, dl::Verdict::NonFinite);  // the fp16 overflow
        QCOMPARE(core.rows[std::size_t(core.firstDifference)].verdict, dl::Verdict::Precision);  // bf16 rounding first
        // The story at the top, as the core tells it.
        QCOMPARE(m_cw->summary()->story(), QString::fromStdString(core.story));
        QVERIFY2(m_cw->summary()->story().contains(QStringLiteral("agree to bfloat16 precision until iteration")),
                 qPrintable(m_cw->summary()->story()));
        QVERIFY(m_cw->summary()->story().contains(QStringLiteral("run A overflows at SqrtGrad")));
        // Counts per class in the summary bar.
        QStringList expected;
        for (int v = 0; v < dl::kVerdictCount; ++v)
            if (core.counts[std::size_t(v)])
                expected << QStringLiteral("%1 %L2")
                                .arg(QString::fromLatin1(dl::verdictName(dl::Verdict(v))))
                                .arg(core.counts[std::size_t(v)]);
        QCOMPARE(m_cw->summary()->classCounts(), expected.join(QStringLiteral(" · ")));
        QVERIFY(m_cw->summary()->text().contains(QStringLiteral("[nonfinite]")));
        // The table's Class column, with the class's colour as swatch, on the first divergence row.
        CompareTableModel* model = m_cw->table()->model();
        const int first = model->viewRowOf(core.firstDivergence);
        QVERIFY(first >= 0);
        QCOMPARE(model->index(first, CompareTableModel::Class).data().toString(), QStringLiteral("nonfinite"));
        QCOMPARE(model->index(first, CompareTableModel::Class).data(Qt::DecorationRole).value<QColor>(),
                 verdictColor(dl::Verdict::NonFinite));
        // Run A's tensor there holds +Inf: its Max reads inf (the finite max alone would hide it),
        // run B's stays the finite figure of its own stats.
        const dl::TensorPair& pair = core.alignment.tensors[std::size_t(core.firstDivergence)];
        const dl::TensorStats sa = s->indexA()->stats(s->indexA()->tensors[pair.a]);
        const dl::TensorStats sb = s->indexB()->stats(s->indexB()->tensors[pair.b]);
        QVERIFY(sa.posInfCount > 0 && sb.infCount() == 0 && sb.nanCount == 0);
        QCOMPARE(model->index(first, CompareTableModel::MaxA).data().toString(), QStringLiteral("inf"));
        QCOMPARE(model->index(first, CompareTableModel::MaxB).data().toString(), QString::number(sb.max, 'g', 6));
        // The class filter shows exactly the rows of one class, for each class.
        QComboBox* filter = m_cw->table()->classFilter();
        QCOMPARE(filter->count(), 1 + dl::kVerdictCount);
        for (int i = 1; i < filter->count(); ++i) {
            filter->setCurrentIndex(i);
            const auto v = dl::Verdict(filter->itemData(i).toInt());
            QCOMPARE(std::size_t(model->rowCount()), core.counts[std::size_t(v)]);
            for (int r = 0; r < model->rowCount(); ++r)
                QCOMPARE(model->index(r, CompareTableModel::Class).data().toString(),
                         QString::fromLatin1(dl::verdictName(v)));
        }
        filter->setCurrentIndex(0);
        QCOMPARE(std::size_t(model->rowCount()), core.rows.size());
        // Class colours differ from one another and stand off both a light and a dark base.
        for (int v = 0; v < dl::kVerdictCount; ++v)
            for (int w = v + 1; w < dl::kVerdictCount; ++w)
                QVERIFY(verdictColor(dl::Verdict(v)) != verdictColor(dl::Verdict(w)));
        for (int v = 0; v < dl::kVerdictCount; ++v) {
            const double l = verdictColor(dl::Verdict(v)).lightnessF();
            QVERIFY2(l > 0.3 && l < 0.75, qPrintable(QString::fromLatin1(dl::verdictName(dl::Verdict(v)))));
        }
    }

    void zoomAndPanAreLocked() {
        TimelineWidget* ta = m_cw->timelines()->timelineA();
        TimelineWidget* tb = m_cw->timelines()->timelineB();
        const dl::TimeMap& map = m_cw->timelines()->timeMap();
        ta->setFocus();
        QTest::keyClick(ta, Qt::Key_W);
        QTest::keyClick(ta, Qt::Key_W);
        QTest::keyClick(ta, Qt::Key_D);
        // Windows are relative to each timeline's origin; the map works on absolute times.
        const double oa = double(ta->viewport().origin()), ob = double(tb->viewport().origin());
        QCOMPARE(
            tb->viewport().from(),
            std::clamp(map.toB(ta->viewport().from() + oa) - ob, tb->viewport().fullFrom(), tb->viewport().fullTo()));
        QVERIFY(tb->viewport().span() < tb->viewport().fullTo() - tb->viewport().fullFrom());
        // And from B back to A.
        tb->setFocus();
        QTest::keyClick(tb, Qt::Key_A);
        QVERIFY(std::abs(ta->viewport().from() - (map.toA(tb->viewport().from() + ob) - oa)) <=
                1e-6 * ta->viewport().span() + 1);
        // Unlocked, B stays where it is.
        m_cw->timelines()->lockCheck()->setChecked(false);
        const double bFrom = tb->viewport().from(), bTo = tb->viewport().to();
        ta->setFocus();
        QTest::keyClick(ta, Qt::Key_S);
        QCOMPARE(tb->viewport().from(), bFrom);
        QCOMPARE(tb->viewport().to(), bTo);
    }

    void selectingAnOpInBSelectsItsPartnerInA() {
        CompareSession* s = m_cw->session();
        const dl::CompareOverlay* ov = s->overlay();
        // A matched op of B, and one that exists only in B (a Cast of the fix).
        const dl::RunComparison* c = s->comparison();
        const dl::OpPair pair = c->alignment.ops[c->alignment.ops.size() / 2];
        s->selectOpB(pair.b);
        QCOMPARE(s->currentOpA(), pair.a);
        QTRY_VERIFY_WITH_TIMEOUT(!m_cw->timelines()->isBuilding(), 60000);  // may switch iteration
        QCOMPARE(m_cw->timelines()->timelineA()->selectedOp(), pair.a);
        QCOMPARE(m_cw->timelines()->timelineB()->selectedOp(), pair.b);
        QVERIFY(!c->alignment.onlyOpsB.empty());
        const std::uint32_t onlyB = c->alignment.onlyOpsB.front();
        QCOMPARE(ov->stateB(onlyB), dl::CompareState::Unmatched);
        s->selectOpB(onlyB);
        QCOMPARE(s->currentOpA(), dl::kNoIndex);
        QCOMPARE(s->currentRow(), qint64(-1));
        QVERIFY2(m_cw->tensorPanel()->headerText().contains(QStringLiteral("only in run B")),
                 qPrintable(m_cw->tensorPanel()->headerText()));
    }

    void thresholdsRejudgeTheComparison() {
        CompareSession* s = m_cw->session();
        const std::size_t diverged = s->comparison()->diverged;
        QLineEdit* edit = m_cw->summary()->thresholdEdit();
        QCOMPARE(edit->text(), QString::fromStdString(dl::thresholdSpec(s->comparison()->thresholds)));
        // A bad spec is reported and changes nothing; the folded details open to show where.
        m_cw->summary()->setDetailsShown(false);
        edit->setText(QStringLiteral("cosine=abc"));
        m_cw->summary()->applyThresholds();
        QCOMPARE(s->comparison()->diverged, diverged);
        QVERIFY(m_cw->summary()->detailsShown());
        QVERIFY(edit->isVisibleTo(m_cw->summary()));
        // Every test off: nothing diverges.
        edit->setText(QStringLiteral("ulps=off,cosine=off,max_abs=off,stats_rel=off,nan_inf=off"));
        m_cw->summary()->applyThresholds();
        QCOMPARE(s->comparison()->diverged, std::size_t(0));
        QCOMPARE(s->comparison()->firstDivergence, std::int64_t(-1));
        QVERIFY(m_cw->summary()->text().contains(QStringLiteral("No divergence")));
        // Back to the defaults: the same divergence as before.
        edit->setText(QString::fromStdString(dl::thresholdSpec({})));
        m_cw->summary()->applyThresholds();
        QCOMPARE(s->comparison()->diverged, diverged);
        QCOMPARE(s->currentRow(), s->comparison()->firstDivergence);
        QTRY_VERIFY_WITH_TIMEOUT(!m_cw->timelines()->isBuilding(), 60000);
        QCOMPARE(m_cw->timelines()->timelineA()->selectedOp(), s->currentOpA());
    }

    // On a 1366x768 laptop the summary stays compact (its bookkeeping folded behind Details, the
    // default) so that each run's timeline shows several lanes, not one; Details unfolds it and
    // the choice is kept for the next window.
    void laptopScreenKeepsSeveralLanesPerTimeline() {
        CompareSummaryBar* bar = m_cw->summary();
        QVERIFY(!bar->detailsShown());
        QVERIFY(!bar->thresholdEdit()->isVisibleTo(bar));
        QVERIFY(bar->text().contains(QStringLiteral("First divergence")));  // the headline stays
        m_cw->resize(1366, 740);                                            // the screen less the title bar and a panel
        const auto lanesShown = [this](TimelineWidget* t) {
            return TimelinePainter::lanesRect(t->rect()).height() / TimelinePainter::kLaneHeight;
        };
        QTRY_VERIFY_WITH_TIMEOUT(m_cw->height() <= 740, 5000);
        QApplication::processEvents();
        const std::size_t lanes = m_cw->timelines()->timelineA()->timeline()->lanes.size();
        QVERIFY(lanes >= 3);
        for (TimelineWidget* t : {m_cw->timelines()->timelineA(), m_cw->timelines()->timelineB()})
            QVERIFY2(lanesShown(t) >= 3,
                     qPrintable(QStringLiteral("%1 lanes shown in %2 px, summary %3 px")
                                    .arg(lanesShown(t))
                                    .arg(t->height())
                                    .arg(bar->height())));
        const int compact = bar->height();
        auto* details = bar->findChild<QToolButton*>(QStringLiteral("compareDetails"));
        QVERIFY(details);
        details->click();
        QVERIFY(bar->detailsShown());
        QTRY_VERIFY_WITH_TIMEOUT(bar->height() > compact, 5000);
        QVERIFY(bar->thresholdEdit()->isVisibleTo(bar));
        QVERIFY(QSettings().value(QStringLiteral("compare/summaryDetails")).toBool());
        details->click();
        QVERIFY(!QSettings().value(QStringLiteral("compare/summaryDetails")).toBool());
    }

    void alignedTableFiltersSortsAndPassesTheModelTester() {
        CompareTableModel* model = m_cw->table()->model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const dl::RunComparison* c = m_cw->session()->comparison();
        QCOMPARE(std::size_t(model->rowCount()), c->rows.size());
        m_cw->table()->divergedOnly()->setChecked(true);
        QCOMPARE(std::size_t(model->rowCount()), c->diverged);
        for (int r = 0; r < model->rowCount(); ++r) QVERIFY(c->rows[std::size_t(model->comparisonRowAt(r))].diverged);
        // Worst cosine first: non-decreasing, N/A last.
        model->sort(CompareTableModel::Cosine, Qt::AscendingOrder);
        double prev = -2;
        bool seenNA = false;
        for (int r = 0; r < model->rowCount(); ++r) {
            const double v = c->rows[std::size_t(model->comparisonRowAt(r))].metrics.cosine;
            if (std::isnan(v)) {
                seenNA = true;
                continue;
            }
            QVERIFY(!seenNA);
            QVERIFY(v >= prev);
            prev = v;
        }
        QVERIFY(!model->data(model->index(0, CompareTableModel::Status), Qt::DisplayRole).toString().isEmpty());
    }

    // No figure of the aligned table is elided: every one fits its column whole (with the text
    // margins a cell draws), whatever its magnitude.
    void figuresFitTheirColumns() {
        QTableView* view = m_cw->table()->view();
        CompareTableModel* model = m_cw->table()->model();
        const QFontMetrics fm = view->fontMetrics();
        const int margin = 2 * (view->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, view) + 1);
        int checked = 0;
        for (int r = 0; r < model->rowCount(); ++r)
            for (int c = CompareTableModel::MaxA; c <= CompareTableModel::FiveThousandth; ++c) {
                const QString t = model->data(model->index(r, c), Qt::DisplayRole).toString();
                ++checked;
                QVERIFY2(fm.horizontalAdvance(t) + margin <= view->columnWidth(c),
                         qPrintable(QStringLiteral("row %1 column %2: '%3' is %4 px + %5 in %6 px")
                                        .arg(r)
                                        .arg(c)
                                        .arg(t)
                                        .arg(fm.horizontalAdvance(t))
                                        .arg(margin)
                                        .arg(view->columnWidth(c))));
            }
        QVERIFY(checked > 1000);
    }

    void unmatchedOpsAreListedAndSelectable() {
        QAbstractItemModel* model = m_cw->unmatchedView()->model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const dl::RunComparison* c = m_cw->session()->comparison();
        QCOMPARE(std::size_t(model->rowCount()), c->alignment.onlyOpsA.size() + c->alignment.onlyOpsB.size());
        QVERIFY(model->rowCount() > 0);
        const int last = model->rowCount() - 1;  // run B's rows come last: the fix's Casts
        QCOMPARE(model->index(last, UnmatchedOpsModel::Type).data().toString(), QStringLiteral("Cast"));
        m_cw->unmatchedView()->setCurrentIndex(model->index(last, 0));
        QCOMPARE(m_cw->session()->currentOpB(), c->alignment.onlyOpsB.back());
        QTRY_VERIFY_WITH_TIMEOUT(!m_cw->timelines()->isBuilding(), 60000);
        QCOMPARE(m_cw->timelines()->timelineB()->selectedOp(), c->alignment.onlyOpsB.back());
    }

    void coloursByEachRunsOverflowStateOnRequest() {
        // The fp16 run's first overflow shows in A; the bf16 fix has none in B.
        const auto originPixels = [](TimelineWidget* tw) {
            return renderedPixels(tw, stateColor(dl::OpState::Origin));
        };
        CompareTimelines* t = m_cw->timelines();
        const dl::AnalysisResult* a = m_cw->session()->analysisA();
        QVERIFY(a && a->firstOverflow);
        QVERIFY(!m_cw->session()->analysisB()->firstOverflow);
        m_cw->session()->selectOpA(a->firstOverflow->op);
        t->colourChoice()->setCurrentIndex(1);
        QTRY_VERIFY_WITH_TIMEOUT(!t->isBuilding(), 60000);
        QVERIFY(originPixels(t->timelineA()) > 0);
        QCOMPARE(originPixels(t->timelineB()), 0);
        t->colourChoice()->setCurrentIndex(0);
        QTRY_VERIFY_WITH_TIMEOUT(!t->isBuilding(), 60000);
        QCOMPARE(originPixels(t->timelineA()), 0);  // back to comparison colours
    }

    void exportsTheReportAndTheComparison() {
        QString error;
        const QString pdf = m_tmp.filePath(QStringLiteral("compare.pdf"));
        QVERIFY2(m_cw->writeReport(pdf, error), qPrintable(error));
        QFile f(pdf);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.read(5) == "%PDF-");
        const QString json = m_tmp.filePath(QStringLiteral("compare.json"));
        QVERIFY2(m_cw->writeComparison(json, true, error), qPrintable(error));
        QFile j(json);
        QVERIFY(j.open(QIODevice::ReadOnly));
        const QByteArray text = j.readAll();
        QVERIFY(text.contains("\"schema\":\"dumplens.compare/1\""));
        QVERIFY(text.contains("SqrtGrad"));
        const QString csv = m_tmp.filePath(QStringLiteral("compare.csv"));
        QVERIFY2(m_cw->writeComparison(csv, false, error), qPrintable(error));
        QVERIFY(!m_cw->writeComparison(m_tmp.filePath(QStringLiteral("no/such/dir/x.csv")), false, error));
        QVERIFY(!error.isEmpty());
    }

private:
    // What the window shows, compared before each slot with what it showed when opened.
    struct Snapshot {
        qint64 row = -1;
        std::size_t diverged = 0;
        QString summary, thresholds;
        int rows = 0;
        std::pair<double, double> windowA, windowB;
    };
    Snapshot snapshot() const {
        Snapshot n;
        n.row = m_cw->session()->currentRow();
        n.diverged = m_cw->session()->comparison()->diverged;
        n.summary = m_cw->summary()->text();
        n.thresholds = m_cw->summary()->thresholdEdit()->text();
        n.rows = m_cw->table()->model()->rowCount();
        const auto window = [](TimelineWidget* w) { return std::pair(w->viewport().from(), w->viewport().to()); };
        n.windowA = window(m_cw->timelines()->timelineA());
        n.windowB = window(m_cw->timelines()->timelineB());
        return n;
    }

    QTemporaryDir m_tmp;
    Snapshot m_opening;
    std::unique_ptr<MainWindow> m_main;
    CompareWindow* m_cw = nullptr;
};

QTEST_MAIN(TstCompareWindow)
#include "test_compare_window.moc"

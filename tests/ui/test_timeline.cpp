// The timeline on the bundled demo (opened once for the suite): slices and their names, times
// relative to the view, search next/previous, area summaries, folding stages, flows of a Send,
// the op context menu, Reset layout, and the dark palette's contrast.
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDockWidget>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <tuple>

#include "tests/ui/isolated_app_state.h"

#include "core/index/tensor_location.h"
#include "core/timeline/time_axis.h"
#include "ui/main_window.h"
#include "ui/models/dump_session.h"
#include "ui/models/op_table_model.h"
#include "ui/style/op_names.h"
#include "ui/style/theme.h"
#include "ui/views/op_context_menu.h"
#include "ui/views/op_table_panel.h"
#include "ui/views/timeline/timeline_panel.h"
#include "ui/views/timeline/timeline_toolbar.h"
#include "ui/views/timeline/timeline_widget.h"

using namespace dlui;

namespace {

QAction* actionNamed(QMenu& m, const char* name) {
    for (QAction* a : m.actions())
        if (a->objectName() == QLatin1String(name)) return a;
    return nullptr;
}

}  // namespace

class TstTimeline : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        isolateAppState(m_tmp.path(), QStringLiteral("dumplens-timeline"));
        m_w = new MainWindow;
        m_w->resize(1400, 900);
        m_w->show();
        m_w->openDemo();
        QTRY_VERIFY_WITH_TIMEOUT(m_w->session()->analysis() != nullptr, 600000);
        QTRY_VERIFY_WITH_TIMEOUT(!m_w->isBusy(), 60000);
        QTRY_VERIFY_WITH_TIMEOUT(!m_w->timelinePanel()->isBuilding() && m_w->timelinePanel()->timeline(), 60000);
        QTest::qWait(300);   // the first layout's deferred dock sizes
        m_tw = m_w->timelinePanel()->timelineWidget();
        m_ix = m_w->session()->index();
    }
    void cleanupTestCase() { delete m_w; }

    // At 1366x768 the info and the search status were clipped mid-word side by side and read as
    // one line ("1 op on dump timest0 matching ops on this timeline (Enter / F3: n"). Each now
    // ends in an ellipsis inside its own width and keeps its full text for info()/status().
    void infoAndStatusElideInsteadOfRunningTogether() {
        TimelineToolbar bar;
        const QString info = QStringLiteral("1 op on dump timestamps, durations inferred (no end times)");
        const QString status = QStringLiteral("0 matching ops on this timeline (Enter / F3: next, Shift: previous)");
        bar.setInfo(info);
        bar.setStatus(status);
        bar.resize(360, bar.sizeHint().height());
        bar.show();
        QVERIFY(QTest::qWaitForWindowExposed(&bar));
        QCOMPARE(bar.info(), info);
        QCOMPARE(bar.status(), status);
        for (const char* name : {"timelineInfo", "timelineStatus"}) {
            auto* l = bar.findChild<QLabel*>(QLatin1String(name));
            QVERIFY2(l, name);
            QTRY_VERIFY2(l->text().endsWith(QChar(0x2026)), qPrintable(l->text()));
            QVERIFY2(l->fontMetrics().horizontalAdvance(l->text()) <= l->contentsRect().width(), qPrintable(l->text()));
            QCOMPARE(l->toolTip(), QString::fromLatin1(name) == QLatin1String("timelineInfo") ? info : status);
        }
        bar.resize(1600, bar.sizeHint().height());   // room again: the whole text, no ellipsis
        QTRY_COMPARE(bar.findChild<QLabel*>(QStringLiteral("timelineInfo"))->text(), info);
        bar.close();
        m_w->activateWindow();   // the later tests send shortcuts to the main window
        QVERIFY(QTest::qWaitForWindowActive(m_w));
    }

    void slicesRunToTheNextOpOfTheLane() {
        const dl::TimelineData* d = m_tw->timeline();
        QVERIFY(d->base == dl::TimeBase::Timestamps);
        QVERIFY(d->anyInferredEnd);   // the demo writes start times only
        std::size_t sliced = 0;
        for (const auto& lane : d->lanes)
            for (std::size_t k = 0; k + 1 < lane.items.size(); ++k) {
                const auto& it = lane.items[k];
                const auto& next = lane.items[k + 1];
                QVERIFY(it.inferredEnd);
                if (m_ix->ops[it.op].iteration != m_ix->ops[next.op].iteration) continue;
                QVERIFY(it.end <= next.start);   // never over the next op
                if (!it.endCapped) QCOMPARE(it.end, next.start);
                sliced += it.end > it.start;
            }
        QVERIFY(sliced > 0);
    }

    void labelAtFullZoom() {
        // The longest slice of rank 3's lane, zoomed to fill the view: its short name is drawn in it.
        const dl::TimelineData* d = m_tw->timeline();
        const dl::TimelineItem* best = nullptr;
        for (const auto& lane : d->lanes)
            for (const auto& it : lane.items)
                if (!best || it.end - it.start > best->end - best->start) best = &it;
        QVERIFY(best && best->end > best->start);
        const double s = m_tw->relTime(best->start), e = m_tw->relTime(best->end);
        m_tw->setWindow(s - (e - s) * 0.1, e + (e - s) * 0.1);
        QImage img(m_tw->size(), QImage::Format_ARGB32);
        m_tw->render(&img);
        const QString name = opNames(*m_ix, m_ix->ops[best->op]).shortName;
        bool found = false;
        for (const SliceLabel& l : m_tw->painter().lastLabels())
            if (l.op == best->op) {
                found = true;
                QCOMPARE(l.text, name);   // wide enough: not elided
                QVERIFY(l.rect.width() > 100);
            }
        QVERIFY2(found, qPrintable(name));
    }

    void tooltipTimesAreRelative() {
        const dl::TimelineData* d = m_tw->timeline();
        const dl::TimelineItem& it = d->lanes.back().items[d->lanes.back().items.size() / 2];
        const QString tip = m_tw->tooltipFor(it.op);
        const QString rel = QString::fromStdString(dl::formatTimeOffset(double(it.start - m_tw->viewport().origin())));
        QVERIFY2(tip.contains(QStringLiteral("at ") + rel), qPrintable(tip));
        QVERIFY2(!tip.contains(QString::number(m_ix->ops[it.op].startUs)), qPrintable(tip));   // no epoch µs
        QVERIFY2(tip.contains(QStringLiteral("inferred")), qPrintable(tip));
        QVERIFY(tip.contains(QStringLiteral("duration")));
    }

    void searchNextAndPrevious() {
        OpTablePanel* table = m_w->opTable();
        table->setFilterText(QStringLiteral("Send"), false);
        const std::vector<quint32> matched = table->model()->matchingOps();
        QVERIFY(!matched.empty());
        // Expected order: the shown matches by start, then lane.
        const dl::TimelineData* d = m_tw->timeline();
        std::vector<std::tuple<std::int64_t, std::size_t, quint32>> order;
        for (quint32 op : matched) {
            std::size_t lane = 0, item = 0;
            if (d->locate(op, lane, item)) order.emplace_back(d->lanes[lane].items[item].start, lane, op);
        }
        std::sort(order.begin(), order.end());
        QVERIFY(order.size() >= 2);
        QCOMPARE(m_tw->matchOrder().size(), order.size());
        m_tw->fitAll();
        m_tw->selectOp(std::get<2>(order.front()));
        for (std::size_t k = 1; k < order.size(); ++k) {
            QVERIFY(m_tw->gotoMatch(false));
            QCOMPARE(m_tw->selectedOp(), std::get<2>(order[k]));
            QCOMPARE(m_w->session()->currentOp(), std::get<2>(order[k]));
            const double t = m_tw->relTime(std::get<0>(order[k]));
            QVERIFY(t >= m_tw->viewport().from() && t <= m_tw->viewport().to());
        }
        QVERIFY(m_tw->gotoMatch(false));   // wraps around
        QCOMPARE(m_tw->selectedOp(), std::get<2>(order.front()));
        QVERIFY(m_tw->gotoMatch(true));
        QCOMPARE(m_tw->selectedOp(), std::get<2>(order.back()));
        // Enter / Shift+Enter in the filter field do the same.
        QTest::keyClick(table->filterEdit(), Qt::Key_Return, Qt::ShiftModifier);
        QCOMPARE(m_tw->selectedOp(), std::get<2>(order[order.size() - 2]));
        QTest::keyClick(table->filterEdit(), Qt::Key_Return);
        QCOMPARE(m_tw->selectedOp(), std::get<2>(order.back()));
        table->setFilterText({}, false);
        QVERIFY(m_tw->matchOrder().empty());   // nothing filtered: nothing highlighted
    }

    void areaSummaryCounts() {
        const dl::TimelineData* d = m_tw->timeline();
        QVERIFY(d->lanes.size() >= 3);
        const double from = (m_tw->viewport().fullTo() - m_tw->viewport().fullFrom()) * 0.3;
        const double to = (m_tw->viewport().fullTo() - m_tw->viewport().fullFrom()) * 0.7;
        m_tw->selectArea(1, int(d->lanes.size()) - 1, from, to);
        // Counted here by brute force over the lanes, with the index's tensors and the session's states.
        std::size_t ops = 0, tensors = 0;
        std::array<std::size_t, dl::kOpStateCount> states{};
        for (std::size_t l = 1; l < d->lanes.size(); ++l)
            for (const auto& it : d->lanes[l].items) {
                const double s = m_tw->relTime(it.start), e = m_tw->relTime(it.end);
                if (e < from || s > to) continue;
                ++ops;
                tensors += m_ix->ops[it.op].tensorCount;
                ++states[std::size_t(m_w->session()->states()->op[it.op])];
            }
        const dl::TimelineAreaSummary sum = m_tw->areaSummary();
        QVERIFY(ops > 0);
        QCOMPARE(sum.ops, ops);
        QCOMPARE(sum.tensors, tensors);
        QVERIFY(sum.states == states);
        QVERIFY2(m_w->timelinePanel()->findChild<QWidget*>(QStringLiteral("timelineStatus")), "no status label");
        QVERIFY(m_tw->areaText().contains(QStringLiteral("%L1 ops").arg(ops)));
        // A drag on the ruler selects every lane.
        m_tw->clearArea();
        const QRect ruler = TimelinePainter::rulerRect(m_tw->rect());
        QTest::mousePress(m_tw, Qt::LeftButton, {}, QPoint(ruler.left() + 50, ruler.center().y()));
        QTest::mouseMove(m_tw, QPoint(ruler.left() + 200, ruler.center().y()));
        QTest::mouseRelease(m_tw, Qt::LeftButton, {}, QPoint(ruler.left() + 200, ruler.center().y()));
        QVERIFY(m_tw->hasArea());
        QCOMPARE(m_tw->paintState().areaLaneFrom, 0);
        QCOMPARE(m_tw->paintState().areaLaneTo, int(d->lanes.size()) - 1);
        QTest::keyClick(m_tw, Qt::Key_Escape);
        QVERIFY(!m_tw->hasArea());
    }

    void foldingAStageHidesItsLanes() {
        const dl::TimelineData* d = m_tw->timeline();
        const int stage = d->lanes.front().stage;
        std::size_t inStage = 0;
        for (const auto& l : d->lanes) inStage += l.stage == stage;
        const int before = m_tw->painter().contentHeight();
        const int laneY = m_tw->painter().laneCenterY(m_tw->rect(), 0, m_tw->paintState().scrollY);
        QCOMPARE(m_tw->painter().laneAt(m_tw->rect(), laneY, m_tw->paintState().scrollY), 0);
        // A click on the stage header (label column) folds it.
        const int headerY = TimelinePainter::lanesRect(m_tw->rect()).top() + TimelinePainter::kHeaderHeight / 2 - m_tw->paintState().scrollY;
        QTest::mouseClick(m_tw, Qt::LeftButton, {}, QPoint(20, headerY));
        QVERIFY(m_tw->painter().isStageCollapsed(stage));
        for (std::size_t i = 0; i < d->lanes.size(); ++i) QCOMPARE(m_tw->painter().laneShown(i), d->lanes[i].stage != stage);
        QCOMPARE(m_tw->painter().contentHeight(), before - int(inStage) * TimelinePainter::kLaneHeight);
        QVERIFY(m_tw->painter().laneAt(m_tw->rect(), laneY, m_tw->paintState().scrollY) != 0);
        m_tw->setStageCollapsed(stage, false);
        QCOMPARE(m_tw->painter().contentHeight(), before);
    }

    void flowsOfASendSelectItsReceive() {
        const dl::TimelineData* d = m_tw->timeline();
        quint32 send = dl::kNoIndex;
        for (const auto& lane : d->lanes)
            for (const auto& it : lane.items)
                if (send == dl::kNoIndex && m_ix->strings.str(m_ix->ops[it.op].type) == "Send" && !d->flowsFor(it.op).empty())
                    send = it.op;
        QVERIFY(send != dl::kNoIndex);
        const auto flows = d->flowsFor(send);
        QCOMPARE(flows.front().fromOp, send);
        const quint32 recv = flows.front().toOp;
        QCOMPARE(QString::fromStdString(m_ix->strings.str(m_ix->ops[recv].type)), QStringLiteral("Receive"));
        QVERIFY(m_ix->ops[recv].rank != m_ix->ops[send].rank);
        // The Receive's flow points back at the Send.
        const auto back = d->flowsFor(recv);
        QVERIFY(std::any_of(back.begin(), back.end(), [&](const dl::TimelineFlow& f) { return f.fromOp == send && f.toOp == recv; }));
        // "Go to its Receive" in the Send's menu selects it everywhere.
        m_w->session()->select(send);
        QMenu menu;
        m_tw->fillOpMenu(menu, send);
        QAction* go = nullptr;
        for (QAction* a : menu.actions())
            if (a->text().startsWith(QStringLiteral("Go to its Receive"))) go = a;
        QVERIFY(go);
        go->trigger();
        QCOMPARE(m_w->session()->currentOp(), recv);
        QCOMPARE(m_tw->selectedOp(), recv);
    }

    void contextMenuActions() {
        const quint32 op = m_w->session()->analysis()->firstOverflow->op;
        QMenu menu;
        m_tw->fillOpMenu(menu, op);
        for (const char* n : {opmenu::kCopyName, opmenu::kCopyFullName, opmenu::kCopyPath, opmenu::kOpenFolder, opmenu::kCompare,
                              opmenu::kExportPng, opmenu::kExportCsv})
            QVERIFY2(actionNamed(menu, n), n);
        QVERIFY(!actionNamed(menu, opmenu::kCompare)->isEnabled());   // no comparison open
        actionNamed(menu, opmenu::kCopyName)->trigger();
        QCOMPARE(QApplication::clipboard()->text(), opNames(*m_ix, m_ix->ops[op]).shortName);
        actionNamed(menu, opmenu::kCopyFullName)->trigger();
        QCOMPARE(QApplication::clipboard()->text(), opNames(*m_ix, m_ix->ops[op]).full);
        // The file of the op's first output, under the dump root.
        quint32 tensor = dl::kNoIndex;
        for (quint32 t = m_ix->ops[op].firstTensor; t < m_ix->ops[op].firstTensor + m_ix->ops[op].tensorCount; ++t)
            if (tensor == dl::kNoIndex && m_ix->tensors[t].io == dl::Io::Output) tensor = t;
        QVERIFY(tensor != dl::kNoIndex && m_ix->side(m_ix->tensors[tensor]).file);
        actionNamed(menu, opmenu::kCopyPath)->trigger();
        const QString expected = QString::fromStdString(m_ix->root + "/" + m_ix->strings.str(m_ix->side(m_ix->tensors[tensor]).file));
        QCOMPARE(QFileInfo(QApplication::clipboard()->text()).canonicalFilePath(), QFileInfo(expected).canonicalFilePath());
        QVERIFY(QFileInfo::exists(expected));
        QVERIFY(actionNamed(menu, opmenu::kOpenFolder)->isEnabled());
        // Histogram exports.
        QString error;
        const QString csv = m_tmp.filePath(QStringLiteral("h.csv")), png = m_tmp.filePath(QStringLiteral("h.png"));
        QVERIFY2(exportHistogramCsv(*m_ix, tensor, csv, error), qPrintable(error));
        QVERIFY2(exportHistogramPng(*m_ix, tensor, png, error), qPrintable(error));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        dl::Log2Histogram h;
        QVERIFY(m_ix->histogram(m_ix->tensors[tensor], h));
        std::uint64_t total = 0;
        for (int i = 1; i < lines.size(); ++i) total += lines[i].section(QLatin1Char(','), -1).toULongLong();
        std::uint64_t expectTotal = h.zero + h.nan + h.posInf + h.negInf;
        for (auto c : h.exp) expectTotal += c;
        QCOMPARE(total, expectTotal);
        QVERIFY(QImage(png).width() == 720);
        // The table's row menu: the same actions, plus Copy rows; Ctrl+C copies the selected rows.
        OpTablePanel* table = m_w->opTable();
        QMenu rowMenu;
        table->fillRowMenu(rowMenu, 0);
        QVERIFY(actionNamed(rowMenu, opmenu::kCopyPath) && actionNamed(rowMenu, "copyRows"));
        QTableView* view = table->view();
        view->setFocus();
        view->selectionModel()->clearSelection();
        view->selectRow(1);
        view->selectionModel()->select(table->model()->index(2, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
        QTest::keyClick(view, Qt::Key_C, Qt::ControlModifier);
        const QStringList rows = QApplication::clipboard()->text().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(rows.size(), 3);   // header and two rows
        QCOMPARE(rows[1].count(QLatin1Char('\t')), table->model()->columnCount() - 1);
    }

    void resetLayoutRestoresDocks() {
        QList<QDockWidget*> docks = m_w->findChildren<QDockWidget*>();
        QVERIFY(docks.size() >= 4);
        QMap<QString, QRect> before;
        for (QDockWidget* d : docks) before[d->objectName()] = d->isVisible() ? d->geometry() : QRect();
        docks[0]->setFloating(true);
        docks[0]->move(40, 40);
        for (QDockWidget* d : docks)
            if (d != docks[0] && d->objectName() == QLatin1String("dock.chain")) d->hide();
        QTest::qWait(50);
        m_w->resetLayoutAction()->trigger();
        for (QDockWidget* d : docks) {
            QTRY_VERIFY2(d->isVisible() == before[d->objectName()].isValid(), qPrintable(d->objectName()));
            QVERIFY(!d->isFloating());
            QTRY_COMPARE(d->geometry(), before[d->objectName()]);
        }
    }

    void darkPaletteContrast() {
        const QPalette dark = theme::darkPalette();
        QVERIFY(theme::isDark(dark));
        static_cast<QWidget*>(m_tw)->setPalette(dark);
        const theme::ViewColors& c = m_tw->painter().colors();
        QVERIFY(c.dark);
        const auto readable = [](const QColor& a, const QColor& b) { return theme::contrastRatio(a, b) >= 4.5; };
        QVERIFY(readable(c.labelText, c.labelFill));
        QVERIFY(readable(c.laneHeaderText, c.laneHeader));
        QVERIFY(readable(c.axisText, c.ruler));
        QVERIFY(theme::contrastRatio(c.selection, c.canvas) >= 3);
        QVERIFY(theme::contrastRatio(c.match, c.canvas) >= 3);
        for (int s = 0; s < dl::kOpStateCount; ++s) {
            const QColor fill = m_tw->painter().stateColor(dl::OpState(s));
            QVERIFY2(theme::contrastRatio(fill, c.canvas) >= 3, qPrintable(fill.name()));   // slices stand out
            QVERIFY(readable(theme::textOn(fill), fill));   // their names read
        }
        // The canvas really is dark when painted.
        QImage img(m_tw->size(), QImage::Format_ARGB32);
        m_tw->render(&img);
        QCOMPARE(QColor(img.pixel(img.width() - 2, img.height() - 2)).rgb(), c.canvas.rgb());
        static_cast<QWidget*>(m_tw)->setPalette(QPalette());
        QVERIFY(!m_tw->painter().colors().dark || theme::isDark(QApplication::palette()));
    }

private:
    QTemporaryDir m_tmp;
    MainWindow* m_w = nullptr;
    TimelineWidget* m_tw = nullptr;
    const dl::DumpIndex* m_ix = nullptr;
};

QTEST_MAIN(TstTimeline)
#include "test_timeline.moc"

// The timeline on the bundled demo (opened once for the suite): slices and their names, times
// relative to the view, search next/previous, area summaries, folding stages, flows of a Send,
// the op context menu, Reset layout, and the dark palette's contrast.
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDockWidget>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <algorithm>
#include <functional>
#include <tuple>

#include "tests/ui/isolated_app_state.h"

#include "core/index/tensor_location.h"
#include "core/timeline/time_axis.h"
#include "tests/ui/rendered_pixels.h"
#include "ui/main_window.h"
#include "ui/models/dump_session.h"
#include "ui/models/op_table_model.h"
#include "ui/style/op_names.h"
#include "ui/style/theme.h"
#include "ui/views/op_context_menu.h"
#include "ui/views/op_table_panel.h"
#include "ui/views/shortcuts_dialog.h"
#include "ui/views/timeline/details_panel.h"
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
        QTest::qWait(300);  // the first layout's deferred dock sizes
        m_tw = m_w->timelinePanel()->timelineWidget();
        m_ix = m_w->session()->index();
    }
    void cleanupTestCase() { delete m_w; }

    // W/S/A/D/F work as soon as a dump is open: the keyboard is on the timeline, not the table.
    // Keys go through the window (as a user's do) to whatever has the focus.
    void keyboardIsOnTheTimelineAfterLoading() {
        QCOMPARE(m_w->focusWidget(), static_cast<QWidget*>(m_tw));
        m_w->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_w));
        QCOMPARE(QApplication::focusWidget(), static_cast<QWidget*>(m_tw));
        const double span = m_tw->viewport().span(), from = m_tw->viewport().from();
        QTest::keyClick(m_w->windowHandle(), Qt::Key_W);
        QVERIFY2(m_tw->viewport().span() < span * 0.9, "W did not zoom in");
        QTest::keyClick(m_w->windowHandle(), Qt::Key_D);
        QVERIFY2(m_tw->viewport().from() > from, "D did not pan right");
    }

    // The origin is framed on load: centred with its lane's neighbours on both sides, zoomed in
    // from the whole iteration, its marker whole inside the lanes; Jump to origin frames it again.
    void originIsFramedOnLoadAndOnJump() {
        const quint32 origin = m_w->session()->analysis()->firstOverflow->op;
        const auto framed = [&] {
            const QRect lanes = TimelinePainter::lanesRect(m_tw->rect());
            const QRectF r = m_tw->opRect(origin);
            const double mid = r.center().x();
            if (mid < lanes.left() + lanes.width() * 0.3 || mid > lanes.right() - lanes.width() * 0.3) return false;
            // Neighbours on its lane either side in view.
            std::size_t lane = 0, item = 0;
            m_tw->timeline()->locate(origin, lane, item);
            const auto& items = m_tw->timeline()->lanes[lane].items;
            if (item < 3 || item + 3 >= items.size()) return true;
            const double a = m_tw->relTime(items[item - 3].start), b = m_tw->relTime(items[item + 3].end);
            return a >= m_tw->viewport().from() && b <= m_tw->viewport().to() &&
                m_tw->viewport().span() < 0.5 * (m_tw->viewport().fullTo() - m_tw->viewport().fullFrom());
        };
        QVERIFY2(framed(),
                 qPrintable(QStringLiteral("view %1..%2, origin at x %3")
                                .arg(m_tw->viewport().from())
                                .arg(m_tw->viewport().to())
                                .arg(m_tw->opRect(origin).center().x())));
        QCOMPARE(m_tw->selectedOp(), origin);
        m_tw->fitAll();
        QVERIFY(!framed());
        QTest::keyClick(m_w->windowHandle(), Qt::Key_J, Qt::ControlModifier);
        QVERIFY(framed());
    }

    // Chain hops and flows are drawn for the selection only (as Perfetto does): none with nothing
    // selected, the origin's own hop with the origin selected.
    void chainArrowsOnlyForTheSelection() {
        const quint32 origin = m_w->session()->analysis()->firstOverflow->op;
        const dl::TimelineData* d = m_tw->timeline();
        QVERIFY(std::any_of(d->arrows.begin(), d->arrows.end(),
                            [&](const dl::TimelineArrow& a) { return a.fromOp == origin; }));
        const std::size_t hops = std::count_if(d->arrows.begin(), d->arrows.end(), [&](const dl::TimelineArrow& a) {
            return a.fromOp == origin || a.toOp == origin;
        });
        QVERIFY(hops > 0);
        QImage img(m_tw->size(), QImage::Format_ARGB32);
        m_w->session()->select(origin);
        m_tw->fitAll();  // the hop from the origin and where it lands, both in view
        m_tw->render(&img);
        QCOMPARE(m_tw->painter().lastArrowsDrawn(), hops);
        m_w->session()->clearSelection();
        m_tw->render(&img);
        QCOMPARE(m_tw->painter().lastArrowsDrawn(), std::size_t(0));
        // An op on no hop: none drawn either.
        for (const auto& lane : d->lanes)
            for (const auto& it : lane.items)
                if (std::none_of(d->arrows.begin(), d->arrows.end(),
                                 [&](const dl::TimelineArrow& a) { return a.fromOp == it.op || a.toOp == it.op; })) {
                    m_w->session()->select(it.op);
                    m_tw->render(&img);
                    QCOMPARE(m_tw->painter().lastArrowsDrawn(), std::size_t(0));
                    m_w->session()->select(origin);
                    return;
                }
    }

    // '?' opens the shortcuts once, without Qt's "Ambiguous shortcut overload" (it was bound to
    // '?', Shift+'?' and Shift+'/' at once).
    void questionMarkOpensTheShortcuts() {
        static QStringList warnings;
        warnings.clear();
        const QtMessageHandler old =
            qInstallMessageHandler([](QtMsgType, const QMessageLogContext&, const QString& m) { warnings << m; });
        bool opened = false;
        QTimer::singleShot(200, [&] {
            if (QWidget* dlg = QApplication::activeModalWidget()) {
                opened = qobject_cast<ShortcutsDialog*>(dlg) != nullptr;
                dlg->close();
            }
        });
        m_w->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_w));
        QTest::keyClick(m_w->windowHandle(), Qt::Key_Question);
        QTRY_VERIFY(!QApplication::activeModalWidget());
        qInstallMessageHandler(old);
        QVERIFY2(opened, qPrintable(warnings.join(QLatin1Char('\n'))));
        for (const QString& w : warnings) QVERIFY2(!w.contains(QStringLiteral("Ambiguous")), qPrintable(w));
        // The offscreen platform offers a key press one candidate sequence; X11 offers '?' with and
        // without Shift and Shift+'/' too. No two bindings of the window may be such candidates of
        // one key press (US layout: Shift+'/' is '?', Shift is implied for symbols).
        QMap<QString, QString> seen;
        for (QAction* act : m_w->findChildren<QAction*>())
            for (const QKeySequence& k : act->shortcuts()) {
                if (k.isEmpty()) continue;
                QKeyCombination c = k[0];
                Qt::KeyboardModifiers mods = c.keyboardModifiers();
                Qt::Key key = c.key();
                if (key == Qt::Key_Slash && (mods & Qt::ShiftModifier)) key = Qt::Key_Question;
                if (key < 0x01000000 && (key < Qt::Key_A || key > Qt::Key_Z))
                    mods &= ~Qt::ShiftModifier;  // symbols come shifted
                const QString norm = QKeySequence(QKeyCombination(mods, key)).toString();
                QVERIFY2(
                    !seen.contains(norm),
                    qPrintable(
                        QStringLiteral("%1 (%2) and %3 share a key press").arg(norm, act->text(), seen.value(norm))));
                seen.insert(norm, act->text());
            }
    }

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
        bar.resize(1600, bar.sizeHint().height());  // room again: the whole text, no ellipsis
        QTRY_COMPARE(bar.findChild<QLabel*>(QStringLiteral("timelineInfo"))->text(), info);
        bar.close();
        m_w->activateWindow();  // the later tests send shortcuts to the main window
        QVERIFY(QTest::qWaitForWindowActive(m_w));
    }

    void slicesRunToTheNextOpOfTheLane() {
        const dl::TimelineData* d = m_tw->timeline();
        QVERIFY(d->base == dl::TimeBase::Timestamps);
        QVERIFY(d->anyInferredEnd);  // the demo writes start times only
        std::size_t sliced = 0;
        for (const auto& lane : d->lanes)
            for (std::size_t k = 0; k + 1 < lane.items.size(); ++k) {
                const auto& it = lane.items[k];
                const auto& next = lane.items[k + 1];
                QVERIFY(it.inferredEnd);
                if (m_ix->ops[it.op].iteration != m_ix->ops[next.op].iteration) continue;
                QVERIFY(it.end <= next.start);  // never over the next op
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
                QCOMPARE(l.text, name);  // wide enough: not elided
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
        QVERIFY2(!tip.contains(QString::number(m_ix->ops[it.op].startUs)), qPrintable(tip));  // no epoch µs
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
        QVERIFY(m_tw->gotoMatch(false));  // wraps around
        QCOMPARE(m_tw->selectedOp(), std::get<2>(order.front()));
        QVERIFY(m_tw->gotoMatch(true));
        QCOMPARE(m_tw->selectedOp(), std::get<2>(order.back()));
        // Enter / Shift+Enter in the filter field do the same.
        QTest::keyClick(table->filterEdit(), Qt::Key_Return, Qt::ShiftModifier);
        QCOMPARE(m_tw->selectedOp(), std::get<2>(order[order.size() - 2]));
        QTest::keyClick(table->filterEdit(), Qt::Key_Return);
        QCOMPARE(m_tw->selectedOp(), std::get<2>(order.back()));
        table->setFilterText({}, false);
        QVERIFY(m_tw->matchOrder().empty());  // nothing filtered: nothing highlighted
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
        const int headerY = TimelinePainter::lanesRect(m_tw->rect()).top() + TimelinePainter::kHeaderHeight / 2 -
            m_tw->paintState().scrollY;
        QTest::mouseClick(m_tw, Qt::LeftButton, {}, QPoint(20, headerY));
        QVERIFY(m_tw->painter().isStageCollapsed(stage));
        for (std::size_t i = 0; i < d->lanes.size(); ++i)
            QCOMPARE(m_tw->painter().laneShown(i), d->lanes[i].stage != stage);
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
                if (send == dl::kNoIndex && m_ix->strings.str(m_ix->ops[it.op].type) == "Send" &&
                    !d->flowsFor(it.op).empty())
                    send = it.op;
        QVERIFY(send != dl::kNoIndex);
        const auto flows = d->flowsFor(send);
        QCOMPARE(flows.front().fromOp, send);
        const quint32 recv = flows.front().toOp;
        QCOMPARE(QString::fromStdString(m_ix->strings.str(m_ix->ops[recv].type)), QStringLiteral("Receive"));
        QVERIFY(m_ix->ops[recv].rank != m_ix->ops[send].rank);
        // The Receive's flow points back at the Send.
        const auto back = d->flowsFor(recv);
        QVERIFY(std::any_of(back.begin(), back.end(),
                            [&](const dl::TimelineFlow& f) { return f.fromOp == send && f.toOp == recv; }));
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
        for (const char* n : {opmenu::kCopyName, opmenu::kCopyFullName, opmenu::kCopyPath, opmenu::kOpenFolder,
                              opmenu::kCompare, opmenu::kExportPng, opmenu::kExportCsv})
            QVERIFY2(actionNamed(menu, n), n);
        QVERIFY(!actionNamed(menu, opmenu::kCompare)->isEnabled());  // no comparison open
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
        const QString expected =
            QString::fromStdString(m_ix->root + "/" + m_ix->strings.str(m_ix->side(m_ix->tensors[tensor]).file));
        QCOMPARE(QFileInfo(QApplication::clipboard()->text()).canonicalFilePath(),
                 QFileInfo(expected).canonicalFilePath());
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
        view->selectionModel()->select(table->model()->index(2, 0),
                                       QItemSelectionModel::Select | QItemSelectionModel::Rows);
        QTest::keyClick(view, Qt::Key_C, Qt::ControlModifier);
        const QStringList rows = QApplication::clipboard()->text().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(rows.size(), 3);  // header and two rows
        QCOMPARE(rows[1].count(QLatin1Char('\t')), table->model()->columnCount() - 1);
    }

    // Slices at any zoom: a merged run of ops says how many it holds, a slice names its op from
    // the width where two characters and "…" fit, and each slice has a darker border.
    void slicesAreNamedOrCountedAtEveryZoom() {
        const dl::TimelineData* d = m_tw->timeline();
        const QFontMetrics fm(m_tw->font());
        bool sawCount = false, sawTruncated = false;
        for (double zoom : {1.0, 4.0, 16.0, 64.0, 256.0}) {
            const double full = m_tw->viewport().fullTo() - m_tw->viewport().fullFrom();
            const double mid = (m_tw->viewport().fullFrom() + m_tw->viewport().fullTo()) / 2;
            m_tw->setWindow(mid - full / zoom / 2, mid + full / zoom / 2);
            QImage img(m_tw->size(), QImage::Format_ARGB32);
            m_tw->render(&img);
            const dl::TimeAxis axis = TimelinePainter::axisFor(m_tw->rect(), m_tw->viewport());
            for (const SliceLabel& l : m_tw->painter().lastLabels()) {
                QVERIFY2(fm.horizontalAdvance(l.text) <= l.rect.width() + 1, qPrintable(l.text));
                if (l.op == SliceLabel::kNoOp) {
                    // "25 ops": the number is the ops of that lane whose slices fall in the run's pixels.
                    QVERIFY2(l.count >= 2 && l.text.startsWith(QString::number(l.count)), qPrintable(l.text));
                    sawCount |= l.text.endsWith(QStringLiteral(" ops"));
                    continue;
                }
                const QString name = opNames(*m_ix, m_ix->ops[l.op]).shortName;
                QVERIFY2(
                    l.text == name ||
                        (l.text.endsWith(QChar(0x2026)) && l.text.size() >= 3 && name.startsWith(l.text.chopped(1))),
                    qPrintable(l.text + QStringLiteral(" for ") + name));
                sawTruncated |= l.text != name;
            }
            // Every op wide enough for two characters of its name and the ellipsis has its label.
            for (std::size_t li = 0; li < d->lanes.size(); ++li) {
                if (m_tw->painter().laneShown(li) == false) continue;
                const int cy = m_tw->painter().laneCenterY(m_tw->rect(), int(li), m_tw->paintState().scrollY);
                if (cy < TimelinePainter::lanesRect(m_tw->rect()).top() || cy > m_tw->height()) continue;
                if (d->lanes[li].lod.levelFor(axis.timePerPixel()) >= 0) continue;  // merged: counted, above
                for (const auto& it : d->lanes[li].items) {
                    const double a = std::max<double>(axis.xOf(it.start), TimelinePainter::kLabelWidth),
                                 b = std::min<double>(axis.xOf(it.end), m_tw->width());
                    const QString name = opNames(*m_ix, m_ix->ops[it.op]).shortName;
                    if (b - a < fm.horizontalAdvance(name.left(2) + QChar(0x2026)) + 6) continue;
                    const auto& labels = m_tw->painter().lastLabels();
                    QVERIFY2(
                        std::any_of(labels.begin(), labels.end(), [&](const SliceLabel& l) { return l.op == it.op; }),
                        qPrintable(QStringLiteral("zoom %1: %2 px slice without a name").arg(zoom).arg(b - a)));
                }
            }
        }
        QVERIFY2(sawCount, "no merged run said how many ops it holds");
        QVERIFY2(sawTruncated, "no truncated name seen");
        // A border: across a wide slice the first column is darker than its middle.
        const dl::TimelineItem* wide = nullptr;
        for (const auto& it : d->lanes.front().items)
            if (!wide || it.end - it.start > wide->end - wide->start) wide = &it;
        const double s = m_tw->relTime(wide->start), e = m_tw->relTime(wide->end);
        m_tw->setWindow(s - (e - s), e + (e - s));
        QImage img(m_tw->size(), QImage::Format_ARGB32);
        m_tw->render(&img);
        const QRectF r = m_tw->opRect(wide->op);
        const int y = int(r.top()) + 5;
        const QColor edge = img.pixelColor(int(std::floor(r.left())), y), inside = img.pixelColor(int(r.left() + 8), y);
        QVERIFY2(edge.lightness() < inside.lightness(),
                 qPrintable(edge.name() + QStringLiteral(" vs ") + inside.name()));
        m_tw->fitAll();
    }

    // The ruler counts from the view's start ("0", "+…") in one unit and precision, then from a
    // mark set by a click on the ruler.
    void rulerCountsFromTheViewStartOrTheMark() {
        const double full = m_tw->viewport().fullTo() - m_tw->viewport().fullFrom();
        const double from = full * 0.4, to = full * 0.6;
        m_tw->setWindow(from, to);
        QCOMPARE(m_tw->viewport().from(), from);
        QImage img(m_tw->size(), QImage::Format_ARGB32);
        m_tw->render(&img);
        QStringList labels = m_tw->painter().lastRulerLabels();
        QVERIFY(labels.size() >= 3);
        QCOMPARE(labels.front(), QStringLiteral("0"));
        QStringList units;
        for (const QString& l : labels.mid(1)) {
            QVERIFY2(l.startsWith(QLatin1Char('+')), qPrintable(l));
            units << l.section(QLatin1Char(' '), 1);
            QCOMPARE(l.section(QLatin1Char(' '), 0, 0).section(QLatin1Char('.'), 1).size(),
                     labels[1].section(QLatin1Char(' '), 0, 0).section(QLatin1Char('.'), 1).size());  // one precision
        }
        units.removeDuplicates();
        QCOMPARE(units.size(), 1);
        // The left cell: the view's start as a time of the run, to the ruler's precision.
        const QString ref = m_tw->painter().lastRulerReference();
        QVERIFY2(std::abs(ref.section(QLatin1Char(' '), 0, 0).toDouble() *
                              (ref.endsWith(QStringLiteral(" ms"))      ? 1e3
                                   : ref.endsWith(QStringLiteral(" s")) ? 1e6
                                                                        : 1) -
                          from) < (to - from) / 10,
                 qPrintable(ref));
        // A click on the ruler at the lanes' middle: the mark is there and the ruler counts from it.
        const QRect ruler = TimelinePainter::rulerRect(m_tw->rect());
        QTest::mouseClick(m_tw, Qt::LeftButton, {}, QPoint(ruler.center().x(), ruler.center().y()));
        QVERIFY(m_tw->hasMark());
        m_tw->render(&img);
        labels = m_tw->painter().lastRulerLabels();
        QVERIFY(labels.contains(QStringLiteral("0")));
        QVERIFY(labels.front().startsWith(QLatin1Char('-')));
        QVERIFY(m_tw->painter().lastRulerReference().startsWith(QStringLiteral("mark ")));
        QTest::mouseClick(m_tw, Qt::LeftButton, {},
                          QPoint(ruler.center().x(), ruler.center().y()));  // on the mark: off
        QVERIFY(!m_tw->hasMark());
        m_tw->fitAll();
    }

    // A right click selects the op under it (then shows its menu), as a left click would.
    void rightClickSelects() {
        // An op of the origin's lane (the lane the view scrolled to) that overlaps no other.
        const quint32 origin = m_w->session()->analysis()->firstOverflow->op;
        m_w->session()->select(origin);  // its iteration shown again
        std::size_t lane = 0, item = 0;
        QTRY_VERIFY_WITH_TIMEOUT(!m_w->timelinePanel()->isBuilding() && m_tw->timeline()->locate(origin, lane, item),
                                 20000);
        const dl::TimelineData* d = m_tw->timeline();
        const auto& items = d->lanes[lane].items;
        std::size_t k = 1;
        while (k + 1 < items.size() &&
               !(items[k].end > items[k].start && items[k - 1].end <= items[k].start &&
                 items[k + 1].start >= items[k].end && k != item))
            ++k;
        QVERIFY(k + 1 < items.size());
        const dl::TimelineItem& it = items[k];
        QVERIFY(it.op != m_w->session()->currentOp());
        const double s = m_tw->relTime(it.start), e = m_tw->relTime(it.end);
        m_tw->setWindow(s - (e - s) * 2, e + (e - s) * 2);
        const QPoint at = m_tw->opRect(it.op).center().toPoint();
        QVERIFY(TimelinePainter::lanesRect(m_tw->rect()).contains(at));
        QTimer::singleShot(100, [] {
            if (QWidget* menu = QApplication::activePopupWidget()) menu->close();
        });
        QTest::mouseClick(m_tw, Qt::RightButton, {}, at);
        QCOMPARE(m_w->session()->currentOp(), it.op);
        QCOMPARE(m_tw->selectedOp(), it.op);
        m_tw->fitAll();
    }

    // The bottom Details panel: an area's summary whole and its ops sortable; search results;
    // the selection with its flows; a click on a row selects that op.
    void detailsPanelListsAreasSearchesAndSelections() {
        DetailsPanel* p = m_w->detailsPanel();
        const dl::TimelineData* d = m_tw->timeline();
        const double full = m_tw->viewport().fullTo() - m_tw->viewport().fullFrom();
        m_tw->selectArea(0, int(d->lanes.size()) - 1, full * 0.2, full * 0.6);
        QCOMPARE(p->shows(), DetailsPanel::Shows::Area);
        const dl::TimelineAreaSummary sum = m_tw->areaSummary();
        QCOMPARE(std::size_t(p->model()->rowCount()), sum.ops);
        QCOMPARE(p->summary(), m_tw->areaText());  // whole, not elided
        // Sorted by start (the proxy sorts by the number), then by max|x| descending.
        p->table()->sortByColumn(DetailsModel::Start, Qt::AscendingOrder);
        const auto startOf = [&](int row) {
            const QModelIndex i = p->table()->model()->index(row, DetailsModel::Start);
            return p->table()->model()->data(i, DetailsModel::kSortRole).toLongLong();
        };
        for (int r = 1; r < p->table()->model()->rowCount(); ++r) QVERIFY(startOf(r - 1) <= startOf(r));
        // A click on a row selects its op everywhere; the list stays.
        const QModelIndex row3 = p->table()->model()->index(3, DetailsModel::Op);
        p->table()->setCurrentIndex(row3);
        const quint32 picked =
            p->model()->opAt(static_cast<QSortFilterProxyModel*>(p->table()->model())->mapToSource(row3).row());
        QCOMPARE(m_w->session()->currentOp(), picked);
        QCOMPARE(p->shows(), DetailsPanel::Shows::Area);
        m_tw->clearArea();
        QCOMPARE(p->shows(), DetailsPanel::Shows::Selection);
        QCOMPARE(p->model()->opAt(0), picked);
        // Search results: the table filter's matches.
        m_w->timelinePanel()->setMatches({d->lanes[0].items[0].op, d->lanes[0].items[1].op, d->lanes[1].items[0].op});
        QCOMPARE(p->shows(), DetailsPanel::Shows::Search);
        QCOMPARE(p->model()->rowCount(), 3);
        QVERIFY(p->summary().contains(QStringLiteral("3 matching ops")));
        m_w->timelinePanel()->setMatches({});
        QCOMPARE(p->shows(), DetailsPanel::Shows::Selection);
        // A Send: its Receive listed beside it.
        for (const auto& lane : d->lanes)
            for (const auto& it : lane.items)
                if (m_ix->strings.str(m_ix->ops[it.op].type) == "Send" && !d->flowsFor(it.op).empty()) {
                    m_w->session()->select(it.op);
                    QVERIFY(p->model()->rowCount() >= 2);
                    QCOMPARE(p->model()->opAt(1), d->flowsFor(it.op).front().toOp);
                    return;
                }
        QFAIL("no Send with a flow in the demo");
    }
    void cleanup() {
        // The Details tab is raised by an area: the default layout has the table in front.
        if (auto* table = m_w->findChild<QDockWidget*>(QStringLiteral("dock.table"))) table->raise();
        // A selection in another iteration rebuilds the timeline: the next test starts on the new one.
        QTRY_VERIFY_WITH_TIMEOUT(!m_w->timelinePanel()->isBuilding(), 20000);
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
            QVERIFY2(theme::contrastRatio(fill, c.canvas) >= 3, qPrintable(fill.name()));  // slices stand out
            QVERIFY(readable(theme::textOn(fill), fill));                                  // their names read
        }
        // The canvas really is dark when painted.
        QImage img(m_tw->size(), QImage::Format_ARGB32);
        m_tw->render(&img);
        QCOMPARE(QColor(img.pixel(img.width() - 2, img.height() - 2)).rgb(), c.canvas.rgb());
        static_cast<QWidget*>(m_tw)->setPalette(QPalette());
        QVERIFY(!m_tw->painter().colors().dark || theme::isDark(QApplication::palette()));
    }

    // A watched folder's next update (a live dump of the same path) keeps the iteration shown and
    // the window the user zoomed to; an Open of the folder after the watch ended does not.
    void aWatchedRunsUpdateKeepsTheIterationAndTheWindow() {
        TimelinePanel* panel = m_w->timelinePanel();
        const LoadedDumpPtr opened = m_w->session()->dump();
        QComboBox* iteration = panel->toolbar()->iterationChoice();
        const auto liveCopy = [&] {
            auto d = std::make_shared<LoadedDump>(*opened);
            d->live = true;
            return LoadedDumpPtr(d);
        };
        const auto built = [&](const std::function<void()>& change) {
            QSignalSpy spy(panel, &TimelinePanel::timelineBuilt);
            change();
            return spy.wait(20000) || spy.count() > 0;
        };
        QVERIFY(built([&] { m_w->session()->setDump(liveCopy()); }));
        // Another iteration than the first overflow's, and a window inside it.
        const int first = iteration->findData(QVariant::fromValue(std::uint32_t(1)));
        QVERIFY(first > 0 && first != iteration->currentIndex());
        QVERIFY(built([&] { iteration->setCurrentIndex(first); }));
        const dl::TimelineViewport& vp = m_tw->viewport();
        const double span = vp.fullTo() - vp.fullFrom();
        m_tw->setWindow(vp.fullFrom() + span * 0.3, vp.fullFrom() + span * 0.4);
        const double from = vp.from(), to = vp.to();
        QVERIFY(built([&] { m_w->session()->setDump(liveCopy()); }));
        QCOMPARE(iteration->currentIndex(), first);
        QCOMPARE(vp.from(), from);
        QCOMPARE(vp.to(), to);
        // The watch's last update, no longer live (Stop watching: the full analysis) keeps them too;
        // the same folder opened again after that is framed anew, on the first overflow's iteration.
        QVERIFY(built([&] { m_w->session()->setDump(opened); }));
        QCOMPARE(iteration->currentIndex(), first);
        QVERIFY(built([&] { m_w->session()->setDump(std::make_shared<LoadedDump>(*opened)); }));
        QVERIFY(iteration->currentIndex() != first);
    }

private:
    QTemporaryDir m_tmp;
    MainWindow* m_w = nullptr;
    TimelineWidget* m_tw = nullptr;
    const dl::DumpIndex* m_ix = nullptr;
};

QTEST_MAIN(TstTimeline)
#include "test_timeline.moc"

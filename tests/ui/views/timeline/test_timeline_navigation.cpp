// The timeline on the bundled demo (opened once for the suite), how one moves in it: the keyboard
// after loading, the origin framed on load and on Jump, '?' for the shortcuts, search next and
// previous, the ruler's counts and mark, a right click, and a watched run's update.
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QImage>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <algorithm>
#include <functional>
#include <tuple>

#include "core/timeline/time_axis.h"
#include "tests/ui/rendered_pixels.h"
#include "tests/ui/views/timeline/timeline_demo_window.h"
#include "ui/main_window.h"
#include "ui/models/op_table_model.h"
#include "ui/views/op_context_menu.h"
#include "ui/views/op_table_panel.h"
#include "ui/views/shortcuts_dialog.h"
#include "ui/views/timeline/details_panel.h"
#include "ui/views/timeline/timeline_panel.h"
#include "ui/views/timeline/timeline_toolbar.h"

using namespace dlui;

class TstTimelineNavigation : public TimelineDemoSuite {
    Q_OBJECT
private slots:
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
};

QTEST_MAIN(TstTimelineNavigation)
#include "moc_timeline_demo_window.cpp"
#include "test_timeline_navigation.moc"

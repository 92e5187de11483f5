// The timeline on the bundled demo (opened once for the suite) with the panels around it: the
// toolbar's elided texts, area summaries, a Send's flows, the op context menu, the Details panel,
// and Reset layout.
#include <QApplication>
#include <QClipboard>
#include <QDockWidget>
#include <QImage>
#include <QLabel>
#include <QMenu>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

#include "core/timeline/time_axis.h"
#include "tests/ui/views/timeline/timeline_demo_window.h"
#include "ui/main_window.h"
#include "ui/models/op_table_model.h"
#include "ui/style/op_names.h"
#include "ui/views/op_context_menu.h"
#include "ui/views/op_table_panel.h"
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

class TstTimelinePanels : public TimelineDemoSuite {
    Q_OBJECT
private slots:
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
};

QTEST_MAIN(TstTimelinePanels)
#include "moc_timeline_demo_window.cpp"
#include "test_timeline_panels.moc"

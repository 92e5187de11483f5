// Both windows fit a 1280x720 laptop screen: their minimumSizeHint() after opening the demo with
// the longest op names (the kernel-by-kernel variant), in the main window and in the compare window.
#include <QAbstractButton>
#include <QApplication>
#include <QClipboard>
#include <QDockWidget>
#include <QLabel>
#include <QLayout>
#include <QMenu>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <algorithm>
#include <vector>

#include "tests/ui/isolated_app_state.h"
#include "tests/ui/long_name_dump.h"
#include "ui/compare_window.h"
#include "ui/main_window.h"
#include "ui/models/dump_session.h"
#include "ui/views/chain_view.h"
#include "ui/views/compare/compare_timelines.h"
#include "ui/views/tensor_panel.h"
#include "ui/views/timeline/timeline_panel.h"
#include "ui/views/timeline/timeline_widget.h"
#include "ui/views/verdict_banner.h"

using namespace dlui;

namespace {

constexpr QSize kScreen(1280, 720);

// The widgets asking for the most width/height, to name the culprit when a window is too big.
QString widest(const QWidget* root) {
    struct Row {
        int w, h;
        QString what;
    };
    std::vector<Row> rows;
    for (const QWidget* c : root->findChildren<QWidget*>()) {
        if (!c->isVisibleTo(root)) continue;
        const QSize m = c->minimumSizeHint().expandedTo(c->minimumSize());
        rows.push_back(
            {m.width(), m.height(),
             QStringLiteral("%1(%2)").arg(QString::fromLatin1(c->metaObject()->className()), c->objectName())});
    }
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.w > b.w; });
    QString s;
    for (std::size_t i = 0; i < rows.size() && i < 12; ++i)
        s += QStringLiteral(" %1x%2 %3;").arg(rows[i].w).arg(rows[i].h).arg(rows[i].what);
    return s;
}

bool fits(const QWidget& w, QString& why) {
    const QSize m = w.minimumSizeHint().expandedTo(w.minimumSize());
    why = QStringLiteral("%1 needs %2x%3:%4").arg(w.windowTitle()).arg(m.width()).arg(m.height()).arg(widest(&w));
    return m.width() <= kScreen.width() && m.height() <= kScreen.height();
}

// Rows of `t` drawn whole in its viewport and inside `clip` (the dock's scroll viewport).
int wholeRowsShown(const QTableView* t, const QWidget* clip) {
    const QRect visible = QRect(clip->mapFromGlobal(t->viewport()->mapToGlobal(QPoint(0, 0))), t->viewport()->size())
                              .intersected(clip->rect());
    int n = 0;
    for (int r = 0; r < t->model()->rowCount(); ++r) {
        const int top = t->rowViewportPosition(r);
        const QPoint at = clip->mapFromGlobal(t->viewport()->mapToGlobal(QPoint(0, top)));
        if (top >= 0 && at.y() >= visible.top() && at.y() + t->rowHeight(r) - 1 <= visible.bottom()) ++n;
    }
    return n;
}

}  // namespace

class TstWindowSizes : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        isolateAppState(m_tmp.path(), QStringLiteral("dumplens-window-sizes"));
    }

    // A short chain dock (1.5 scale, small screen) scrolls; its title, tables and labels never
    // overlap (squeezed below its minimum the layout drew the replay title over the chain table).
    void shortChainDockScrollsInsteadOfOverlapping() {
        DumpSession session;
        ChainView v(&session);
        v.resize(420, 150);
        v.show();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        QTest::qWait(50);
        std::vector<std::pair<QRect, QString>> parts;
        for (QWidget* w : v.findChildren<QWidget*>())
            if ((qobject_cast<QTableView*>(w) || qobject_cast<QLabel*>(w)) && w->isVisible())
                parts.emplace_back(QRect(w->mapTo(&v, QPoint(0, 0)), w->size()),
                                   QString::fromLatin1(w->metaObject()->className()));
        QVERIFY(parts.size() >= 4);  // title, chain table, replay title, recommendation (no replay table: no dump)
        for (std::size_t i = 0; i < parts.size(); ++i)
            for (std::size_t j = i + 1; j < parts.size(); ++j)
                QVERIFY2(!parts[i].first.intersects(parts[j].first),
                         qPrintable(parts[i].second + QStringLiteral(" overlaps ") + parts[j].second));
        // Tall enough: no scrolling, every part in view.
        v.resize(420, 600);
        QTest::qWait(50);
        for (QTableView* t : v.findChildren<QTableView*>())
            QVERIFY2(QRect(t->mapTo(&v, QPoint(0, 0)), t->size()).bottom() < v.height(),
                     "a table below the fold of a tall dock");
    }

    // The chain dock at the first-run layout: on a 1366x768 laptop the demo's 12-step chain shows
    // at least five steps whole and the replay table all its rows and no empty ones, without
    // scrolling the dock; on a larger screen the chain takes the extra height.
    void chainDockGivesTheChainTheSpareHeight() {
        QSettings().clear();  // the first-run layout, not one a previous slot saved
        MainWindow w;
        w.resize(1366, 740);  // the screen less the title bar
        w.show();
        w.openDemo();
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->analysis() && !w.isBusy(), 120000);
        ChainView* v = w.chainView();
        const auto* scroll = v->findChild<QScrollArea*>(QStringLiteral("chainScroll"));
        QVERIFY(scroll);
        QTableView* chain = v->chainTable();
        QTableView* replay = v->replayTable();
        const int steps = chain->model()->rowCount();
        const int replayRows = replay->model()->rowCount();
        QVERIFY2(steps >= 6, "the demo's chain crosses stages");
        QCOMPARE(replayRows, 3);  // fp16, bf16, fp32
        // (waited for: the deferred first-run dock sizes land after the workspace is shown)
        QTRY_VERIFY_WITH_TIMEOUT(wholeRowsShown(chain, scroll->viewport()) >= 5, 5000);
        const int shown1366 = wholeRowsShown(chain, scroll->viewport());
        QVERIFY2(shown1366 >= 5,
                 qPrintable(QStringLiteral("%1 of %2 steps shown whole, chain %3 px, dock %4 px")
                                .arg(shown1366)
                                .arg(steps)
                                .arg(chain->height())
                                .arg(v->height())));
        QCOMPARE(wholeRowsShown(replay, scroll->viewport()), replayRows);
        // No empty rows under the replay's: its viewport holds its rows and less than one more.
        const auto replayFitsItsRows = [&] {
            const int rowsPx = replayRows * replay->rowHeight(0), vp = replay->viewport()->height();
            return vp >= rowsPx && vp < rowsPx + replay->rowHeight(0);
        };
        QVERIFY2(replayFitsItsRows(),
                 qPrintable(QStringLiteral("replay viewport %1 px").arg(replay->viewport()->height())));
        QCOMPARE(scroll->verticalScrollBar()->maximum(), 0);  // the dock does not scroll
        // A taller window: the replay still fits its rows, the chain shows more steps.
        w.resize(1500, 1000);
        w.resetLayout();
        QTRY_VERIFY_WITH_TIMEOUT(wholeRowsShown(chain, scroll->viewport()) > shown1366, 5000);
        QVERIFY(replayFitsItsRows());
        QCOMPARE(wholeRowsShown(replay, scroll->viewport()), replayRows);
    }

    void bothWindowsFitALaptopScreen() {
        MainWindow w;
        w.resize(1280, 720);
        w.show();
        QString why;
        QVERIFY2(fits(w, why), qPrintable(why));  // the start page
        const QString kbk = MainWindow::demoRoot() + QStringLiteral("/ms24_kbk");
        w.openDemoVariant(QStringLiteral("ms24_kbk"));
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->analysis() && !w.isBusy() && w.session()->dump()->path == kbk, 120000);
        QTRY_VERIFY_WITH_TIMEOUT(!w.timelinePanel()->isBuilding(), 60000);
        QTest::qWait(150);  // the first-run dock sizes are applied deferred
        QVERIFY2(fits(w, why), qPrintable(why));
        // The origin (the longest scoped name) is selected: banner, tensor header and table show it.
        QVERIFY(w.session()->currentOp() != dl::kNoIndex);
        QVERIFY2(fits(w, why), qPrintable(why));

        w.compareWith(kbk, MainWindow::demoRoot());
        CompareWindow* cw = w.compareWindow();
        QVERIFY(cw);
        QSignalSpy ready(cw, &CompareWindow::ready);
        QVERIFY(ready.wait(120000));
        QTest::qWait(150);
        QVERIFY2(fits(*cw, why), qPrintable(why));
        // At 1366x768 every lane of the 4-rank pipeline shows whole in both runs' timelines (rank 0
        // was cut under the ruler, the diverging rank 3 scrolled off), Details open or not.
        cw->resize(1366, 740);
        for (bool details : {false, true}) {
            if (details)
                for (QAbstractButton* b : cw->findChildren<QAbstractButton*>())
                    if (b->text().contains(QStringLiteral("Details"))) b->click();
            QTest::qWait(150);
            for (TimelineWidget* t : {cw->timelines()->timelineA(), cw->timelines()->timelineB()}) {
                QVERIFY(t->timeline() && t->timeline()->lanes.size() == 4);
                const QRect lanes = TimelinePainter::lanesRect(t->rect());
                for (int l = 0; l < 4; ++l) {
                    const int cy = t->painter().laneCenterY(t->rect(), l, t->paintState().scrollY);
                    QVERIFY2(cy - TimelinePainter::kLaneHeight / 2 >= lanes.top() &&
                                 cy + TimelinePainter::kLaneHeight / 2 <= lanes.bottom() + 1,
                             qPrintable(QStringLiteral("details %1: lane %2 at %3, lanes %4..%5")
                                            .arg(details)
                                            .arg(l)
                                            .arg(cy)
                                            .arg(lanes.top())
                                            .arg(lanes.bottom())));
                }
            }
        }
        // Both still fit after being made as small as they allow.
        w.resize(w.minimumSizeHint());
        cw->resize(cw->minimumSizeHint());
        QTest::qWait(50);
        QVERIFY(w.width() <= kScreen.width() && cw->width() <= kScreen.width());
        cw->close();
    }

    // File names of 182 and 206 characters without a break point (underscores only): the window's
    // minimum stays within a 1024x600 screen, shown at that size it is not wider, and the tensor
    // header elides the name in the middle with the whole of it in the tooltip and "Copy full name".
    void longNamesFitA1024x600Screen() {
        const QString root = m_tmp.filePath(QStringLiteral("long-names"));
        std::string error;
        QVERIFY2(dltest::writeLongNameDump(root, error), error.c_str());
        MainWindow w;
        w.resize(1024, 600);
        w.show();
        w.openFolder(root);
        QTRY_VERIFY_WITH_TIMEOUT(w.session()->analysis() && !w.isBusy(), 60000);
        QTRY_VERIFY_WITH_TIMEOUT(!w.timelinePanel()->isBuilding(), 60000);
        QTest::qWait(150);
        const dl::AnalysisResult* a = w.session()->analysis();
        QVERIFY(a->firstOverflow);
        const std::string name = dltest::longOpName(2);
        QCOMPARE(dltest::longFileName(name, 1796287008400201, "output").size(), std::size_t(206));
        QCOMPARE(w.session()->index()->strings.str(w.session()->index()->ops[a->firstOverflow->op].name), name);
        const QSize m = w.minimumSizeHint().expandedTo(w.minimumSize());
        QVERIFY2(m.width() <= 1024 && m.height() <= 600,
                 qPrintable(QStringLiteral("needs %1x%2:%3").arg(m.width()).arg(m.height()).arg(widest(&w))));
        QVERIFY2(w.width() <= 1024, qPrintable(QStringLiteral("%1 px wide").arg(w.width())));
        // The header: elided in the middle (start and "-op4412" end kept), whole in tooltip and copy.
        TensorPanel* t = w.tensorPanel();
        QVERIFY2(t->headerText().contains(QChar(0x2026)), qPrintable(t->headerText()));
        QVERIFY(t->headerText().contains(QStringLiteral("Gradients_Default")));
        QLabel* header = nullptr;
        for (QLabel* l : t->findChildren<QLabel*>())
            if (l->text() == t->headerText()) header = l;
        QVERIFY(header);
        QVERIFY(header->toolTip().contains(QString::fromStdString(name)));
        QCOMPARE(t->fullName(), QString::fromStdString(name));
        QTimer::singleShot(100, [] {
            auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget());
            if (!menu) return;
            for (QAction* act : menu->actions())
                if (act->text() == QStringLiteral("Copy full name")) act->trigger();
            menu->close();
        });
        emit header->customContextMenuRequested(QPoint(5, 5));
        QCOMPARE(QApplication::clipboard()->text(), QString::fromStdString(name));
        // Made as small as it allows, it is still no wider than the screen.
        w.resize(w.minimumSizeHint());
        QTest::qWait(50);
        QVERIFY(w.width() <= 1024 && w.height() <= 600);
        // The compare window on the same dump at 1366x768: fits too.
        w.resize(1024, 600);
        w.compareWith(root);
        CompareWindow* cw = w.compareWindow();
        QSignalSpy ready(cw, &CompareWindow::ready);
        QVERIFY(ready.wait(60000));
        cw->resize(1366, 740);
        QTest::qWait(150);
        const QSize cm = cw->minimumSizeHint().expandedTo(cw->minimumSize());
        QVERIFY2(cm.width() <= 1366 && cm.height() <= 740,
                 qPrintable(QStringLiteral("needs %1x%2:%3").arg(cm.width()).arg(cm.height()).arg(widest(cw))));
        cw->close();
    }

private:
    QTemporaryDir m_tmp;
};

QTEST_MAIN(TstWindowSizes)
#include "test_window_sizes.moc"

// The main window's actions (shortcuts, what each triggers) and its menus: apart from the window's
// set-up so that the list of what a user can do reads in one place.
#include "ui/main_window.h"

#include <QAction>
#include <QDockWidget>
#include <QKeyEvent>
#include <QLineEdit>
#include <QMenuBar>

#include "ui/compare_window.h"
#include "ui/jobs/trace_export.h"
#include "ui/models/compare_session.h"
#include "ui/models/dump_session.h"
#include "ui/notify/desktop_notifier.h"
#include "ui/views/chain_view.h"
#include "ui/views/graph/graph_view.h"
#include "ui/views/op_table_panel.h"
#include "ui/views/tensor_panel.h"
#include "ui/views/timeline/details_panel.h"
#include "ui/views/timeline/timeline_panel.h"
#include "ui/views/timeline/timeline_widget.h"
#include "ui/views/verdict_banner.h"
#include "ui/views/watch_folder_dialog.h"

namespace dlui {

void MainWindow::setupActions() {
    m_openAction = new QAction(tr("&Open dump folder…"), this);
    m_openAction->setShortcut(QKeySequence::Open);
    connect(m_openAction, &QAction::triggered, this, &MainWindow::chooseFolder);
    m_openIndexAction = new QAction(tr("Open &index file (.dlx)…"), this);
    m_openIndexAction->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_O));
    m_openIndexAction->setStatusTip(tr("Open a portable index written by `dumplens-cli index -o` or `merge`"));
    connect(m_openIndexAction, &QAction::triggered, this, &MainWindow::chooseIndexFile);
    m_watchAction = new QAction(tr("&Watch folder…"), this);
    m_watchAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_W));
    m_watchAction->setStatusTip(
        tr("Follow a dump folder while training writes it (it may not exist yet): the first overflow as soon as its "
           "file is complete"));
    connect(m_watchAction, &QAction::triggered, this, &MainWindow::chooseWatchFolder);
    m_stopWatchAction = new QAction(tr("Sto&p watching"), this);
    m_stopWatchAction->setEnabled(false);  // enabled while a folder is watched
    m_stopWatchAction->setStatusTip(tr("Stop following the folder; what landed gets the full analysis"));
    connect(m_stopWatchAction, &QAction::triggered, this, &MainWindow::stopWatching);
    m_demoAction = new QAction(tr("Open the bundled &demo dump"), this);
    connect(m_demoAction, &QAction::triggered, this, &MainWindow::openDemo);
    m_compareAction = new QAction(tr("&Compare with…"), this);
    m_compareAction->setEnabled(false);  // enabled once a dump is open
    m_compareAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    m_compareAction->setStatusTip(tr("Align the open run with a second run and find where they diverge"));
    connect(m_compareAction, &QAction::triggered, this, &MainWindow::chooseCompareFolder);
    m_compareFixAction = new QAction(tr("Compare the demo with its &bf16 fix"), this);
    m_compareFixAction->setEnabled(false);  // enabled while the bundled demo is open
    m_compareFixAction->setStatusTip(tr("The same demo run with the NormHead SqrtGrad in bfloat16"));
    connect(m_compareFixAction, &QAction::triggered, this, &MainWindow::compareWithDemoFix);
    m_exportAction = new QAction(tr("&Export report…"), this);
    m_exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));  // as in the compare window
    m_exportAction->setEnabled(false);                                // enabled once an analysed dump is open
    m_exportAction->setStatusTip(tr("Write the overflow report of the open dump as PDF"));
    connect(m_exportAction, &QAction::triggered, this, &MainWindow::exportReport);
    m_traceExporter = std::make_unique<TraceExporter>(this);
    m_exportTraceAction = new QAction(tr("Export &trace (Perfetto)…"), this);
    m_exportTraceAction->setEnabled(false);  // enabled once an analysed dump is open
    m_exportTraceAction->setStatusTip(
        tr("Write the op timeline and the overflow chain as a Chrome/Perfetto trace (JSON)"));
    connect(m_exportTraceAction, &QAction::triggered, this, &MainWindow::exportTrace);
    connect(m_session, &DumpSession::dumpChanged, this, [this] {
        // Nothing readable: no verdict, so no report and no trace (the CLI refuses them too).
        const bool verdict = m_session->analysis() && !m_session->analysis()->noData;
        m_exportAction->setEnabled(verdict);
        m_exportTraceAction->setEnabled(verdict);
        m_compareAction->setEnabled(m_session->analysis());
        m_compareFixAction->setEnabled(m_session->analysis() && m_session->dump()->path.startsWith(demoRoot()));
        // "Compare this tensor" only while the compare window holds this very dump as run A.
        m_session->setCanCompare(m_compare && m_session->index() &&
                                 m_compare->session()->indexA() == m_session->index());
    });
    m_quitAction = new QAction(tr("&Quit"), this);
    m_quitAction->setShortcut(QKeySequence::Quit);
    connect(m_quitAction, &QAction::triggered, this, &QWidget::close);
    m_jumpAction = new QAction(tr("&Jump to first overflow"), this);
    m_jumpAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_J));
    connect(m_jumpAction, &QAction::triggered, m_banner, &VerdictBanner::jumpToOrigin);
    m_filterAction = new QAction(tr("&Filter ops…"), this);
    m_filterAction->setShortcut(QKeySequence::Find);
    connect(m_filterAction, &QAction::triggered, this, [this] {
        if (auto* edit = m_table->findChild<QLineEdit*>()) edit->setFocus();
    });
    m_shortcutsAction = new QAction(tr("&Keyboard shortcuts"), this);
    // '?' once: the key map already offers Shift+'?' and Shift+'/' as candidates for the '?' key,
    // so binding those too made three matches of one key press ("Ambiguous shortcut overload: ?").
    m_shortcutsAction->setShortcuts({QKeySequence(Qt::Key_Question), QKeySequence(Qt::Key_F1)});
    // Docks are top-level windows once floated: the shortcut must reach them too.
    m_shortcutsAction->setShortcutContext(Qt::ApplicationShortcut);
    connect(m_shortcutsAction, &QAction::triggered, this, &MainWindow::showShortcuts);
    m_clearAction = new QAction(tr("&Clear selection"), this);
    m_clearAction->setShortcut(QKeySequence(Qt::Key_Escape));
    m_clearAction->setShortcutContext(Qt::WindowShortcut);
    connect(m_clearAction, &QAction::triggered, m_session, &DumpSession::clearSelection);
    m_nextMatchAction = new QAction(tr("&Next match"), this);
    m_nextMatchAction->setShortcut(QKeySequence(Qt::Key_F3));
    m_nextMatchAction->setStatusTip(tr("The next op the table filter matches, centred on the timeline"));
    // F3 is a window shortcut, so in the filter field it never reaches the field's own key
    // handling: the text typed just before must be applied here, not after the typing delay.
    connect(m_nextMatchAction, &QAction::triggered, this, [this] {
        m_table->flushPendingFilter();
        m_timeline->gotoMatch(false);
    });
    m_prevMatchAction = new QAction(tr("&Previous match"), this);
    m_prevMatchAction->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F3));
    connect(m_prevMatchAction, &QAction::triggered, this, [this] {
        m_table->flushPendingFilter();
        m_timeline->gotoMatch(true);
    });
    m_resetLayoutAction = new QAction(tr("&Reset layout"), this);
    m_resetLayoutAction->setStatusTip(tr("Put every panel back where it was when the app started"));
    connect(m_resetLayoutAction, &QAction::triggered, this, &MainWindow::resetLayout);
    addActions({m_jumpAction, m_filterAction, m_shortcutsAction, m_clearAction, m_nextMatchAction, m_prevMatchAction});
    // The table's filter drives the timeline's search.
    connect(m_table, &OpTablePanel::matchesChanged, m_timeline, &TimelinePanel::setMatches);
    connect(m_table, &OpTablePanel::nextMatchRequested, m_timeline, &TimelinePanel::gotoMatch);
    connect(m_session, &DumpSession::compareTensorRequested, this, &MainWindow::compareTensor);
    // On load and on Jump (Ctrl+J, the banner's button): the origin framed with its neighbours.
    connect(m_banner, &VerdictBanner::jumpedToOrigin, m_timeline, &TimelinePanel::frameOp);
}

void MainWindow::setupMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_openAction);
    file->addAction(m_openIndexAction);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addAction(m_demoAction);
    file->addSeparator();
    file->addAction(m_watchAction);
    file->addAction(m_stopWatchAction);
    file->addSeparator();
    file->addAction(m_compareAction);
    file->addAction(m_compareFixAction);
    file->addAction(m_exportAction);
    file->addAction(m_exportTraceAction);
    file->addSeparator();
    file->addAction(m_quitAction);
    QMenu* nav = menuBar()->addMenu(tr("&Navigate"));
    nav->addAction(m_jumpAction);
    nav->addAction(m_filterAction);
    nav->addAction(m_nextMatchAction);
    nav->addAction(m_prevMatchAction);
    nav->addAction(m_clearAction);
    m_viewMenu = menuBar()->addMenu(tr("&View"));
    for (QDockWidget* d : m_docks) m_viewMenu->addAction(d->toggleViewAction());
    m_viewMenu->addSeparator();
    m_viewMenu->addAction(m_resetLayoutAction);
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(m_shortcutsAction);
}

}  // namespace dlui

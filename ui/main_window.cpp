#include "ui/main_window.h"

#include <QAbstractItemView>
#include <QAction>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileInfo>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QMenuBar>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "ui/compare_window.h"
#include "ui/jobs/dump_watcher.h"
#include "ui/jobs/load_worker.h"
#include "ui/jobs/trace_export.h"
#include "ui/models/dump_session.h"
#include "ui/models/issues_model.h"
#include "ui/notify/desktop_notifier.h"
#include "ui/report/report_export.h"
#include "ui/report/report_renderer.h"
#include "ui/style/screen_fit.h"
#include "ui/views/chain_view.h"
#include "ui/views/graph/graph_view.h"
#include "ui/views/loading_page.h"
#include "ui/views/op_table_panel.h"
#include "ui/views/shortcuts_dialog.h"
#include "ui/views/start_page.h"
#include "ui/views/tensor_panel.h"
#include "ui/views/timeline/details_panel.h"
#include "ui/views/timeline/timeline_panel.h"
#include "ui/views/timeline/timeline_widget.h"
#include "ui/views/verdict_banner.h"
#include "ui/views/watch_page.h"
#include "ui/views/watch_status.h"

namespace dlui {

namespace {
constexpr int kMaxRecent = 10;
}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      m_session(new DumpSession(this)),
      m_worker(new LoadWorker(this)),
      m_watcher(new DumpWatcher(this)),
      m_notifier(new DesktopNotifier(this)),
      m_watchPage(new WatchPage(this)),
      m_watchStatus(new WatchStatus(this)),
      m_issues(new IssuesModel(this)),
      m_stack(new QStackedWidget(this)),
      m_start(new StartPage(this)),
      m_loading(new LoadingPage(this)),
      m_workspace(new QWidget(this)),
      m_banner(new VerdictBanner(m_session, this)),
      m_timeline(new TimelinePanel(m_session, this)),
      m_table(new OpTablePanel(m_session, this)),
      m_tensor(new TensorPanel(m_session, this)),
      m_chain(new ChainView(m_session, this)),
      m_graph(new GraphView(m_session, this)),
      m_issuesView(new QTableView(this)),
      m_details(new DetailsPanel(m_session, m_timeline, this)) {
    setWindowTitle(tr("DumpLens"));
    setAcceptDrops(true);
    auto* ws = new QVBoxLayout(m_workspace);
    ws->setContentsMargins(4, 4, 4, 0);
    ws->addWidget(m_banner);
    ws->addWidget(m_timeline, 1);
    m_stack->addWidget(m_start);
    m_stack->addWidget(m_loading);
    m_stack->addWidget(m_workspace);
    m_stack->addWidget(m_watchPage);
    setCentralWidget(m_stack);
    // The summary is a status-bar widget, not a message: a menu's status tip only covers it for the
    // hover and it comes back (showMessage's text would be wiped for good). It may shrink to
    // nothing rather than hold the window wider than the screen.
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("statusSummary"));
    m_summary->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    statusBar()->addWidget(m_summary, 1);
    // While a folder is watched: what and how far behind (hidden otherwise).
    m_watchStatus->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    statusBar()->insertWidget(0, m_watchStatus, 3);
    m_watchStatus->hide();
    setupActions();
    setupDocks();
    setupMenus();
    setupWorker();
    setupWatcher();
    // Item views take '?' (type-ahead search) and Esc (their editor) before any shortcut sees them;
    // eventFilter gives them to the shortcuts dialog and to clearing the selection.
    for (QAbstractItemView* v : findChildren<QAbstractItemView*>()) v->installEventFilter(this);
    connect(m_start, &StartPage::openFolderRequested, this, &MainWindow::chooseFolder);
    connect(m_start, &StartPage::openDemoRequested, this, &MainWindow::openDemo);
    connect(m_start, &StartPage::openRecentRequested, this, &MainWindow::openFolder);
    QSettings s;
    if (!restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray()))
        resize(fitToScreen(this, {1500, 920}));
    refreshRecent();
    showStart();
}

MainWindow::~MainWindow() = default;

QDockWidget* MainWindow::addDock(QWidget* w, const QString& title, const QString& name, Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, this);
    d->setObjectName(name);  // needed by saveState/restoreState
    d->setWidget(w);
    addDockWidget(area, d);
    m_docks << d;
    return d;
}

void MainWindow::setupDocks() {
    m_issuesView->setModel(m_issues);
    m_issuesView->verticalHeader()->hide();
    m_issuesView->horizontalHeader()->setStretchLastSection(true);
    m_issuesView->setColumnWidth(IssuesModel::Path, 260);
    // The right-hand docks run the full height and the table sits under the timeline only, so the
    // window's minimum height is max(timeline + table, tensor + chain), not their sum.
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    QDockWidget* table =
        addDock(m_table, tr("Ops and tensors"), QStringLiteral("dock.table"), Qt::BottomDockWidgetArea);
    QDockWidget* issues = addDock(m_issuesView, tr("Issues"), QStringLiteral("dock.issues"), Qt::BottomDockWidgetArea);
    // The tab says how many there are ("Issues (9)"): unreadable files must not hide behind it.
    const auto countIssues = [this, issues] {
        const int n = m_issues->rowCount();
        issues->setWindowTitle(n ? tr("Issues (%L1)").arg(n) : tr("Issues"));
    };
    connect(m_issues, &QAbstractItemModel::modelReset, issues, countIssues);
    connect(m_issues, &QAbstractItemModel::rowsInserted, issues, countIssues);
    addDock(m_tensor, tr("Tensor"), QStringLiteral("dock.tensor"), Qt::RightDockWidgetArea);
    addDock(m_chain, tr("Overflow chain and replay"), QStringLiteral("dock.chain"), Qt::RightDockWidgetArea);
    // Selections, areas and search results, whole and sortable, as Perfetto's bottom panel (added
    // after the four above: applyDefaultDockSizes counts on their order).
    QDockWidget* details = addDock(m_details, tr("Details"), QStringLiteral("dock.details"), Qt::BottomDockWidgetArea);
    // Its captions would hold the dock (and the window) as wide as their text: let them wrap.
    for (QLabel* l : m_chain->findChildren<QLabel*>()) l->setWordWrap(true);
    tabifyDockWidget(table, details);
    tabifyDockWidget(details, issues);
    connect(m_timeline->timelineWidget(), &TimelineWidget::areaChanged, details, [this, details] {
        if (m_timeline->timelineWidget()->hasArea()) details->raise();
    });
    // Dataflow runs left to right: the graph gets the wide bottom area, a tab beside the table.
    QDockWidget* graph = addDock(m_graph, tr("Graph"), QStringLiteral("dock.graph"), Qt::BottomDockWidgetArea);
    tabifyDockWidget(issues, graph);
    table->raise();
    for (QDockWidget* d : m_docks) d->hide();  // shown with the first results
}

void MainWindow::exportReport() {
    if (!m_session->analysis() || m_session->analysis()->noData) return;
    exportReportInteractively(this, QFileInfo(m_session->dump()->path).fileName() + QStringLiteral("-report.pdf"),
                              [this](const QString& path, QString& error) { return writeReport(path, error); });
}

void MainWindow::exportTrace() { m_traceExporter->exportInteractively(m_session->dump()); }

bool MainWindow::writeReport(const QString& path, QString& error) const {
    const dl::DumpIndex* ix = m_session->index();
    const dl::AnalysisResult* an = m_session->analysis();
    if (!ix || !an) {
        error = tr("No analysed dump is open.");
        return false;
    }
    ReportRenderOptions opt;
    opt.pageSize = localePageSize();
    ReportRenderInfo info;
    return writeReportPdf(*ix, *an, opt, path, info, error);
}

void MainWindow::showWorkspace() {
    m_stack->setCurrentWidget(m_workspace);
    if (m_docksShown) return;
    m_docksShown = true;
    for (QDockWidget* d : m_docks) d->show();
    m_docks[0]->raise();
    // The default layout, whatever the saved one is: View > Reset layout returns to it.
    m_defaultState = saveState();
    if (!restoreState(QSettings().value(QStringLiteral("window/state")).toByteArray())) {
        // Deferred: dock sizes only apply once the freshly shown docks are laid out.
        QTimer::singleShot(100, this, &MainWindow::applyDefaultDockSizes);
    }
}

void MainWindow::applyDefaultDockSizes() {
    // Timeline gets the left ~60%, tensor over chain (halves: the chain's steps and the replay
    // need about what the tensor header and histogram need) on the right, table below.
    resizeDocks({m_docks[2]}, {width() * 2 / 5}, Qt::Horizontal);
    resizeDocks({m_docks[2], m_docks[3]}, {height() / 2, height() / 2}, Qt::Vertical);
    resizeDocks({m_docks[0]}, {height() * 3 / 10}, Qt::Vertical);
}

void MainWindow::resetLayout() {
    if (m_defaultState.isEmpty()) return;  // the workspace was never shown: nothing moved yet
    restoreState(m_defaultState);
    for (QDockWidget* d : m_docks) {
        d->setFloating(false);
        d->show();
    }
    m_docks[0]->raise();
    applyDefaultDockSizes();
}

void MainWindow::showStart() { m_stack->setCurrentWidget(m_start); }

void MainWindow::addRecent(const QString& path) {
    QSettings s;
    QStringList recent = s.value(QStringLiteral("recent")).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecent) recent.removeLast();
    s.setValue(QStringLiteral("recent"), recent);
    refreshRecent();
}

void MainWindow::refreshRecent() {
    const QStringList recent = QSettings().value(QStringLiteral("recent")).toStringList();
    m_start->setRecent(recent);
    m_recentMenu->clear();
    for (const QString& r : recent) m_recentMenu->addAction(r, this, [this, r] { openFolder(r); });
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::focusTimeline() {
    if (m_stack->currentWidget() == m_workspace) m_timeline->timelineWidget()->setFocus(Qt::OtherFocusReason);
}

void MainWindow::setSummary(const QString& text) {
    m_summary->setText(text);
    m_summary->setToolTip(text);  // elided when the window is narrow
}

QString MainWindow::summaryText() const { return m_summary->text(); }

void MainWindow::showShortcuts() {
    ShortcutsDialog dlg(this);
    dlg.exec();
}

bool MainWindow::eventFilter(QObject* watched, QEvent* e) {
    if (e->type() == QEvent::ShortcutOverride || e->type() == QEvent::KeyPress) {
        const auto* k = static_cast<QKeyEvent*>(e);
        if (k->key() == Qt::Key_Question && !(k->modifiers() & ~(Qt::ShiftModifier | Qt::KeypadModifier))) {
            if (e->type() == QEvent::KeyPress)
                m_shortcutsAction->trigger();  // it reached the view after all
            else
                e->ignore();  // not overridden: the shortcut may fire
            return true;
        }
        // Esc likewise (an item view keeps it for its editor): the selection goes in every view.
        if (k->key() == Qt::Key_Escape && k->modifiers() == Qt::NoModifier && e->type() == QEvent::KeyPress) {
            m_session->clearSelection();
            return true;
        }
    }
    return QMainWindow::eventFilter(watched, e);
}

void MainWindow::closeEvent(QCloseEvent* e) {
    QSettings s;
    s.setValue(QStringLiteral("window/geometry"), saveGeometry());
    if (m_docksShown) s.setValue(QStringLiteral("window/state"), saveState());
    if (m_compare) m_compare->close();
    m_worker->cancel();
    endWatch();  // its thread returns within its poll; nothing it posts reaches the closed window
    e->accept();
}

}  // namespace dlui

#include "ui/main_window.h"

#include <QAbstractItemView>
#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMimeData>
#include <QSettings>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "core/index/index_file.h"
#include "ui/compare_window.h"
#include "ui/jobs/dump_watcher.h"
#include "ui/jobs/load_worker.h"
#include "ui/jobs/trace_export.h"
#include "ui/models/compare_session.h"
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
#include "ui/views/watch_folder_dialog.h"
#include "ui/views/watch_page.h"
#include "ui/views/watch_status.h"

namespace dlui {

namespace {
constexpr int kMaxRecent = 10;
// INF/NAN mode: the inf reaches the head weight and, one iteration later, every pipeline stage,
// so the chain view shows the whole story (in saturation mode the clamped value stays on rank 3).
const char* kDemoVariant = "ms22_async_infnan";
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

void MainWindow::setupWorker() {
    connect(m_loading, &LoadingPage::cancelRequested, m_worker, &LoadWorker::cancel);
    connect(m_worker, &LoadWorker::stageChanged, m_loading, &LoadingPage::setStage);
    connect(m_worker, &LoadWorker::stageChanged, this, &MainWindow::setSummary);
    connect(m_worker, &LoadWorker::progress, m_loading, &LoadingPage::setProgress);
    // A selection the user makes while the analysis runs is kept; views re-selecting a row when
    // the new dump arrives are not the user, so every dump still opens on its origin.
    connect(m_session, &DumpSession::selectionChanged, this, [this] {
        if (m_autoSelecting) return;
        m_userPicked = true;
        m_followOrigin = false;
    });
    connect(m_worker, &LoadWorker::indexed, this, [this](LoadedDumpPtr d) {
        m_session->setDump(d);
        m_issues->setDump(d.get());
        setPanelsEnabled(true);
        showWorkspace();
        // Showing the workspace moves the focus into a table, which then picks its first row.
        m_userPicked = false;
        focusTimeline();
    });
    connect(m_worker, &LoadWorker::finished, this, [this](LoadedDumpPtr d) {
        m_issues->setDump(d.get());
        setPanelsEnabled(true);
        if (!d->ok) {
            setSummary(d->cancelled ? tr("Opening cancelled") : tr("Could not open %1: %2").arg(d->path, d->error));
            if (m_session->index())
                showWorkspace();
            else
                showStart();
            if (!d->cancelled) {
                for (QDockWidget* dock : m_docks) dock->setVisible(dock->objectName() == QLatin1String("dock.issues"));
            }
            return;
        }
        const bool keep = m_userPicked && m_session->dump() && m_session->dump()->path == d->path;
        const quint32 op = m_session->currentOp(), tensor = m_session->currentTensor();
        m_session->setDump(d);
        if (keep && op != dl::kNoIndex)
            m_session->select(op, tensor);
        else if (d->analysis && d->analysis->firstOverflow)
            m_banner->jumpToOrigin();
        // W/S/A/D/F work at once: the timeline has the keyboard, not the table the workspace
        // gave it (unless the user is typing somewhere, e.g. in the filter).
        if (!qobject_cast<QLineEdit*>(QApplication::focusWidget())) focusTimeline();
        setSummary(tr("%1: %L2 ops, %L3 tensors · indexed in %4 s (%5 shards from cache) · analysed in %6 s")
                       .arg(d->path)
                       .arg(d->index->ops.size())
                       .arg(d->index->tensors.size())
                       .arg(d->report.seconds, 0, 'f', 2)
                       .arg(d->report.shardsFromCache)
                       .arg(d->analysisSeconds, 0, 'f', 2));
        setWindowTitle(tr("DumpLens — %1").arg(QFileInfo(d->path).fileName()));
    });
}

void MainWindow::setupWatcher() {
    connect(m_watchPage, &WatchPage::stopRequested, this, &MainWindow::stopWatching);
    connect(m_watcher, &DumpWatcher::watching, this, [this](const QString& dirAbs, const QString& mode) {
        m_watchPage->setWatching(dirAbs, mode);
        m_watchStatus->setWatching(dirAbs);
    });
    connect(m_watcher, &DumpWatcher::progress, this, [this](const WatchProgress& p) {
        m_watchPage->setProgress(p);
        m_watchStatus->setProgress(p);
    });
    connect(m_watcher, &DumpWatcher::note, this, &MainWindow::setSummary);
    connect(m_watcher, &DumpWatcher::overflowFound, this, [this](const QString& text, bool moved) {
        if (m_notified && moved) return;  // once per watch, as --exec runs once
        m_notified = true;
        const QString name = QFileInfo(m_watcher->dir()).fileName();
        m_notifier->notify(tr("First fp16 overflow in %1").arg(name.isEmpty() ? m_watcher->dir() : name),
                           tr("%1\nStill watching: a file landing later may move it earlier.").arg(text));
        QApplication::alert(this);  // the taskbar entry asks for attention too
    });
    connect(m_watcher, &DumpWatcher::dumpUpdated, this, [this](LoadedDumpPtr d) {
        const bool first = m_stack->currentWidget() != m_workspace;
        // Setup files alone (execution order, graphs, configs): the watch page says so until the
        // first tensor is there, rather than an empty workspace.
        if (first && d->live && d->index->tensors.empty()) {
            m_issues->setDump(d.get());
            return;
        }
        const dl::AnalysisResult* before = m_session->analysis();
        const std::optional<dl::OverflowPoint> was = before ? before->firstOverflow : std::nullopt;
        const dl::DumpIndex* oldIndex = m_session->index();
        // The origin moved (or appeared): compare by what names it, not by index (indexes shift).
        const auto key = [](const dl::DumpIndex& ix, const dl::OverflowPoint& p) {
            const dl::OpRecord& o = ix.ops[p.op];
            return std::make_tuple(o.rank, o.iteration, ix.strings.str(o.name),
                                   p.tensor < ix.tensors.size() ? int(ix.tensors[p.tensor].slot) : -1);
        };
        const bool originChanged = d->analysis && d->analysis->firstOverflow &&
            (!was || !oldIndex || key(*oldIndex, *was) != key(*d->index, *d->analysis->firstOverflow));
        m_autoSelecting = true;
        if (m_followOrigin && originChanged) {
            m_session->setDump(d);
            m_banner->jumpToOrigin();
        } else {
            m_session->updateDump(d);  // the op the user picked stays picked
        }
        m_autoSelecting = false;
        m_issues->setDump(d.get());
        setPanelsEnabled(true);
        if (first) {
            showWorkspace();
            m_autoSelecting = true;  // the table picks its first row when it gets the focus
            focusTimeline();
            m_autoSelecting = false;
        }
        setWindowTitle(d->live ? tr("DumpLens — watching %1").arg(QFileInfo(d->path).fileName())
                               : tr("DumpLens — %1").arg(QFileInfo(d->path).fileName()));
    });
    connect(m_watcher, &DumpWatcher::stopped, this, [this](const QString& summary, const QString& error) {
        m_stopWatchAction->setEnabled(false);
        m_watchPage->setStopped(summary, error);
        m_watchStatus->setStopped(summary, error);
        if (!error.isEmpty()) {
            m_issues->addError(tr("watch"), m_watcher->dir(), error);
            setSummary(tr("Cannot watch %1: %2").arg(m_watcher->dir(), error));
        }
    });
}

void MainWindow::watchFolder(const QString& dir) {
    m_worker->cancel();
    endWatch();
    m_session->clear();
    m_issues->clear();
    setSummary({});
    m_notified = false;
    m_followOrigin = true;
    m_userPicked = false;
    const bool exists = QFileInfo(dir).isDir();
    m_watchPage->begin(dir, exists);
    m_watchStatus->begin(dir, exists);
    m_watchStatus->show();
    m_stack->setCurrentWidget(m_watchPage);
    m_stopWatchAction->setEnabled(true);
    setWindowTitle(tr("DumpLens — watching %1").arg(QFileInfo(dir).fileName()));
    m_watcher->start(dir);
}

void MainWindow::stopWatching() { m_watcher->stop(); }

bool MainWindow::isWatching() const { return m_watcher->isWatching(); }

void MainWindow::endWatch() {
    if (!m_watcher->isWatching() && m_watchStatus->isHidden()) return;
    m_watcher->cancel();
    m_watchStatus->clear();
    m_watchStatus->hide();
    m_stopWatchAction->setEnabled(false);
}

void MainWindow::chooseWatchFolder() {
    // A folder that does not exist yet can be typed (a file dialog accepts existing ones only).
    const QString dir = WatchFolderDialog::ask(this, m_watcher->dir());
    if (!dir.isEmpty()) watchFolder(dir);
}

QString MainWindow::demoRoot() {
    return QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + QStringLiteral("/demo");
}

namespace {
// A .dlx index file (by name, or by its magic whatever it is called).
bool openableIndexFile(const QFileInfo& f) {
    return f.isFile() &&
        (f.suffix().compare(QLatin1String("dlx"), Qt::CaseInsensitive) == 0 ||
         dl::isIndexFile(f.absoluteFilePath().toStdString()));
}
}  // namespace

void MainWindow::openFolder(const QString& path) {
    const QFileInfo f(path);
    if (!f.isDir() && !openableIndexFile(f)) {
        const QString why = f.exists() ? tr("neither a folder nor a .dlx index file") : tr("does not exist");
        m_issues->addError(tr("open"), path, why);
        setSummary(tr("Cannot open %1: %2").arg(path, why));
        return;
    }
    addRecent(path);
    startLoad(path, {});
}

void MainWindow::openDemo() { openDemoVariant(QLatin1String(kDemoVariant)); }

void MainWindow::openDemoVariant(const QString& variant) {
    startLoad(demoRoot() + QLatin1Char('/') + variant, demoRoot());
}

void MainWindow::chooseCompareFolder() {
    if (!m_session->analysis()) return;
    const QString dir = QFileDialog::getExistingDirectory(
        this, tr("Compare %1 with").arg(QFileInfo(m_session->dump()->path).fileName()),
        QFileInfo(m_session->dump()->path).absolutePath());
    if (!dir.isEmpty()) compareWith(dir);
}

void MainWindow::compareWith(const QString& pathB, const QString& demoDirB) {
    if (!m_session->dump() || !m_session->analysis()) return;
    if (!m_compare) m_compare = new CompareWindow(this);
    m_compare->start(m_session->dump(), pathB, demoDirB);
    m_session->setCanCompare(true);
    m_compare->show();
    m_compare->raise();
    m_compare->activateWindow();
}

void MainWindow::compareTensor(quint32 tensor) {
    // Only while the compare window holds this dump as run A: its rows are of this index.
    if (!m_compare || !m_session->dump() || !m_compare->session()->isReady()) return;
    CompareSession* cs = m_compare->session();
    if (cs->indexA() != m_session->index()) return;
    const dl::CompareOverlay* ov = cs->overlay();
    if (!ov || tensor >= ov->rowOfTensorA.size() || ov->rowOfTensorA[tensor] == dl::kNoIndex) {
        setSummary(tr("This tensor has no counterpart in run B"));
        return;
    }
    cs->selectRow(ov->rowOfTensorA[tensor]);
    m_compare->show();
    m_compare->raise();
    m_compare->activateWindow();
}

void MainWindow::compareWithDemoFix() { compareWith(demoRoot() + QStringLiteral("/bf16_fix"), demoRoot()); }

void MainWindow::setPanelsEnabled(bool on) {
    for (QDockWidget* d : m_docks)
        if (d->widget() != m_issuesView) d->widget()->setEnabled(on);
}

void MainWindow::startLoad(const QString& path, const QString& demoDir) {
    endWatch();  // another dump: the watched one's updates must not replace it
    // The old dump's panels stay visible beside the progress page, but not clickable.
    setPanelsEnabled(false);
    m_loading->begin(path);
    m_stack->setCurrentWidget(m_loading);
    m_worker->start(path, demoDir);
}

bool MainWindow::isBusy() const { return m_worker->isRunning(); }

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

void MainWindow::chooseFolder() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open dump folder"));
    if (!dir.isEmpty()) openFolder(dir);
}

void MainWindow::chooseIndexFile() {
    const QString file =
        QFileDialog::getOpenFileName(this, tr("Open index file"), {}, tr("DumpLens index (*.dlx);;All files (*)"));
    if (!file.isEmpty()) openFolder(file);
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

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
    const auto urls = e->mimeData()->urls();
    if (urls.isEmpty() || !urls.first().isLocalFile()) return;
    const QFileInfo f(urls.first().toLocalFile());
    if (f.isDir() || openableIndexFile(f)) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
    const auto urls = e->mimeData()->urls();
    if (urls.isEmpty() || !urls.first().isLocalFile()) return;
    openFolder(urls.first().toLocalFile());
    e->acceptProposedAction();
}

}  // namespace dlui

#pragma once
// The main window: switches between the start page, the progress page and the workspace (verdict
// banner + timeline, with the table, tensor, chain, graph and issues views as docks), owns the shared
// session and the load worker, and remembers layout and recent folders.
#include <QMainWindow>
#include <memory>

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QStackedWidget;
class QTableView;

namespace dlui {

class ChainView;
class DetailsPanel;
class CompareWindow;
class DesktopNotifier;
class DumpWatcher;
class DumpSession;
class GraphView;
class IssuesModel;
class LoadingPage;
class LoadWorker;
class OpTablePanel;
class StartPage;
class TensorPanel;
class TimelinePanel;
class TraceExporter;
class VerdictBanner;
class WatchPage;
class WatchStatus;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // A dump folder or a .dlx index file.
    void openFolder(const QString& path);
    void openDemo();
    // One bundled demo variant by folder name (dl::demo::demoVariants()), written on first use.
    void openDemoVariant(const QString& variant);
    bool isBusy() const;
    // File > Watch folder…, `dumplens --watch DIR`: follows a folder a job is writing (it may not
    // exist yet); the timeline, the table and the verdict grow as files land, and the first
    // overflow gives a desktop notification. Stops a watch already running.
    void watchFolder(const QString& dir);
    // File > Stop watching: the watch ends, the last files get the full analysis an Open gives.
    void stopWatching();
    bool isWatching() const;
    DumpWatcher* watcher() const { return m_watcher; }
    WatchStatus* watchStatus() const { return m_watchStatus; }
    WatchPage* watchPage() const { return m_watchPage; }
    DesktopNotifier* notifier() const { return m_notifier; }
    // The folder the bundled demo is written into (QStandardPaths::CacheLocation/demo).
    static QString demoRoot();
    // Compares the open dump (run A) with pathB in the compare window (a bundled demo variant
    // when demoDirB is set). No-op until a dump is open.
    void compareWith(const QString& pathB, const QString& demoDirB = {});
    // Compares the open demo with the bundled bf16 fix (the demo's twin run).
    void compareWithDemoFix();
    CompareWindow* compareWindow() const { return m_compare; }

    DumpSession* session() const { return m_session; }
    VerdictBanner* banner() const { return m_banner; }
    TimelinePanel* timelinePanel() const { return m_timeline; }
    OpTablePanel* opTable() const { return m_table; }
    TensorPanel* tensorPanel() const { return m_tensor; }
    ChainView* chainView() const { return m_chain; }
    DetailsPanel* detailsPanel() const { return m_details; }
    GraphView* graphView() const { return m_graph; }
    IssuesModel* issues() const { return m_issues; }
    // The status bar's standing summary (a widget, so a menu's status tip does not wipe it).
    QString summaryText() const;
    // View > Reset layout: the docks as they were laid out when the workspace was first shown.
    void resetLayout();
    QAction* resetLayoutAction() const { return m_resetLayoutAction; }

public slots:
    // File > Export report…: asks for a path, then writeReport().
    void exportReport();
    // File > Export trace…: the dump as a Chrome/Perfetto trace (ui/jobs/trace_export.h).
    void exportTrace();

public:
    // The PDF report of the open dump (the renderer `dumplens-cli report` uses); false with a reason.
    bool writeReport(const QString& path, QString& error) const;

protected:
    bool eventFilter(QObject* watched, QEvent* e) override;
    void closeEvent(QCloseEvent* e) override;
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

private:
    void setupActions();
    void setupMenus();
    void setupDocks();
    void setupWorker();
    void setupWatcher();
    void chooseWatchFolder();
    void endWatch();  // drops the watch without its final analysis (another dump is opened, the window closes)
    QDockWidget* addDock(QWidget* w, const QString& title, const QString& name, Qt::DockWidgetArea area);
    void startLoad(const QString& path, const QString& demoDir);
    void showWorkspace();
    void setPanelsEnabled(bool on);
    void showStart();
    void addRecent(const QString& path);
    void refreshRecent();
    void chooseFolder();
    void chooseIndexFile();
    void setSummary(const QString& text);  // the status bar's standing line
    void focusTimeline();                  // the keyboard to the timeline (W/S/A/D/F) once a dump shows
    void chooseCompareFolder();
    void showShortcuts();
    void applyDefaultDockSizes();
    void compareTensor(quint32 tensor);

    DumpSession* m_session;
    LoadWorker* m_worker;
    DumpWatcher* m_watcher;
    DesktopNotifier* m_notifier;
    WatchPage* m_watchPage;
    WatchStatus* m_watchStatus;
    QAction* m_watchAction = nullptr;
    QAction* m_stopWatchAction = nullptr;
    bool m_notified = false;       // this watch's first overflow was notified
    bool m_followOrigin = true;    // a watch selects each new first overflow until the user picks an op
    bool m_autoSelecting = false;  // the selection being made is the app's, not the user's
    IssuesModel* m_issues;
    QStackedWidget* m_stack;
    StartPage* m_start;
    LoadingPage* m_loading;
    QWidget* m_workspace;
    VerdictBanner* m_banner;
    TimelinePanel* m_timeline;
    OpTablePanel* m_table;
    TensorPanel* m_tensor;
    ChainView* m_chain;
    GraphView* m_graph;
    QTableView* m_issuesView;
    DetailsPanel* m_details;
    QList<QDockWidget*> m_docks;
    bool m_docksShown = false;
    bool m_userPicked = false;  // a selection made in the dump being analysed
    QMenu* m_recentMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QAction* m_openAction = nullptr;
    QAction* m_openIndexAction = nullptr;
    QAction* m_clearAction = nullptr;
    QLabel* m_summary = nullptr;
    QAction* m_compareAction = nullptr;
    QAction* m_compareFixAction = nullptr;
    CompareWindow* m_compare = nullptr;
    QAction* m_exportAction = nullptr;
    QAction* m_exportTraceAction = nullptr;
    std::unique_ptr<TraceExporter> m_traceExporter;
    QAction* m_jumpAction = nullptr;
    QAction* m_filterAction = nullptr;
    QAction* m_shortcutsAction = nullptr;
    QAction* m_demoAction = nullptr;
    QAction* m_quitAction = nullptr;
    QAction* m_resetLayoutAction = nullptr;
    QAction* m_nextMatchAction = nullptr;
    QAction* m_prevMatchAction = nullptr;
    QByteArray m_defaultState;  // saveState() of the first layout, before a saved one is restored
};

}  // namespace dlui

// How the main window opens a dump: a folder, an index file, a drop, the demo, a second run to
// compare with, and the load worker's results on their way into the session and the views.
#include "ui/main_window.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLineEdit>
#include <QMimeData>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QTableView>

#include "core/index/index_file.h"
#include "ui/compare_window.h"
#include "ui/jobs/load_worker.h"
#include "ui/models/compare_session.h"
#include "ui/models/dump_session.h"
#include "ui/models/issues_model.h"
#include "ui/views/chain_view.h"
#include "ui/views/graph/graph_view.h"
#include "ui/views/loading_page.h"
#include "ui/views/op_table_panel.h"
#include "ui/views/tensor_panel.h"
#include "ui/views/timeline/details_panel.h"
#include "ui/views/timeline/timeline_panel.h"
#include "ui/views/verdict_banner.h"
#include "ui/views/watch_folder_dialog.h"

namespace dlui {

namespace {
// INF/NAN mode: the inf reaches the head weight and, one iteration later, every pipeline stage,
// so the chain view shows the whole story (in saturation mode the clamped value stays on rank 3).
const char* kDemoVariant = "ms22_async_infnan";
}  // namespace

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

void MainWindow::chooseFolder() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open dump folder"));
    if (!dir.isEmpty()) openFolder(dir);
}

void MainWindow::chooseIndexFile() {
    const QString file =
        QFileDialog::getOpenFileName(this, tr("Open index file"), {}, tr("DumpLens index (*.dlx);;All files (*)"));
    if (!file.isEmpty()) openFolder(file);
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

// The main window's watched folder (File > Watch folder…, --watch): the watcher's updates into the
// session, the watch page and the status bar, and the end of a watch.
#include "ui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QFileInfo>
#include <QStackedWidget>

#include "ui/compare_window.h"
#include "ui/jobs/dump_watcher.h"
#include "ui/jobs/load_worker.h"
#include "ui/models/dump_session.h"
#include "ui/models/issues_model.h"
#include "ui/notify/desktop_notifier.h"
#include "ui/views/chain_view.h"
#include "ui/views/graph/graph_view.h"
#include "ui/views/op_table_panel.h"
#include "ui/views/tensor_panel.h"
#include "ui/views/timeline/details_panel.h"
#include "ui/views/timeline/timeline_panel.h"
#include "ui/views/verdict_banner.h"
#include "ui/views/watch_folder_dialog.h"
#include "ui/views/watch_page.h"
#include "ui/views/watch_status.h"

namespace dlui {

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

}  // namespace dlui

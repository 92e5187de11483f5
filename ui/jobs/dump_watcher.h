#pragma once
// Watches a dump folder while a job writes it (File > Watch folder…, `dumplens --watch DIR`):
// core/watch's watchDump on a worker thread, its events as queued signals, and the index of the
// files complete so far, analysed, as a LoadedDump the session shows.
//
// The watcher reads each file once (core/watch/incremental_index.h) and hands the merged index at
// most once per snapshotIntervalMs, and only after files changed it; nothing is read again here.
// Each handed index is analysed as the watcher analyses (no replay, no graph IR: both would read
// files again on every update) on a second worker: one at a time, a newer index waiting replaces
// an older one, so a slow analysis is never restarted into starvation. Stopping gives the last
// index the full analysis an Open gives (replay, graph IR), as a dump no longer live.
// While nothing lands, nothing here runs: no timer, no analysis.
#include <QObject>
#include <QString>
#include <memory>

#include "ui/jobs/loaded_dump.h"

namespace dlui {

class BackgroundTask;

// One "progress" event of the watch (dump_watch.h): how far the index got, how far behind.
struct WatchProgress {
    quint64 filesIndexed = 0;  // complete files in the index
    quint64 filesBeingWritten = 0;
    quint64 tensors = 0, ops = 0;
    qint64 behindMs = 0;        // how long the oldest file being written has waited
    QString ranks, iterations;  // "0-3", "none"
};

struct WatchSettings {
    int settleMs = 500;
    int snapshotIntervalMs = 500;  // "at most a few times a second"
    int progressIntervalMs = 500;
    bool useInotify = true;
};

class DumpWatcher : public QObject {
    Q_OBJECT
public:
    explicit DumpWatcher(QObject* parent = nullptr);
    ~DumpWatcher() override;

    // Starts watching `dir` (which may not exist yet); a watch already running is stopped first.
    void start(const QString& dir, const WatchSettings& settings = {});
    // Asks the watch to stop; stopped() follows, then the final dumpUpdated (if anything landed).
    void stop();
    // Stops and drops the watch at once: nothing more is emitted for it (another dump is opened,
    // the window closes). Its thread returns by itself within its poll.
    void cancel();
    bool isWatching() const { return m_watching; }
    QString dir() const { return m_dir; }
    // The folder exists and is followed (watching() was emitted).
    bool folderFound() const { return m_found; }

signals:
    void waitingForFolder(const QString& dir);
    void watching(const QString& dirAbs, const QString& mode);  // "inotify" or "rescan"
    void progress(const dlui::WatchProgress& p);
    // The watcher's first overflow (again when a later file moved it); `text` is its readable line.
    void overflowFound(const QString& text, bool moved);
    void warning(const QString& path, const QString& reason, bool unreadable);
    void note(const QString& text);
    // Each analysed index: live while the watch runs, the full analysis after stopped().
    void dumpUpdated(dlui::LoadedDumpPtr dump);
    // The watch ended: its summary ("clean so far: …" or the overflow); error when the folder is
    // not usable (e.g. it is a file).
    void stopped(const QString& summary, const QString& error);

private:
    void onSnapshot(std::shared_ptr<const dl::DumpIndex> index);
    void analyseNext();

    BackgroundTask* m_watch;
    BackgroundTask* m_analysis;
    QString m_dir;
    quint64 m_generation = 0;  // of the current watch: posts of an older one are dropped
    bool m_watching = false, m_found = false, m_analysing = false, m_final = false;
    std::shared_ptr<const dl::DumpIndex> m_pending;  // handed, not analysed yet
    std::shared_ptr<const dl::DumpIndex> m_last;     // the newest handed
};

}  // namespace dlui

Q_DECLARE_METATYPE(dlui::WatchProgress)

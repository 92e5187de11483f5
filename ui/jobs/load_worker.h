#pragma once
// Runs indexing and then the overflow analysis of the main dump on a worker thread. Progress and
// results come back as queued signals; Cancel requests a stop through the indexer's stop_token.
#include <QObject>

#include "ui/jobs/loaded_dump.h"

namespace dlui {

class BackgroundTask;

class LoadWorker : public QObject {
    Q_OBJECT
public:
    explicit LoadWorker(QObject* parent = nullptr);

    // Opens `path`. When demoDir is set, the bundled demo is first written into demoDir (if it is
    // not there yet) and `path` is a variant inside it.
    void start(const QString& path, const QString& demoDir = {});
    void cancel();
    bool isRunning() const;

signals:
    void stageChanged(const QString& text);
    void progress(quint64 filesDone, quint64 filesTotal, quint64 bytesDone, quint64 bytesTotal,
                  int phase);                   // dl::ProgressPhase
    void indexed(dlui::LoadedDumpPtr partial);  // index ready, analysis still running
    void finished(dlui::LoadedDumpPtr result);  // everything (or an error / cancellation)

private:
    BackgroundTask* m_task;
};

}  // namespace dlui

#pragma once
// Runs indexing and then the overflow analysis on a worker thread. Progress and results come back
// as queued signals; Cancel requests a stop through the indexer's std::stop_token. Never blocks
// the GUI thread except to join a thread that has already been asked to stop.
#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QThread>
#include <atomic>
#include <stop_token>

#include "ui/util/loaded_dump.h"

namespace dlui {

class LoadWorker : public QObject {
    Q_OBJECT
public:
    explicit LoadWorker(QObject* parent = nullptr);
    ~LoadWorker() override;

    // Opens `path`. When demoDir is set, the bundled demo is first written into demoDir (if it is
    // not there yet) and `path` is a variant inside it.
    void start(const QString& path, const QString& demoDir = {});
    void cancel();
    bool isRunning() const { return m_thread && m_thread->isRunning(); }

signals:
    void stageChanged(const QString& text);
    void progress(quint64 filesDone, quint64 filesTotal, quint64 bytesDone, quint64 bytesTotal);
    void indexed(dlui::LoadedDumpPtr partial);   // index ready, analysis still running
    void finished(dlui::LoadedDumpPtr result);   // everything (or an error / cancellation)

private:
    void run(const QString& path, const QString& demoDir, std::stop_token stop, quint64 generation);
    void stopAndJoin();

    QThread* m_thread = nullptr;
    std::stop_source m_stop;
    std::atomic<quint64> m_generation{0};
};

}  // namespace dlui

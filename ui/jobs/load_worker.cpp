#include "ui/jobs/load_worker.h"

#include "ui/jobs/background_task.h"
#include "ui/jobs/dump_loader.h"

namespace dlui {

LoadWorker::LoadWorker(QObject* parent) : QObject(parent), m_task(new BackgroundTask(this)) {}

void LoadWorker::cancel() { m_task->cancel(); }

bool LoadWorker::isRunning() const { return m_task->isRunning(); }

void LoadWorker::start(const QString& path, const QString& demoDir) {
    m_task->start([this, path, demoDir](std::stop_token stop, const BackgroundTask::Post& post) {
        DumpLoadCallbacks cb;
        cb.stage = [this, post](const QString& s) { post([this, s] { emit stageChanged(s); }); };
        cb.progress = [this, post](const dl::Progress& p) {
            post([this, p] { emit progress(p.filesDone, p.filesTotal, p.bytesDone, p.bytesTotal, int(p.phase)); });
        };
        cb.indexed = [this, post](LoadedDumpPtr partial) { post([this, partial] { emit indexed(partial); }); };
        LoadedDumpPtr result = loadDump(path, demoDir, stop, cb);
        post([this, result] { emit finished(result); });
    });
}

}  // namespace dlui

#include "ui/jobs/compare_worker.h"

#include "ui/jobs/background_task.h"
#include "ui/jobs/dump_loader.h"

namespace dlui {

CompareWorker::CompareWorker(QObject* parent) : QObject(parent), m_task(new BackgroundTask(this)) {}

void CompareWorker::cancel() { m_task->cancel(); }

bool CompareWorker::isRunning() const { return m_task->isRunning(); }

void CompareWorker::start(LoadedDumpPtr a, const QString& pathB, const QString& demoDirB,
                          const dl::CompareOptions& options) {
    m_task->start([this, a, pathB, demoDirB, options](std::stop_token stop, const BackgroundTask::Post& post) {
        auto result = std::make_shared<ComparedRuns>();
        result->a = a;
        const auto finish = [this, post, result] { post([this, result] { emit finished(result); }); };
        DumpLoadCallbacks cb;
        cb.stage = [this, post](const QString& s) { post([this, s] { emit stageChanged(tr("Run B: %1").arg(s)); }); };
        cb.progress = [this, post](const dl::Progress& p) {
            post([this, p] { emit progress(p.filesDone, p.filesTotal, p.bytesDone, p.bytesTotal, int(p.phase)); });
        };
        result->b = loadDump(pathB, demoDirB, stop, cb);
        if (!a || !a->index) {
            result->error = tr("run A is not open");
        } else if (!result->b->ok) {
            result->cancelled = result->b->cancelled;
            result->error = tr("run B (%1): %2").arg(pathB, result->b->error);
        } else {
            post([this] { emit stageChanged(tr("Aligning and comparing the two runs…")); });
            dl::CompareOptions opt = options;
            opt.stop = stop;
            auto c = std::make_shared<dl::RunComparison>(dl::compareRuns(*a->index, *result->b->index, opt));
            result->cancelled = c->cancelled;
            result->ok = !c->cancelled;
            if (c->cancelled)
                result->error = tr("Cancelled.");
            else
                result->comparison = std::move(c);
        }
        finish();
    });
}

}  // namespace dlui

#include "ui/util/load_worker.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMetaObject>
#include <chrono>

#include "core/analysis/overflow_analyzer.h"
#include "core/demo/demo_dumps.h"

namespace dlui {

namespace {

// Writes the one demo variant the app opens (the variant folder is named after its options set).
bool ensureDemoVariant(const QString& variantPath, QString& error) {
    if (QFileInfo::exists(variantPath + QStringLiteral("/.dumplens_demo_complete"))) return true;
    const std::string name = QFileInfo(variantPath).fileName().toStdString();
    for (const auto& [variant, options] : dl::demo::demoVariants()) {
        if (variant != name) continue;
        dl::demo::DemoVariantInfo info;
        std::string err;
        if (!dl::demo::writeDemoVariant(variantPath.toStdString(), options, info, err)) {
            error = QStringLiteral("could not write the demo dump into %1: %2").arg(variantPath, QString::fromStdString(err));
            return false;
        }
        QFile marker(variantPath + QStringLiteral("/.dumplens_demo_complete"));
        if (marker.open(QIODevice::WriteOnly)) marker.write("ok\n");
        return true;
    }
    error = QStringLiteral("no bundled demo variant named '%1'").arg(QString::fromStdString(name));
    return false;
}

}  // namespace

LoadWorker::LoadWorker(QObject* parent) : QObject(parent) {}

LoadWorker::~LoadWorker() { stopAndJoin(); }

void LoadWorker::stopAndJoin() {
    if (!m_thread) return;
    m_stop.request_stop();
    m_thread->wait();
    delete m_thread;
    m_thread = nullptr;
}

void LoadWorker::start(const QString& path, const QString& demoDir) {
    stopAndJoin();
    m_stop = std::stop_source();
    const quint64 gen = ++m_generation;
    std::stop_token token = m_stop.get_token();
    m_thread = QThread::create([this, path, demoDir, token, gen] { run(path, demoDir, token, gen); });
    m_thread->start();
}

void LoadWorker::cancel() { m_stop.request_stop(); }

void LoadWorker::run(const QString& path, const QString& demoDir, std::stop_token stop, quint64 gen) {
    // Everything crosses back to the GUI thread queued, and is dropped if a newer load started.
    auto post = [this, gen](auto fn) {
        QMetaObject::invokeMethod(this, [this, gen, fn] { if (gen == m_generation) fn(); }, Qt::QueuedConnection);
    };
    auto result = std::make_shared<LoadedDump>();
    result->path = path;
    if (!demoDir.isEmpty()) {
        post([this] { emit stageChanged(tr("Writing the bundled demo dump…")); });
        if (!ensureDemoVariant(path, result->error)) {
            post([this, result] { emit finished(result); });
            return;
        }
    }
    post([this] { emit stageChanged(tr("Indexing…")); });
    // Throttle progress to ~20 updates a second: the indexer calls back per file.
    auto last = std::make_shared<std::atomic<std::int64_t>>(0);
    dl::IndexOptions opt;
    opt.stop = stop;
    opt.progress = [this, post, last](const dl::Progress& p) {
        const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now().time_since_epoch()).count();
        if (now - last->load() < 50 && p.filesDone != p.filesTotal) return;
        last->store(now);
        post([this, p] { emit progress(p.filesDone, p.filesTotal, p.bytesDone, p.bytesTotal); });
    };
    auto index = std::make_shared<dl::DumpIndex>();
    std::string err;
    const bool ok = dl::indexDump(path.toStdString(), opt, *index, result->report, err);
    result->cancelled = result->report.cancelled || stop.stop_requested();
    if (!ok || result->cancelled) {
        result->error = result->cancelled ? tr("Cancelled.") : QString::fromStdString(err);
        post([this, result] { emit finished(result); });
        return;
    }
    result->ok = true;
    result->index = index;
    result->states = std::make_shared<dl::OpStates>(dl::computeOpStates(*index, nullptr));
    auto partial = std::make_shared<LoadedDump>(*result);
    post([this, partial] { emit indexed(partial); emit stageChanged(tr("Analysing…")); });

    QElapsedTimer timer;
    timer.start();
    auto analysis = std::make_shared<dl::AnalysisResult>(dl::analyze(*index));
    result->analysisSeconds = timer.elapsed() / 1000.0;
    result->analysis = analysis;
    result->states = std::make_shared<dl::OpStates>(dl::computeOpStates(*index, analysis.get(), analysis->nearLimitThreshold));
    post([this, result] { emit finished(result); });
}

}  // namespace dlui

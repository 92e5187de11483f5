#include "ui/jobs/dump_loader.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <memory>

#include "core/analysis/overflow_analyzer.h"
#include "core/demo/demo_dumps.h"
#include "core/index/dump_indexer.h"

namespace dlui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("DumpLoader", text); }

// Writes the one demo variant asked for (the variant folder is named after its options set).
bool ensureDemoVariant(const QString& variantPath, QString& error) {
    if (QFileInfo::exists(variantPath + QStringLiteral("/.dumplens_demo_complete"))) return true;
    const std::string name = QFileInfo(variantPath).fileName().toStdString();
    for (const auto& [variant, options] : dl::demo::demoVariants()) {
        if (variant != name) continue;
        dl::demo::DemoVariantInfo info;
        std::string err;
        if (!dl::demo::writeDemoVariant(variantPath.toStdString(), options, info, err)) {
            error = QStringLiteral("could not write the demo dump into %1: %2")
                        .arg(variantPath, QString::fromStdString(err));
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

LoadedDumpPtr loadDump(const QString& path, const QString& demoDir, std::stop_token stop, const DumpLoadCallbacks& cb) {
    auto result = std::make_shared<LoadedDump>();
    result->path = path;
    const auto stage = [&](const QString& s) {
        if (cb.stage) cb.stage(s);
    };
    if (!demoDir.isEmpty()) {
        stage(tr("Writing the bundled demo dump…"));
        if (!ensureDemoVariant(path, result->error)) return result;
    }
    stage(tr("Indexing…"));
    dl::IndexOptions opt;
    opt.stop = stop;
    opt.progress = cb.progress;  // the indexer sends ~20 updates a second and the last one
    auto index = std::make_shared<dl::DumpIndex>();
    std::string err;
    const bool ok = dl::indexDump(path.toStdString(), opt, *index, result->report, err);
    result->cancelled = result->report.cancelled || stop.stop_requested();
    if (!ok || result->cancelled) {
        result->error = result->cancelled ? tr("Cancelled.") : QString::fromStdString(err);
        return result;
    }
    result->ok = true;
    result->index = index;
    // Posted at once with empty (pending) states: the table shows the records while the analysis
    // runs; the states come with the verdict (computing index-only ones first cost 0.4 CPU s at 10M
    // tensors before anything was on screen, and were replaced a second later).
    result->states = std::make_shared<dl::OpStates>();
    if (cb.indexed) cb.indexed(std::make_shared<LoadedDump>(*result));
    stage(tr("Analysing…"));
    if (!analyseDump(*result, stop, {})) {  // the index was posted already (cb.indexed); a half verdict never is
        result->ok = false;
        result->index.reset();
        result->states.reset();
        result->cancelled = true;
        result->error = tr("Cancelled.");
    }
    return result;
}

bool analyseDump(LoadedDump& dump, std::stop_token stop, dl::AnalysisOptions options) {
    QElapsedTimer timer;
    timer.start();
    auto dataflow = std::make_shared<dl::RankDataflow>(*dump.index);
    options.stop = stop;
    options.dataflow = dataflow.get();
    auto analysis = std::make_shared<dl::AnalysisResult>(dl::analyze(*dump.index, options));
    if (analysis->cancelled) return false;
    dump.analysisSeconds = timer.elapsed() / 1000.0;
    dump.analysis = analysis;
    dump.dataflow = std::move(dataflow);
    dump.states =
        std::make_shared<dl::OpStates>(dl::computeOpStates(*dump.index, analysis.get(), analysis->nearLimitThreshold));
    return true;
}

}  // namespace dlui

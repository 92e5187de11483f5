#include "app/cli/cli_commands.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "app/cli/terminal_progress.h"
#include "core/index/dump_indexer.h"
#include "core/index/index_summary.h"
#include "core/index/tensor_inspection.h"

namespace dlcli {

void bindIndexOptions(CLI::App* sub, IndexArgs& args) {
    sub->add_option("DIR", args.dir, "dump path, a rank_N folder or an iteration folder")->required();
    sub->add_flag("--json", args.json, "print one JSON object instead of text");
    sub->add_option("--cache-dir", args.cacheDir, "index cache folder (default: ~/.cache/dumplens)");
    sub->add_flag("--no-cache", args.noCache, "neither read nor write the index cache");
    sub->add_option("--threads", args.threads, "worker threads (default: all cores)");
}

bool runIndex(const IndexArgs& args, dl::DumpIndex& index, dl::IndexReport& report) {
    dl::IndexOptions opt;
    opt.threads = args.threads;
    opt.useCache = !args.noCache;
    opt.cacheDir = args.cacheDir;
    TerminalProgress bar;
    if (!args.json && bar.enabled()) opt.progress = [&bar](const dl::Progress& p) { bar.update(p); };
    std::string error;
    const bool ok = dl::indexDump(args.dir, opt, index, report, error);
    bar.finish();
    if (!ok) std::cerr << "dumplens-cli: " << error << "\n";
    return ok;
}

void Commands::registerAll(CLI::App& app) {
    addIndex(app);
    addInspect(app);
    addDemo(app);
    addAnalyze(app);
    addCompare(app);
}

void Commands::addIndex(CLI::App& app) {
    auto* sub = app.add_subcommand("index", "index a dump folder and print a summary");
    bindIndexOptions(sub, m_index);
    sub->callback([this] {
        dl::DumpIndex index;
        dl::IndexReport report;
        if (!runIndex(m_index, index, report)) {
            m_exit = 2;
            return;
        }
        std::cout << (m_index.json ? dl::indexSummaryJson(index, report) + "\n" : dl::indexSummaryText(index, report));
        if (index.tensors.empty()) {
            std::cerr << "dumplens-cli: no tensors or statistics found under " << m_index.dir << "\n";
            m_exit = 1;
        }
    });
}

void Commands::addInspect(CLI::App& app) {
    auto* sub = app.add_subcommand("inspect", "print one tensor file's header, statistics and histogram");
    sub->add_option("FILE", m_inspectFile, ".npy or <=1.2 .bin tensor file")->required();
    sub->add_flag("--json", m_inspectJson, "print JSON");
    sub->callback([this] {
        dl::TensorInspection t;
        std::string error;
        if (!dl::inspectTensorFile(m_inspectFile, t, error)) {
            std::cerr << "dumplens-cli: " << error << "\n";
            m_exit = 2;
            return;
        }
        std::cout << (m_inspectJson ? dl::inspectionJson(t) + "\n" : dl::inspectionText(t));
    });
}

}  // namespace dlcli

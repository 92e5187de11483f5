#include "app/cli/cli_commands.h"

#include <algorithm>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "app/cli/terminal_progress.h"
#include "core/distributed/index_merge.h"
#include "core/index/dump_indexer.h"
#include "core/index/index_file.h"
#include "core/index/index_summary.h"
#include "core/index/output_guard.h"
#include "core/index/tensor_inspection.h"
#ifdef DUMPLENS_HAVE_MPI
#include "core/distributed/mpi/mpi_index_job.h"
#endif

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
    // A cache that cannot be written (a full disk, a read-only place) is said once, not per shard.
    std::size_t unwritten = 0;
    const std::string* first = nullptr;
    for (const std::string& n : report.cacheNotes)
        if (n.find("not written") != std::string::npos && !unwritten++) first = &n;
    if (first)
        std::cerr << "dumplens-cli: " << *first
                  << (unwritten > 1 ? " (and " + std::to_string(unwritten - 1) + " more)" : std::string()) << "\n";
    return ok;
}

bool refuseOutputInsideDump(const std::string& output, const std::vector<std::string>& dumps) {
    if (output.empty() || output == "-") return false;
    const std::string why = dl::outputInsideDump(output, dumps);
    if (why.empty()) return false;
    std::cerr << "dumplens-cli: " << why << "\n";
    return true;
}

bool refuseOutputInsideIndexedDumps(const std::string& output, std::initializer_list<const dl::DumpIndex*> indexes) {
    std::vector<std::string> dumps;
    for (const dl::DumpIndex* index : indexes)
        for (std::string& r : dl::dumpRootsOf(*index)) dumps.push_back(std::move(r));
    return refuseOutputInsideDump(output, dumps);
}

bool refuseNothingReadable(const dl::DumpIndex& index, const std::string& dir, const char* what) {
    if (!dl::holdsNothingReadable(index)) return false;
    std::cerr << "dumplens-cli: No data: nothing readable in " << dir << "; " << what << "\n";
    for (std::size_t i = 0; i < index.warnings.size() && i < 10; ++i)
        std::cerr << "  " << index.warnings[i].path << ": " << index.warnings[i].reason << "\n";
    return true;
}

std::string helpFooter(std::span<const HelpItem> exitStatuses) {
    std::string text = "Exit status:\n";
    for (const HelpItem& s : exitStatuses) text += std::string("  ") + s.name + "  " + s.text + "\n";
    text += "Environment:\n";
    for (const HelpItem& e : kEnvironment) text += std::string("  ") + e.name + "  " + e.text + "\n";
    return text;
}

void Commands::registerAll(CLI::App& app) {
    addIndex(app);
    addInspect(app);
    addDemo(app);
    addAnalyze(app);
    addCompare(app);
#ifdef DUMPLENS_HAVE_UI
    addReport(app);
#endif
    addMerge(app);
    addExportTrace(app);
    addGraph(app);
    addWatch(app);
    const std::string footer = helpFooter();
    for (CLI::App* sub : app.get_subcommands(nullptr)) sub->footer(footer);
    app.get_subcommand("watch")->footer(helpFooter(kWatchExitStatuses));
}

void Commands::addIndex(CLI::App& app) {
    auto* sub = app.add_subcommand("index", "index a dump folder and print a summary");
    bindIndexOptions(sub, m_index);
    sub->add_option("-o,--output", m_indexOutput, "also write the index to FILE (.dlx), portable to other machines");
    sub->add_flag("--mpi", m_indexMpi, "distributed: run under mpirun/srun, process 0 writes --output");
    sub->add_option("--mpi-timeout", m_mpiTimeout, "seconds process 0 waits for the others (default 3600)");
    sub->callback([this] {
        if (refuseOutputInsideDump(m_indexOutput, {m_index.dir})) {
            m_exit = kExitFailed;
            return;
        }
        if (m_indexMpi) {
            m_exit = runMpiIndex();
            return;
        }
        dl::DumpIndex index;
        dl::IndexReport report;
        if (!runIndex(m_index, index, report)) {
            m_exit = kExitFailed;
            return;
        }
        std::cout << (m_index.json ? dl::indexSummaryJson(index, report) + "\n" : dl::indexSummaryText(index, report));
        // The summary still lists what was found and why it is unreadable; the exit status says no.
        if (refuseNothingReadable(index, m_index.dir, m_indexOutput.empty() ? "nothing indexed" : "no index written") ||
            refuseOutputInsideIndexedDumps(m_indexOutput, {&index})) {
            m_exit = kExitFailed;
            return;
        }
        std::string error;
        if (!m_indexOutput.empty() && !dl::saveIndexFile(m_indexOutput, index, error)) {
            std::cerr << "dumplens-cli: " << error << "\n";
            m_exit = kExitFailed;
        }
    });
}

int Commands::runMpiIndex() {
#ifdef DUMPLENS_HAVE_MPI
    if (m_indexOutput.empty()) {
        std::cerr << "dumplens-cli: --mpi needs -o FILE\n";
        return kExitFailed;
    }
    std::error_code ec;
    dl::mpi::MpiIndexOptions opt;
    opt.root = std::filesystem::weakly_canonical(std::filesystem::absolute(m_index.dir, ec), ec).string();
    opt.output = m_indexOutput;
    opt.threads = m_index.threads;
    opt.useCache = !m_index.noCache;
    opt.timeoutSeconds = m_mpiTimeout;
    return dl::mpi::runMpiIndexJob(opt);
#else
    std::cerr << "dumplens-cli: built without MPI (install libopenmpi-dev and rebuild)\n";
    return 2;
#endif
}

void Commands::addMerge(CLI::App& app) {
    auto* sub = app.add_subcommand("merge", "merge index shards (.dlx files from any launcher) into one");
    sub->add_option("SHARD", m_mergeInputs, "index files")->required();
    sub->add_option("-o,--output", m_mergeOutput, "merged index file")->required();
    sub->callback([this] {
        // Overwriting a shard it reads, or writing into the dump a shard was made of, is refused.
        std::vector<std::string> dumps = m_mergeInputs;
        dl::DumpIndex merged;
        std::string error;
        if (refuseOutputInsideDump(m_mergeOutput, dumps)) {
            m_exit = kExitFailed;
            return;
        }
        std::vector<std::string> inputDumps;
        if (!dl::mergeIndexFiles(m_mergeInputs, merged, error, &inputDumps)) {
            std::cerr << "dumplens-cli: " << error << "\n";
            m_exit = kExitFailed;
            return;
        }
        for (std::string& r : inputDumps) dumps.push_back(std::move(r));  // every input's dump, skipped ones too
        if (refuseOutputInsideDump(m_mergeOutput, dumps) ||
            refuseNothingReadable(merged, "the merged shards", "no index written")) {
            m_exit = kExitFailed;
            return;
        }
        if (!dl::saveIndexFile(m_mergeOutput, merged, error)) {
            std::cerr << "dumplens-cli: " << error << "\n";
            m_exit = kExitFailed;
            return;
        }
        std::size_t rejected = 0;  // unreadable or duplicate inputs are warnings of the merged index
        for (const auto& w : merged.warnings)
            rejected += std::find(m_mergeInputs.begin(), m_mergeInputs.end(), w.path) != m_mergeInputs.end() &&
                (w.reason.starts_with("index file not merged") || w.reason.starts_with("holds a rank folder"));
        std::cout << "Merged " << m_mergeInputs.size() - std::min(rejected, m_mergeInputs.size()) << " of "
                  << m_mergeInputs.size() << " file(s): " << merged.ranks.size() << " ranks, " << merged.ops.size()
                  << " ops, " << merged.tensors.size() << " tensors into " << m_mergeOutput << "\n";
        for (const auto& w : merged.warnings)
            if (w.reason.find("not merged") != std::string::npos || w.reason.find("skipped") != std::string::npos)
                std::cout << "  " << w.path << ": " << w.reason << "\n";
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
            m_exit = kExitFailed;
            return;
        }
        std::cout << (m_inspectJson ? dl::inspectionJson(t) + "\n" : dl::inspectionText(t));
    });
}

}  // namespace dlcli

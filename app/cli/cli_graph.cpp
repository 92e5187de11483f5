// The `graph` sub-command: the neighbourhood of an op in its rank's graph IR.
#include <iostream>
#include <tuple>

#include "app/cli/cli_commands.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/analysis/rank_dataflow.h"
#include "core/index/dump_indexer.h"
#include "core/query/op_graph.h"
#include "core/query/op_state.h"

namespace dlcli {

void Commands::addGraph(CLI::App& app) {
    auto* sub =
        app.add_subcommand("graph", "the producers and consumers of an op in the graph IR (rank_N/graphs/*.ir)");
    GraphArgs& a = m_graph;
    sub->add_option("DIR", a.index.dir, "dump path, a rank_N folder or an iteration folder")->required();
    sub->add_option("--op", a.op, "the op: its name as in the dump or its full scoped name")->required();
    sub->add_option("--hops", a.hops, "producers and consumers up to N edges away (default 2)")
        ->check(CLI::Range(0, 1000));
    sub->add_option("--format", a.format, "json (default) or dot (Graphviz)")->check(CLI::IsMember({"json", "dot"}));
    sub->add_option("--rank", a.rank, "the op's rank (default: the origin's rank, else the lowest that has it)");
    sub->add_option("--iteration", a.iteration, "the op's iteration (default: the first bad one, else the lowest)");
    sub->add_option("--cache-dir", a.index.cacheDir, "index cache folder (default: ~/.cache/dumplens)");
    sub->add_flag("--no-cache", a.index.noCache, "neither read nor write the index cache");
    sub->callback([this] { m_exit = runGraph(); });
}

int Commands::runGraph() {
    const GraphArgs& a = m_graph;
    IndexArgs quiet = a.index;
    quiet.json = true;  // no progress bar on the output a script reads
    dl::DumpIndex index;
    dl::IndexReport report;
    if (!runIndex(quiet, index, report)) return kExitFailed;
    if (refuseNothingReadable(index, a.index.dir, "no graph")) return kExitFailed;
    dl::RankDataflow flow(index);  // read once: by the analysis's dataflow hops, then by the graph
    dl::AnalysisOptions opt;
    opt.replay = false;
    opt.dataflow = &flow;
    const dl::AnalysisResult analysis = dl::analyze(index, opt);
    // The op: by name or scope; the rank and iteration asked, else the origin's, else the lowest.
    std::uint32_t best = dl::kNoIndex;
    const auto score = [&](std::uint32_t i) {
        const dl::OpRecord& o = index.ops[i];
        const bool originRank = analysis.firstOverflow && analysis.firstOverflow->rank == o.rank;
        const bool badIteration = analysis.firstBadIteration && *analysis.firstBadIteration == o.iteration;
        return std::tuple{!originRank, !badIteration, o.rank, o.iteration, i};
    };
    for (std::uint32_t i = 0; i < index.ops.size(); ++i) {
        const dl::OpRecord& o = index.ops[i];
        if (index.strings.view(o.name) != a.op && (!o.scope || index.strings.view(o.scope) != a.op)) continue;
        if (a.rank >= 0 && o.rank != std::uint32_t(a.rank)) continue;
        if (a.iteration >= 0 && o.iteration != std::uint32_t(a.iteration)) continue;
        if (best == dl::kNoIndex || score(i) < score(best)) best = i;
    }
    if (best == dl::kNoIndex) {
        std::cerr << "dumplens-cli: no op named " << a.op << " in " << a.index.dir
                  << (a.rank >= 0 ? " on rank " + std::to_string(a.rank) : "")
                  << (a.iteration >= 0 ? " in iteration " + std::to_string(a.iteration) : "") << "\n";
        return kExitNoMatch;
    }
    const dl::OpStates states = dl::computeOpStates(index, &analysis, analysis.nearLimitThreshold);
    dl::OpGraph graph;
    std::string error;
    if (!dl::buildOpGraph(index, &analysis, states, flow, best, a.hops, graph, error)) {
        std::cerr << "dumplens-cli: " << error
                  << ": graph needs MindSpore's graph IR (rank_N/graphs/ms_output_trace_code_graph_N.ir)\n";
        return kExitNoMatch;
    }
    std::cout << (a.format == "dot" ? dl::opGraphDot(index, graph) : dl::opGraphJson(index, graph) + "\n");
    return kExitOk;
}

}  // namespace dlcli

// The chain inside a rank along the graph IR's data edges (issue 30): on simulated PP and PP x TP
// runs written with their kernel-graph IR (forward and backward origins), every same-rank hop
// that a data path of the simulation explains says "dataflow" with edges the simulation has,
// and no other hop does; the origin names its producers; the neighbourhood `graph` returns holds
// exactly the simulation's producers and consumers of the origin. The ground truth is the
// simulation's own record of which tensor object each op read (ClusterScenarioTruth::dataEdges),
// not the IR the writer made from it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/analysis/rank_dataflow.h"
#include "core/demo/cluster_scenario.h"
#include "core/demo/pipeline_scenario.h"
#include "core/formats/mindspore/execution_order.h"
#include "core/index/dump_indexer.h"
#include "core/query/op_graph.h"
#include "tests/core/cli_run.h"
#include "tests/core/temp_dir.h"

using namespace dl;
using namespace dl::demo;
namespace fs = std::filesystem;

namespace {

struct DumpRun {
    std::string root;
    ClusterScenarioTruth truth;
    DumpIndex index;
    AnalysisResult result;
};

void analyzeRun(DumpRun& run) {
    IndexOptions io;
    io.useCache = false;
    IndexReport rep;
    std::string error;
    ASSERT_TRUE(indexDump(run.root, io, run.index, rep, error)) << error;
    run.result = analyze(run.index);
}

// rank -> its stage graph's names by position (the execution-order file the writer wrote).
std::vector<std::string> positions(const std::string& root, std::uint32_t rank) {
    std::ifstream in(root + "/rank_" + std::to_string(rank) + "/execution_order/ms_execution_order_graph_0.csv");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> names;
    std::string error;
    EXPECT_TRUE(parseExecutionOrderCsv(text, names, error)) << error;
    return names;
}

bool truthPath(const std::vector<KernelEdge>& edges, std::uint32_t from, std::uint32_t to) {
    std::deque<std::uint32_t> q{from};
    std::set<std::uint32_t> seen{from};
    while (!q.empty()) {
        const std::uint32_t k = q.front();
        q.pop_front();
        for (const KernelEdge& e : edges)
            if (e.from == k && seen.insert(e.to).second) {
                if (e.to == to) return true;
                q.push_back(e.to);
            }
    }
    return false;
}

struct Counts {
    std::size_t dataflow = 0, sameRank = 0;
};

// Every same-rank hop against the simulation; the origin's inputs and neighbourhood too.
void checkRun(DumpRun& run, Counts& c) {
    const DumpIndex& idx = run.index;
    const AnalysisResult& r = run.result;
    const std::string text = toText(idx, r);
    EXPECT_TRUE(r.firstOverflow) << text;
    if (!r.firstOverflow) return;
    EXPECT_TRUE(r.graphIrRead);
    std::map<std::uint32_t, std::map<std::string, std::uint32_t>> posOf;
    const auto pos = [&](std::uint32_t op) -> std::int64_t {
        const OpRecord& o = idx.ops[op];
        auto& m = posOf[o.rank];
        if (m.empty()) {
            const auto names = positions(run.root, o.rank);
            for (std::uint32_t p = 0; p < names.size(); ++p) m[names[p]] = p;
        }
        auto it = m.find(idx.strings.str(o.scope));
        return it == m.end() ? -1 : std::int64_t(it->second);
    };
    const auto edgesOf = [&](std::uint32_t rank, std::uint32_t it) -> const std::vector<KernelEdge>& {
        return run.truth.dataEdges.at({int(rank), int(it)});
    };
    for (std::size_t i = 0; i < r.chain.size(); ++i) {
        const ChainStep& s = r.chain[i];
        if (s.causedBy < 0 || (s.via != ChainVia::SameRank && s.via != ChainVia::Dataflow)) continue;
        const ChainStep& from = r.chain[std::size_t(s.causedBy)];
        if (from.at.rank != s.at.rank) {
            EXPECT_NE(s.via, ChainVia::Dataflow) << i;
            continue;
        }
        const std::int64_t a = pos(from.at.op), b = pos(s.at.op);
        ASSERT_GE(a, 0) << text;
        ASSERT_GE(b, 0) << text;
        const bool want = from.at.iteration == s.at.iteration &&
            truthPath(edgesOf(s.at.rank, s.at.iteration), std::uint32_t(a), std::uint32_t(b));
        EXPECT_EQ(s.via == ChainVia::Dataflow, want) << "step " << i + 1 << ": " << s.note << "\n" << text;
        if (s.via == ChainVia::Dataflow) {
            ++c.dataflow;
            ASSERT_FALSE(s.path.empty());
            EXPECT_EQ(s.path.front().producer, idx.strings.str(idx.ops[from.at.op].scope));
            EXPECT_EQ(s.path.back().consumer, idx.strings.str(idx.ops[s.at.op].scope));
            const auto& names = positions(run.root, s.at.rank);
            const auto& truth = edgesOf(s.at.rank, s.at.iteration);
            for (std::size_t e = 0; e < s.path.size(); ++e) {
                const DataflowEdge& d = s.path[e];
                if (e) {
                    EXPECT_EQ(d.producer, s.path[e - 1].consumer);
                }
                const auto p = std::find(names.begin(), names.end(), d.producer),
                           q = std::find(names.begin(), names.end(), d.consumer);
                ASSERT_NE(p, names.end());
                ASSERT_NE(q, names.end());
                const KernelEdge k{std::uint32_t(p - names.begin()), std::uint32_t(q - names.begin()), d.outputSlot,
                                   d.inputSlot};
                EXPECT_NE(std::find(truth.begin(), truth.end(), k), truth.end()) << d.producer << " -> " << d.consumer;
            }
            EXPECT_NE(s.note.find("graph IR data path"), std::string::npos) << s.note;
        } else {
            ++c.sameRank;
            EXPECT_TRUE(s.note.find("no data path") != std::string::npos ||
                        s.note.find("one iteration only") != std::string::npos)
                << s.note;
        }
    }
    // The origin's producers: one input per simulated edge into it, the rest parameters.
    const OverflowPoint& o = *r.firstOverflow;
    const std::int64_t op = pos(o.op);
    std::set<std::tuple<std::uint16_t, std::string, std::uint16_t>> want, got;
    std::set<std::string> consumers;
    const auto& names = positions(run.root, o.rank);
    for (const KernelEdge& e : edgesOf(o.rank, o.iteration)) {
        if (std::int64_t(e.to) == op) want.insert({e.toSlot, names[e.from], e.fromSlot});
        if (std::int64_t(e.from) == op) consumers.insert(names[e.to]);
    }
    for (const OriginInput& in : r.originInputs)
        if (in.source == "kernel") {
            got.insert({in.slot, in.producer, in.outputSlot});
            EXPECT_NE(in.producerOp, kNoIndex) << in.producer;
        }
    EXPECT_EQ(got, want);
    // The neighbourhood one hop out.
    RankDataflow flow(idx);
    OpGraph g;
    std::string error;
    EXPECT_TRUE(buildOpGraph(idx, &r, computeOpStates(idx, &r), flow, o.op, 1, g, error)) << error;
    std::set<std::string> producers, gotConsumers;
    for (const OpGraphNode& n : g.nodes) {
        if (n.kind == "kernel" && n.distance == -1) producers.insert(n.name);
        if (n.kind == "kernel" && n.distance == 1) gotConsumers.insert(n.name);
    }
    std::set<std::string> wantProducers;
    for (const auto& [slot, name, out] : want) wantProducers.insert(name);
    EXPECT_EQ(producers, wantProducers);
    EXPECT_EQ(gotConsumers, consumers);
    EXPECT_TRUE(g.nodes.front().centre);
    EXPECT_EQ(g.nodes.front().state, OpState::Origin);
    // JSON: a dataflow hop names its edges.
    const nlohmann::json j = toJson(idx, r);
    for (const auto& step : j["chain"])
        if (step["via"] == "dataflow") {
            EXPECT_FALSE(step["via_detail"]["path"].empty());
        }
    EXPECT_EQ(j["first_overflow"]["inputs"].size(), r.originInputs.size());
}

ClusterScenarioOptions withIr() {
    ClusterScenarioOptions o;
    o.graphIr = true;
    return o;
}

}  // namespace

// A forward origin (stage 1's residual Add, PP4) and a backward one (SqrtGrad, PP4 x TP2).
TEST(ChainDataflow, ClusterScenariosForwardAndTensorParallel) {
    Counts all;
    for (ClusterScenario s : {ClusterScenario::ForwardThenBackward, ClusterScenario::TensorParallel,
                              ClusterScenario::BackwardNextIteration}) {
        SCOPED_TRACE(clusterScenarioName(s));
        dltest::TempDir dir("dumplens_chain_dataflow_");
        DumpRun run;
        run.root = (dir.path / "run").string();
        std::string error;
        ASSERT_TRUE(writeClusterScenario(run.root, s, withIr(), run.truth, error)) << error;
        analyzeRun(run);
        checkRun(run, all);
        if (std::getenv("DL_SHOW")) std::printf("%s\n", toText(run.index, run.result).c_str());
    }
    EXPECT_GT(all.dataflow, 0u);
}

// An IR without the edges into one op of the chain: that hop stays same_rank and says the IR has
// no path; every other hop still follows the (equally reduced) ground truth.
TEST(ChainDataflow, AHopTheIrCannotExplainStaysSameRank) {
    dltest::TempDir dir("dumplens_chain_dataflow_cut_");
    DumpRun run;
    run.root = (dir.path / "run").string();
    std::string error;
    ASSERT_TRUE(writeClusterScenario(run.root, ClusterScenario::ForwardThenBackward, withIr(), run.truth, error))
        << error;
    analyzeRun(run);
    // The first same-rank hop after a Receive (rank 2's first anomaly): cut the edges into it.
    const ChainStep* cut = nullptr;
    for (const ChainStep& s : run.result.chain)
        if (s.via == ChainVia::Dataflow && s.causedBy >= 0 &&
            run.result.chain[std::size_t(s.causedBy)].role == ChainRole::Receive) {
            cut = &s;
            break;
        }
    ASSERT_NE(cut, nullptr) << toText(run.index, run.result);
    const std::uint32_t rank = cut->at.rank;
    const auto names = positions(run.root, rank);
    const std::uint32_t target = std::uint32_t(
        std::find(names.begin(), names.end(), run.index.strings.str(run.index.ops[cut->at.op].scope)) - names.begin());
    ASSERT_LT(target, names.size());
    std::vector<KernelSpec> kernels(names.size());
    for (std::size_t k = 0; k < names.size(); ++k) {
        kernels[k].fullName = names[k];
        const std::string last = names[k].substr(names[k].rfind('/') + 1);
        kernels[k].type = last.substr(0, last.rfind("-op"));
    }
    for (auto& [key, edges] : run.truth.dataEdges) {
        if (key.first != int(rank)) continue;
        edges.erase(std::remove_if(edges.begin(), edges.end(), [&](const KernelEdge& e) { return e.to == target; }),
                    edges.end());
        for (const KernelEdge& e : edges) {
            kernels[e.to].inputs = std::max<std::uint16_t>(kernels[e.to].inputs, std::uint16_t(e.toSlot + 1));
            kernels[e.from].outputs = std::max<std::uint16_t>(kernels[e.from].outputs, std::uint16_t(e.fromSlot + 1));
        }
    }
    kernels[target].inputs = std::max<std::uint16_t>(kernels[target].inputs, 1);  // fed by a parameter now
    dltest::writeFile(fs::path(run.root) / ("rank_" + std::to_string(rank)) / "graphs/ms_output_trace_code_graph_0.ir",
                      kernelGraphIr(0, kernels, run.truth.dataEdges.at({int(rank), 0})));
    run.index = DumpIndex{};
    analyzeRun(run);
    Counts c;
    checkRun(run, c);
    EXPECT_GT(c.sameRank, 0u) << toText(run.index, run.result);
    EXPECT_GT(c.dataflow, 0u);
    bool seen = false;
    for (const ChainStep& s : run.result.chain)
        if (s.at.op < run.index.ops.size() && run.index.strings.str(run.index.ops[s.at.op].scope) == names[target] &&
            s.causedBy >= 0) {
            EXPECT_EQ(s.via, ChainVia::SameRank) << s.note;
            EXPECT_NE(s.note.find("no data path from"), std::string::npos) << s.note;
            seen = true;
        }
    EXPECT_TRUE(seen);
}

// The pipeline simulator (1F1B, PP2 x TP2, the SwiGLU-backward Mul of a micro-batch as origin).
TEST(ChainDataflow, PipelineRunWithTensorParallelism) {
    dltest::TempDir dir("dumplens_chain_dataflow_pp_");
    DumpRun run;
    run.root = (dir.path / "run").string();
    PipelineSpec spec;
    spec.pipelineStages = 2;
    spec.tensorParallel = 2;
    spec.layersPerStage = 2;
    spec.microBatches = 2;
    spec.originStage = 1;
    spec.originLane = 1;
    std::string error;
    ASSERT_TRUE(writePipelineRun(run.root, spec, withIr(), run.truth, error)) << error;
    analyzeRun(run);
    Counts c;
    checkRun(run, c);
    EXPECT_GT(c.dataflow, 0u) << toText(run.index, run.result);
}

// Without an IR nothing changes: no dataflow hop, no inputs named, and `graph` says why (exit 1).
TEST(ChainDataflow, WithoutIrTheChainStaysSameRankAndGraphRefuses) {
    dltest::TempDir dir("dumplens_chain_dataflow_none_");
    DumpRun run;
    run.root = (dir.path / "run").string();
    std::string error;
    ASSERT_TRUE(writeClusterScenario(run.root, ClusterScenario::ForwardThenBackward, ClusterScenarioOptions{},
                                     run.truth, error))
        << error;
    analyzeRun(run);
    ASSERT_TRUE(run.result.firstOverflow);
    EXPECT_FALSE(run.result.graphIrRead);
    EXPECT_TRUE(run.result.originInputs.empty());
    for (const ChainStep& s : run.result.chain) {
        EXPECT_NE(s.via, ChainVia::Dataflow);
        EXPECT_EQ(s.note.find("graph IR"), std::string::npos) << s.note;
    }
    const std::string origin = run.index.strings.str(run.index.ops[run.result.firstOverflow->op].name);
    const auto cli = dltest::runCli("graph " + run.root + " --no-cache --op " + origin, 60);
    EXPECT_EQ(cli.code, 1) << cli.output;
    EXPECT_NE(cli.output.find("no graph IR"), std::string::npos) << cli.output;
}

// `dumplens-cli graph` on a dump with IR: JSON with the origin first and its producers and
// consumers, DOT left to right; an unknown op is exit 1.
TEST(ChainDataflow, GraphCommandJsonAndDot) {
    dltest::TempDir dir("dumplens_chain_dataflow_cli_");
    DumpRun run;
    run.root = (dir.path / "run").string();
    std::string error;
    ASSERT_TRUE(writeClusterScenario(run.root, ClusterScenario::ForwardThenBackward, withIr(), run.truth, error))
        << error;
    analyzeRun(run);
    ASSERT_TRUE(run.result.firstOverflow);
    const OverflowPoint& o = *run.result.firstOverflow;
    const std::string origin = run.index.strings.str(run.index.ops[o.op].name);
    const auto cli =
        dltest::runCli("graph " + run.root + " --no-cache --op " + origin + " --hops 1", 60, "2>/dev/null");
    ASSERT_EQ(cli.code, 0) << cli.output;
    const nlohmann::json j = nlohmann::json::parse(cli.output);
    ASSERT_FALSE(j["nodes"].empty());
    EXPECT_EQ(j["nodes"][0]["op_name"], origin);
    EXPECT_EQ(j["nodes"][0]["state"], "origin");
    EXPECT_EQ(j["nodes"][0]["rank"], o.rank);
    std::size_t producers = 0, consumers = 0;
    for (const auto& n : j["nodes"]) {
        producers += n["distance"] == -1 && n["kind"] == "kernel";
        consumers += n["distance"] == 1;
    }
    std::size_t wantProducers = 0, wantConsumers = 0;
    const auto names = positions(run.root, o.rank);
    const auto p =
        std::find(names.begin(), names.end(), run.index.strings.str(run.index.ops[o.op].scope)) - names.begin();
    std::set<std::uint32_t> from, to;
    for (const KernelEdge& e : run.truth.dataEdges.at({int(o.rank), int(o.iteration)})) {
        if (e.to == std::uint32_t(p)) from.insert(e.from);
        if (e.from == std::uint32_t(p)) to.insert(e.to);
    }
    wantProducers = from.size();
    wantConsumers = to.size();
    EXPECT_EQ(producers, wantProducers) << cli.output;
    EXPECT_EQ(consumers, wantConsumers) << cli.output;
    for (const auto& e : j["edges"]) {
        EXPECT_LT(e["from"].get<std::size_t>(), j["nodes"].size());
        EXPECT_LT(e["to"].get<std::size_t>(), j["nodes"].size());
    }
    const auto dot =
        dltest::runCli("graph " + run.root + " --no-cache --op " + origin + " --format dot", 60, "2>/dev/null");
    ASSERT_EQ(dot.code, 0);
    EXPECT_EQ(dot.output.rfind("digraph dumplens {", 0), 0u) << dot.output;
    EXPECT_NE(dot.output.find("rankdir=LR"), std::string::npos);
    const auto none = dltest::runCli("graph " + run.root + " --no-cache --op NoSuchOp-op1", 60);
    EXPECT_EQ(none.code, 1) << none.output;
    EXPECT_NE(none.output.find("no op named NoSuchOp-op1"), std::string::npos) << none.output;
}

// The analysis of an index whose clean iterations are cut down to cleanIterationInputs()
// (chosen per rank and iteration folder, and once for the whole run) gives the whole index's first
// overflow and chain, numbered back, and the same whole-run inputs: every Send/Receive pair, the
// stage map, the clock offsets, how the chain is ordered. Checked on the simulated clusters and
// pipelines (statistics only, without timestamps, overflow only, without execution order, with
// graph IR, data-parallel, the job killed), the demo dumps and the dumps MindSpore itself wrote.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>

#include "core/analysis/analysis_json.h"
#include "core/analysis/first_overflow_inputs.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/demo/cluster_scenario.h"
#include "core/demo/pipeline_scenario.h"
#include "core/index/dump_indexer.h"
#include "tests/core/shared_demo.h"
#include "tests/core/temp_dir.h"

using namespace dl;
using namespace dl::demo;
namespace fs = std::filesystem;

namespace {

bool indexOf(const std::string& root, DumpIndex& index, std::string& error) {
    IndexOptions io;
    io.useCache = false;
    IndexReport rep;
    return indexDump(root, io, index, rep, error);
}

// The ops of each (rank, iteration) in turn: a rank's iteration folder, as a watch holds it.
std::vector<std::vector<std::uint32_t>> rankIterationFolders(const DumpIndex& index) {
    std::vector<std::vector<std::uint32_t>> out;
    for (std::uint32_t i = 0; i < index.ops.size(); ++i) {
        if (i == 0 || index.ops[i].rank != index.ops[i - 1].rank ||
            index.ops[i].iteration != index.ops[i - 1].iteration)
            out.emplace_back();
        out.back().push_back(i);
    }
    return out;
}

// What the whole index's analysis gives against the cut-down one's, renumbered: the clean
// iterations' ops chosen folder by folder (a rank's iteration, as a watch writes them out) or
// over all of them at once (the fewest: one op a rank, one loss op a rank, one untimed op).
void expectSameAnswer(const DumpIndex& full, bool byFolder, bool& cutSome) {
    AnalysisOptions ao;
    ao.replay = false;
    const AnalysisResult whole = analyze(full, ao);
    ASSERT_TRUE(whole.firstOverflow && whole.firstBadIteration) << toText(full, whole);
    // Cut where a watch cuts: before the first (rank, iteration) holding a bad tensor or an
    // Opdebug record, which is never after the analysis' first bad iteration.
    const std::vector<std::vector<std::uint32_t>> folders = rankIterationFolders(full);
    std::uint32_t from = *whole.firstBadIteration;
    for (const std::vector<std::uint32_t>& folder : folders)
        if (holdsAnomaly(full.subset(folder))) from = std::min(from, full.ops[folder.front()].iteration);
    ASSERT_GT(from, 0u) << "nothing to cut before iteration 0";

    // Clean iterations cut down, the rest kept whole.
    std::vector<std::uint32_t> kept, clean;
    const auto choose = [&](const std::vector<std::uint32_t>& ops) {
        for (std::uint32_t k : cleanIterationInputs(full.subset(ops)).ops) kept.push_back(ops[k]);
    };
    for (const std::vector<std::uint32_t>& folder : folders) {
        if (full.ops[folder.front()].iteration >= from)
            kept.insert(kept.end(), folder.begin(), folder.end());
        else if (byFolder)
            choose(folder);
        else
            clean.insert(clean.end(), folder.begin(), folder.end());
    }
    if (!byFolder) choose(clean);
    std::sort(kept.begin(), kept.end());
    cutSome = kept.size() < full.ops.size();
    DumpIndex cut = full.subset(kept);
    cut.finalize();
    std::vector<std::uint32_t> tensorOf;  // cut tensor -> whole tensor
    for (std::uint32_t k : kept)
        for (std::uint32_t t = 0; t < full.ops[k].tensorCount; ++t) tensorOf.push_back(full.ops[k].firstTensor + t);
    ASSERT_EQ(tensorOf.size(), cut.tensors.size());
    const AnalysisResult part = analyze(cut, ao);
    ASSERT_TRUE(part.firstOverflow) << toText(cut, part);

    nlohmann::json wantFirst = firstOverflowJson(full, whole), gotFirst = firstOverflowJson(cut, part);
    nlohmann::json wantChain = chainJson(full, whole), gotChain = chainJson(cut, part);
    const auto op = [&](std::uint32_t i) { return std::optional<std::uint64_t>(kept.at(i)); };
    const auto tensor = [&](std::uint32_t i) { return std::optional<std::uint64_t>(tensorOf.at(i)); };
    ASSERT_TRUE(renumberIndices(gotFirst, op, tensor));
    ASSERT_TRUE(renumberIndices(gotChain, op, tensor));
    EXPECT_EQ(gotFirst.dump(1), wantFirst.dump(1));
    EXPECT_EQ(gotChain.dump(1), wantChain.dump(1));

    // The whole-run inputs the cut must keep.
    EXPECT_EQ(part.stages.stageOfRank, whole.stages.stageOfRank);
    EXPECT_EQ(part.stages.source, whole.stages.source);
    EXPECT_EQ(part.clockOffsetUs, whole.clockOffsetUs);
    EXPECT_EQ(part.clockUncertaintyUs, whole.clockUncertaintyUs);
    EXPECT_EQ(part.chainOrderedByClock, whole.chainOrderedByClock);
    EXPECT_EQ(part.chainOrderedByFlow, whole.chainOrderedByFlow);
    EXPECT_EQ(part.ambiguousPairs, whole.ambiguousPairs);
    ASSERT_EQ(part.pairs.size(), whole.pairs.size());
    for (std::size_t i = 0; i < part.pairs.size(); ++i) {
        EXPECT_EQ(kept[part.pairs[i].send], whole.pairs[i].send) << i;
        EXPECT_EQ(kept[part.pairs[i].recv], whole.pairs[i].recv) << i;
        EXPECT_EQ(part.pairs[i].evidence, whole.pairs[i].evidence) << i;
    }
    EXPECT_EQ(*part.firstBadIteration, *whole.firstBadIteration);
}

// Both choices; `cutSome`: whether anything was cut (an overflow-only dump holds nothing the
// analysis does not read).
void expectSameAnswer(const DumpIndex& full, bool& cutSome) {
    cutSome = false;
    for (const bool byFolder : {true, false}) {
        SCOPED_TRACE(byFolder ? "chosen folder by folder" : "chosen over the whole run");
        bool cut = false;
        expectSameAnswer(full, byFolder, cut);
        cutSome |= cut;
    }
}

struct ClusterCase {
    const char* name;
    ClusterScenario scenario;
    ClusterScenarioOptions options;
    bool cuts = true;  // false: every op of a clean iteration is read (overflow only: one op a rank)
    // Applied to the index before the check (a dump few writers give, made from one that exists).
    std::function<void(DumpIndex&)> edit;
};

ClusterScenarioOptions opts(const std::function<void(ClusterScenarioOptions&)>& f) {
    ClusterScenarioOptions o;
    f(o);
    return o;
}

const std::vector<ClusterCase>& clusterCases() {
    static const std::vector<ClusterCase> c = {
        {"backward_next_iteration", ClusterScenario::BackwardNextIteration, {}},
        {"forward_then_backward", ClusterScenario::ForwardThenBackward, {}},
        {"tensor_parallel", ClusterScenario::TensorParallel, {}},
        {"global_norm", ClusterScenario::GlobalNorm, {}},
        {"no_timestamps", ClusterScenario::BackwardNextIteration, opts([](auto& o) { o.timestamps = false; })},
        {"overflow_only", ClusterScenario::TensorParallel, opts([](auto& o) { o.overflowOnly = true; }), false},
        {"no_execution_order", ClusterScenario::ForwardThenBackward, opts([](auto& o) { o.executionOrder = false; })},
        {"graph_ir_no_rank_table_stages", ClusterScenario::TensorParallel, opts([](auto& o) {
             o.graphIr = true;
             o.stagesInRankTable = false;
         })},
        {"tensors", ClusterScenario::GlobalNorm, opts([](auto& o) { o.writeTensors = true; })},
        // One op of a clean iteration lost its time (not a rank's first): the chain is then not
        // ordered by clock, in the cut index too.
        {"one_untimed_op_before",
         ClusterScenario::BackwardNextIteration,
         {},
         true,
         [](DumpIndex& idx) {
             for (std::uint32_t i = 1; i < idx.ops.size(); ++i)
                 if (idx.ops[i].rank == 1 && idx.ops[i].iteration == 0 && idx.ops[i - 1].rank == 1) {
                     idx.ops[i].startUs = idx.ops[i].endUs = 0;
                     return;
                 }
         }},
    };
    return c;
}

class ClusterCut : public ::testing::TestWithParam<std::size_t> {};

TEST_P(ClusterCut, SameFirstOverflowAndChain) {
    const ClusterCase& c = clusterCases()[GetParam()];
    dltest::TempDir dir("dumplens_cut_");
    const std::string root = (dir.path / c.name).string();
    ClusterScenarioTruth truth;
    std::string error;
    ASSERT_TRUE(writeClusterScenario(root, c.scenario, c.options, truth, error)) << error;
    DumpIndex full;
    ASSERT_TRUE(indexOf(root, full, error)) << error;
    if (c.edit) c.edit(full);
    bool cutSome = false;
    expectSameAnswer(full, cutSome);
    EXPECT_EQ(cutSome, c.cuts);
}

INSTANTIATE_TEST_SUITE_P(Clusters, ClusterCut, ::testing::Range<std::size_t>(0, clusterCases().size()),
                         [](const auto& info) { return std::string(clusterCases()[info.param].name); });

struct PipelineCase {
    const char* name;
    int pp, tp, dp, microBatches;
    PipelineSchedule schedule;
    bool killed, executionOrder;
};

const std::vector<PipelineCase>& pipelineCases() {
    static const std::vector<PipelineCase> c = {
        {"pp4_tp2_mb20_killed", 4, 2, 1, 20, PipelineSchedule::OneFOneB, true, true},
        {"pp4_tp2_mb12_no_execution_order", 4, 2, 1, 12, PipelineSchedule::OneFOneB, false, false},
        {"interleaved_pp4_tp2_mb8", 4, 2, 1, 8, PipelineSchedule::Interleaved, true, true},
        {"gpipe_pp2_tp2_dp2_mb6", 2, 2, 2, 6, PipelineSchedule::GPipe, false, true},
    };
    return c;
}

class PipelineCut : public ::testing::TestWithParam<std::size_t> {};

TEST_P(PipelineCut, SameFirstOverflowAndChain) {
    const PipelineCase& c = pipelineCases()[GetParam()];
    dltest::TempDir dir("dumplens_cut_");
    PipelineSpec spec;
    spec.pipelineStages = c.pp;
    spec.tensorParallel = c.tp;
    spec.dataParallel = c.dp;
    spec.layersPerStage = 1;
    spec.microBatches = c.microBatches;
    spec.schedule = c.schedule;
    spec.originStage = std::min(2, c.pp - 1);
    spec.originLane = c.tp - 1;
    spec.killedIteration = c.killed ? 3 : -1;
    ClusterScenarioOptions o;
    o.stagesInRankTable = false;
    o.executionOrder = c.executionOrder;
    o.rankClockOffsetUs = pipelineClockOffsets(c.pp * c.tp * c.dp, 500000);
    ClusterScenarioTruth truth;
    std::string error;
    const std::string root = (dir.path / c.name).string();
    ASSERT_TRUE(writePipelineRun(root, spec, o, truth, error)) << error;
    DumpIndex full;
    ASSERT_TRUE(indexOf(root, full, error)) << error;
    bool cutSome = false;
    expectSameAnswer(full, cutSome);
    EXPECT_TRUE(cutSome);
}

INSTANTIATE_TEST_SUITE_P(Pipelines, PipelineCut, ::testing::Range<std::size_t>(0, pipelineCases().size()),
                         [](const auto& info) { return std::string(pipelineCases()[info.param].name); });

// Every demo variant whose first overflow comes after iteration 0.
TEST(DemoCut, SameFirstOverflowAndChain) {
    DemoSummary summary;
    const std::string dumps = dltest::sharedDemoDumps(summary);
    int checked = 0, cut = 0;
    for (const std::string& v : summary.variants) {
        DumpIndex full;
        std::string error;
        ASSERT_TRUE(indexOf((fs::path(dumps) / v).string(), full, error)) << v << ": " << error;
        AnalysisOptions ao;
        ao.replay = false;
        const AnalysisResult r = analyze(full, ao);
        if (!r.firstBadIteration || *r.firstBadIteration == 0) continue;
        SCOPED_TRACE(v);
        bool cutSome = false;
        expectSameAnswer(full, cutSome);
        ++checked;
        cut += cutSome;
    }
    EXPECT_GE(checked, 3);
    EXPECT_GE(cut, 2);
}

// MindSpore's own dumps: the SqrtGrad run (clean iteration 0, the Cast's inf in iteration 1).
TEST(RealMindSporeCut, SameFirstOverflowAndChain) {
    for (const char* version : {"2.0.0", "2.7.0", "2.10.0"}) {
        SCOPED_TRACE(version);
        DumpIndex full;
        std::string error;
        const fs::path root = fs::path(DUMPLENS_TEST_DATA_DIR) / "real" / "mindspore" / version / "train_sqrtgrad";
        ASSERT_TRUE(indexOf(root.string(), full, error)) << error;
        bool cutSome = false;
        expectSameAnswer(full, cutSome);
        EXPECT_TRUE(cutSome);
    }
}

}  // namespace

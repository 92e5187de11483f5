// The pipeline simulator (core/demo/pipeline_sim.h) runs the schedules it claims: 1F1B's warm-up
// of pp - s - 1 forwards, GPipe's all-forward-then-all-backward, Megatron's interleaved order;
// every channel (rank, peer, direction) is FIFO; each iteration moves 2 x (virtual stages - 1) x
// micro-batches x TP x DP messages; the written statistics of a Send's input and its Receive's
// output are equal; clocks carry the requested offsets; a killed run stops mid-iteration.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/demo/cluster_truth.h"
#include "core/demo/pipeline_scenario.h"
#include "core/demo/pipeline_sim.h"
#include "core/index/dump_indexer.h"
#include "tests/core/temp_dir.h"

using namespace dl;
using namespace dl::demo;

namespace {

PipelineSpec small(PipelineSchedule s, int pp, int tp, int dp, int mb) {
    PipelineSpec p;
    p.pipelineStages = pp;
    p.tensorParallel = tp;
    p.dataParallel = dp;
    p.microBatches = mb;
    p.schedule = s;
    p.layersPerStage = 1;
    p.iterations = 2;
    p.originIteration = 5;  // no outlier: a clean run
    return p;
}

// Per stage of replica 0, lane 0: the order of forward Sends (F) and backward Receives (B) in
// iteration 0, a forward unit's last act and a backward unit's first.
std::map<int, std::string> unitOrder(const PipelineSim& sim) {
    std::map<int, std::string> order;
    for (const ClusterOp& o : sim.trace.ops) {
        if (o.iteration != 0 || o.lane != 0 || o.replica != 0) continue;
        if (o.kind == ClusterOpKind::Send && !o.backward) order[o.stage] += 'F';
        if (o.kind == ClusterOpKind::Receive && o.backward) order[o.stage] += 'B';
    }
    return order;
}

}  // namespace

TEST(PipelineSim, OneFOneBWarmsUpThenAlternates) {
    PipelineSim sim(small(PipelineSchedule::OneFOneB, 4, 1, 1, 6));
    sim.run();
    const auto order = unitOrder(sim);
    // Stage 0: 3 warm-up forwards, then F B pairs, then the cool-down; the last stage sends no
    // activations and receives no gradient.
    EXPECT_EQ(order.at(0), "FFFFBFBFBBBB");
    EXPECT_EQ(order.at(1), "FFFBFBFBFBBB");
    EXPECT_EQ(order.at(2), "FFBFBFBFBFBB");
    EXPECT_FALSE(order.count(3));
}

TEST(PipelineSim, GPipeRunsAllForwardsFirst) {
    PipelineSim sim(small(PipelineSchedule::GPipe, 2, 1, 1, 5));
    sim.run();
    EXPECT_EQ(unitOrder(sim).at(0), "FFFFFBBBBB");
}

TEST(PipelineSim, ChannelsAreFifoAndCountsAreExact) {
    for (PipelineSchedule s : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB, PipelineSchedule::Interleaved}) {
        PipelineSpec spec = small(s, 4, 2, 2, 8);
        PipelineSim sim(spec);
        sim.run();
        const int v = s == PipelineSchedule::Interleaved ? spec.chunks : 1;
        std::map<int, std::size_t> perIteration;
        // (sender, receiver, backward) -> the positions of its Sends and Receives, in pair order.
        std::map<std::tuple<int, int, bool>, std::vector<std::pair<std::uint32_t, std::uint32_t>>> channels;
        for (const PipelinePair& p : sim.pairs) {
            const ClusterOp &a = sim.trace.ops[std::size_t(p.sendOp)], &b = sim.trace.ops[std::size_t(p.recvOp)];
            ASSERT_EQ(a.backward, b.backward);
            ASSERT_EQ(a.iteration, b.iteration);
            ASSERT_EQ(a.peer, b.rank);
            ++perIteration[a.iteration];
            if (a.iteration == 0) channels[{a.rank, b.rank, a.backward}].push_back({a.position, b.position});
        }
        for (const auto& [it, n] : perIteration)
            EXPECT_EQ(n, std::size_t(2 * (4 * v - 1) * 8 * 2 * 2)) << pipelineScheduleName(s) << " iteration " << it;
        for (const auto& [key, list] : channels)
            for (std::size_t k = 1; k < list.size(); ++k) {
                EXPECT_LT(list[k - 1].first, list[k].first);
                EXPECT_LT(list[k - 1].second, list[k].second) << pipelineScheduleName(s) << ": the channel is FIFO";
            }
    }
}

TEST(PipelineSim, KilledRunStopsMidIteration) {
    PipelineSpec spec = small(PipelineSchedule::OneFOneB, 2, 2, 1, 4);
    spec.iterations = 4;
    spec.killedIteration = 2;
    PipelineSim sim(spec);
    sim.run();
    std::map<std::pair<int, int>, std::size_t> ops;
    for (const ClusterOp& o : sim.trace.ops) ++ops[{o.rank, o.iteration}];
    for (int r = 0; r < 4; ++r) {
        const std::size_t full = ops[{r, 1}], killed = ops[{r, 2}];
        EXPECT_GT(full, killed) << r;
        EXPECT_GT(killed, 0u) << r;
        EXPECT_EQ(ops.count(std::pair(r, 3)), 0u);
    }
}

// Written as statistics only: every pair of the event log has equal statistics at both ends in the
// index, the clocks carry the offsets asked for, and the overflow is the SwiGLU-backward Mul.
TEST(PipelineSim, WrittenPairsCarryEqualStatistics) {
    dltest::TempDir dir("dumplens_pipesim_");
    PipelineSpec spec;
    spec.pipelineStages = 4;
    spec.tensorParallel = 2;
    spec.microBatches = 4;
    spec.layersPerStage = 2;
    ClusterScenarioOptions o;
    o.rankClockOffsetUs = pipelineClockOffsets(8, 1000000);
    ClusterScenarioTruth truth;
    std::string error;
    ASSERT_TRUE(writePipelineRun(dir.path.string(), spec, o, truth, error)) << error;
    EXPECT_EQ(truth.origin.opType, "Mul");
    EXPECT_EQ(truth.origin.rank, 5);
    EXPECT_EQ(truth.origin.iteration, 2);
    for (std::int64_t off : truth.rankClockOffsetUs) EXPECT_LE(std::llabs(off), 1000000);
    DumpIndex index;
    IndexOptions io;
    io.useCache = false;
    IndexReport rep;
    ASSERT_TRUE(indexDump(dir.path.string(), io, index, rep, error)) << error;
    std::map<std::tuple<int, int, std::string>, std::uint32_t> opOf;
    for (std::uint32_t i = 0; i < index.ops.size(); ++i)
        opOf[{int(index.ops[i].rank), int(index.ops[i].iteration), index.strings.str(index.ops[i].name)}] = i;
    auto flat = [](std::string s) {
        std::replace(s.begin(), s.end(), '/', '_');
        return s;
    };
    auto statsOf = [&](std::uint32_t op, Io io) {
        const OpRecord& rec = index.ops[op];
        for (std::uint32_t k = 0; k < rec.tensorCount; ++k)
            if (index.tensors[rec.firstTensor + k].io == io) return index.stats(index.tensors[rec.firstTensor + k]);
        return TensorStats{};
    };
    ASSERT_FALSE(truth.pairs.empty());
    for (const ClusterPairTruth& p : truth.pairs) {
        const auto s = opOf.find({p.sendRank, p.iteration, flat(p.sendName)});
        const auto r = opOf.find({p.recvRank, p.iteration, flat(p.recvName)});
        ASSERT_NE(s, opOf.end()) << p.sendName;
        ASSERT_NE(r, opOf.end()) << p.recvName;
        const TensorStats a = statsOf(s->second, Io::Input), b = statsOf(r->second, Io::Output);
        ASSERT_TRUE(a.known && b.known);
        EXPECT_EQ(a.nanCount, b.nanCount);
        EXPECT_TRUE((std::isnan(a.max) && std::isnan(b.max)) || a.max == b.max) << p.sendName;
        EXPECT_TRUE((std::isnan(a.l2) && std::isnan(b.l2)) || a.l2 == b.l2) << p.sendName;
        EXPECT_EQ(p.backward, p.sendName.rfind("Gradients/", 0) == 0);
    }
}

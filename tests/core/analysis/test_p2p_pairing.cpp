// Send/Receive pairing from what a statistics-only dump holds (comm_matcher.h): direction from
// the Gradients scope in MindSpore 2.4's flattened names, statistics (a Send's input and its
// Receive's output are the same bytes), channel order per (rank, peer, direction), and what each
// pair says tied it. Hand-built indexes; the schedules at scale are in test_chain_pipeline.cpp.
#include <gtest/gtest.h>

#include "core/analysis/comm_matcher.h"
#include "core/analysis/stage_map.h"
#include "tests/core/analysis_test_builder.h"

using namespace dl;
using namespace dltest;

namespace {

// Statistics of one micro-batch's activation: distinct per `k`.
TensorStats mb(double k) {
    TensorStats s = dataStats(1.0 + k / 64.0);
    s.mean = k / 1000.0;
    s.l2 = 3.0 + k / 7.0;
    return s;
}
T moved(Io io, TensorStats s) {
    T t;
    t.io = io;
    t.shape = {2, 8};
    t.stats = s;
    return t;
}

const std::string kFwd = "Default_network-PipelineCell__backbone_model_layers-CellList_9-LlamaDecodeLayer_";
const std::string kBwd = "Gradients_Default_network-PipelineCell__backbone_model_layers-CellList_";

}  // namespace

TEST(P2pPairing, FlattenedGradientsNamesAreBackward) {
    EXPECT_TRUE(isBackwardName(
        "Gradients_Default_network-PipelineCell__layers-CellList_10-LlamaDecodeLayer_gradReceive_Send-op7"));
    EXPECT_TRUE(isBackwardName("Default_network_layers_10_gradSend_Receive-op9"));  // the prefix cut off
    EXPECT_FALSE(isBackwardName("Default_network-PipelineCell__layers-CellList_30-LlamaDecodeLayer_Receive-op4"));
    EXPECT_FALSE(isBackwardName("Default_network_GradientsNorm-op4"));
}

// A backward Send is never paired with a forward Receive even when nothing else tells them apart
// (same shapes, the forward Receive earlier in the rank's order, no stage map).
TEST(P2pPairing, BackwardSendNeverFeedsAForwardReceive) {
    IndexBuilder b;
    const TensorStats act = mb(1), grad = mb(2);
    const auto fwdSend = b.op(0, 0, "Send", kFwd + "Send-op10", {moved(Io::Input, act)});
    const auto bwdRecv =
        b.op(0, 0, "Receive", kBwd + "9-LlamaDecodeLayer_gradSend_Receive-op40", {moved(Io::Output, grad)});
    const auto fwdRecv =
        b.op(1, 0, "Receive", "Default_network-PipelineCell__layers-CellList_10-LlamaDecodeLayer_Receive-op5",
             {moved(Io::Output, act)});
    const auto bwdSend =
        b.op(1, 0, "Send", kBwd + "10-LlamaDecodeLayer_gradReceive_Send-op30", {moved(Io::Input, grad)});
    const auto comm = findCommOps(b.idx);
    ASSERT_EQ(comm.size(), 4u);
    const CommMatch m = matchCommunication(b.idx, comm, StageMap{});
    EXPECT_EQ(m.partner[fwdSend], std::int32_t(fwdRecv));
    EXPECT_EQ(m.partner[bwdSend], std::int32_t(bwdRecv));
    for (const CommPair& p : m.pairs) EXPECT_EQ(p.evidence, PairEvidence::Statistics);
    EXPECT_EQ(m.ambiguous, 0u);
}

// Two possible senders (TP peers of the previous stage, same shapes, no stage map): the statistics
// pick the one whose input holds the Receive's bytes, whatever the rank order says.
TEST(P2pPairing, StatisticsChooseAmongCandidateSenders) {
    IndexBuilder b;
    const auto s0 = b.op(0, 0, "Send", kFwd + "Send-op10", {moved(Io::Input, mb(5))});
    const auto s1 = b.op(1, 0, "Send", kFwd + "Send-op10", {moved(Io::Input, mb(6))});
    const auto r2 = b.op(2, 0, "Receive", kFwd + "Receive-op3", {moved(Io::Output, mb(6))});
    const auto r3 = b.op(3, 0, "Receive", kFwd + "Receive-op3", {moved(Io::Output, mb(5))});
    const CommMatch m = matchCommunication(b.idx, findCommOps(b.idx), StageMap{});
    EXPECT_EQ(m.partner[s1], std::int32_t(r2));
    EXPECT_EQ(m.partner[s0], std::int32_t(r3));
    EXPECT_EQ(m.ambiguous, 0u);
}

// After an overflow every micro-batch carries NaN: equal statistics everywhere. The anchors of the
// clean micro-batches give the channel 0 -> 1, and its order pairs the NaN ones.
TEST(P2pPairing, ChannelOrderPairsWhatStatisticsCannot) {
    IndexBuilder b;
    TensorStats nan = dataStats(1.0, 0, 16, 0, 16);
    std::vector<std::uint32_t> sends, recvs;
    for (int k = 0; k < 6; ++k)
        sends.push_back(
            b.op(0, 0, "Send", kFwd + "Send-op" + std::to_string(10 + k), {moved(Io::Input, k < 3 ? mb(k) : nan)}));
    for (int k = 0; k < 6; ++k)
        recvs.push_back(b.op(1, 0, "Receive", kFwd + "Receive-op" + std::to_string(50 + k),
                             {moved(Io::Output, k < 3 ? mb(k) : nan)}));
    const CommMatch m = matchCommunication(b.idx, findCommOps(b.idx), StageMap{});
    ASSERT_EQ(m.pairs.size(), 6u);
    for (int k = 0; k < 6; ++k) EXPECT_EQ(m.partner[sends[std::size_t(k)]], std::int32_t(recvs[std::size_t(k)])) << k;
    for (const CommPair& p : m.pairs)
        EXPECT_EQ(p.evidence, p.recv <= recvs[2] ? PairEvidence::Statistics : PairEvidence::Order);
    EXPECT_EQ(m.ambiguous, 0u);
    EXPECT_EQ(m.statisticsDiffer, 0u);
}

// The channel's order ties a pair whose two ends disagree: reported, not hidden.
TEST(P2pPairing, PairsWhoseStatisticsDifferAreCounted) {
    IndexBuilder b;
    const auto s0 = b.op(0, 0, "Send", kFwd + "Send-op10", {moved(Io::Input, mb(1))});
    const auto s1 = b.op(0, 0, "Send", kFwd + "Send-op11", {moved(Io::Input, mb(2))});
    const auto r0 = b.op(1, 0, "Receive", kFwd + "Receive-op50", {moved(Io::Output, mb(1))});
    const auto r1 = b.op(1, 0, "Receive", kFwd + "Receive-op51", {moved(Io::Output, mb(9))});  // misread row
    const CommMatch m = matchCommunication(b.idx, findCommOps(b.idx), StageMap{});
    EXPECT_EQ(m.partner[s0], std::int32_t(r0));
    EXPECT_EQ(m.partner[s1], std::int32_t(r1));
    EXPECT_EQ(m.statisticsDiffer, 1u);
    EXPECT_EQ(m.ambiguous, 0u);
}

// Nothing decides (identical statistics, two senders, no stage map, no channel): the pair is
// made, but said to be ambiguous.
TEST(P2pPairing, AmbiguousPairsAreReportedNotHidden) {
    IndexBuilder b;
    b.op(0, 0, "Send", kFwd + "Send-op10", {moved(Io::Input, mb(1))});
    b.op(1, 0, "Send", kFwd + "Send-op10", {moved(Io::Input, mb(1))});
    const auto r = b.op(2, 0, "Receive", kFwd + "Receive-op3", {moved(Io::Output, mb(1))});
    const CommMatch m = matchCommunication(b.idx, findCommOps(b.idx), StageMap{});
    ASSERT_EQ(m.pairs.size(), 1u);
    EXPECT_EQ(m.pairs[0].recv, r);
    EXPECT_EQ(m.pairs[0].evidence, PairEvidence::Ambiguous);
    EXPECT_FALSE(m.pairs[0].confident);
    EXPECT_EQ(m.ambiguous, 1u);
}

// Data-parallel replicas run one graph: their TP AllReduce has one name on four ranks, but two
// calls, told apart by their results.
TEST(P2pPairing, ReplicasOfOneGraphAreSeparateCollectives) {
    IndexBuilder b;
    const std::string ar = "Default_network_layers-CellList_3-LlamaDecodeLayer_feed_forward_w2-Linear_AllReduce-op12";
    for (std::uint32_t r = 0; r < 4; ++r)
        b.op(r, 0, "AllReduce", ar, {moved(Io::Input, mb(r)), moved(Io::Output, mb(r < 2 ? 20 : 21))});
    const CommMatch m = matchCommunication(b.idx, findCommOps(b.idx), StageMap{});
    ASSERT_EQ(m.groups.size(), 2u);
    EXPECT_EQ(m.groups[0].ops.size(), 2u);
    EXPECT_EQ(m.groups[1].ops.size(), 2u);
}

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <set>

#include "core/analysis/comm_matcher.h"
#include "core/analysis/stage_map.h"
#include "tests/core/analysis_test_builder.h"

using namespace dl;
using namespace dltest;

namespace {

T payload(dl::Io io, std::vector<std::int64_t> shape) {
    T t;
    t.io = io;
    t.shape = std::move(shape);
    return t;
}

}  // namespace

TEST(CommMatcher, ClassifiesHcclAndMsprobeNames) {
    EXPECT_EQ(classifyComm("Send", "Send-op1"), CommKind::Send);
    EXPECT_EQ(classifyComm("HcomSend", ""), CommKind::Send);
    EXPECT_EQ(classifyComm("Receive", ""), CommKind::Receive);
    EXPECT_EQ(classifyComm("HcomReceive", ""), CommKind::Receive);
    EXPECT_EQ(classifyComm("AllReduce", ""), CommKind::AllReduce);
    EXPECT_EQ(classifyComm("HcomAllGather", ""), CommKind::AllGather);
    EXPECT_EQ(classifyComm("ReduceScatter", ""), CommKind::ReduceScatter);
    EXPECT_EQ(classifyComm("HcomBroadcast", ""), CommKind::Broadcast);
    EXPECT_EQ(classifyComm("", "Distributed.all_reduce.0.forward"), CommKind::AllReduce);
    EXPECT_EQ(classifyComm("", "Distributed.isend.3.forward"), CommKind::Send);
    EXPECT_EQ(classifyComm("", "Distributed.irecv.3.forward"), CommKind::Receive);
    EXPECT_EQ(classifyComm("", "MintDistributed.broadcast.0.forward"), CommKind::Broadcast);
    EXPECT_EQ(classifyComm("", "AllGather-op12"), CommKind::AllGather);
    EXPECT_EQ(classifyComm("Mul", "Mul-op3"), CommKind::None);
    EXPECT_EQ(classifyComm("", "Functional.send_grad.0.forward"), CommKind::None);
    EXPECT_TRUE(isBackwardName("Gradients/Default/network/NormHead/SqrtGrad-op7"));
    EXPECT_TRUE(isBackwardName("Functional.linear.0.backward"));
    EXPECT_FALSE(isBackwardName("Default/network/Mul-op1"));
}

TEST(CommMatcher, FifoChannelsAndShapesPairSendsWithReceives) {
    IndexBuilder b;
    const auto s1 = b.op(0, 0, "Send", "Send-op1", {payload(Io::Input, {4, 8})}, 100);
    const auto s2 = b.op(0, 0, "Send", "Send-op2", {payload(Io::Input, {2})}, 200);
    const auto r2 = b.op(1, 0, "Receive", "Receive-op5", {payload(Io::Output, {2})}, 250);  // shapes decide
    const auto r1 = b.op(1, 0, "Receive", "Receive-op6", {payload(Io::Output, {4, 8})}, 260);
    const auto s3 = b.op(0, 1, "Send", "Send-op1", {payload(Io::Input, {4, 8})}, 300);
    const auto r3 = b.op(1, 1, "Receive", "Receive-op6", {payload(Io::Output, {4, 8})}, 350);
    const auto comm = findCommOps(b.idx);
    ASSERT_EQ(comm.size(), 6u);
    const CommMatch m = matchCommunication(b.idx, comm, StageMap{});
    ASSERT_EQ(m.pairs.size(), 3u);
    EXPECT_EQ(m.partner[s1], std::int32_t(r1));
    EXPECT_EQ(m.partner[s2], std::int32_t(r2));
    EXPECT_EQ(m.partner[s3], std::int32_t(r3)) << "pairs never cross iterations";
    EXPECT_TRUE(m.unmatchedReceives.empty());
}

TEST(CommMatcher, ExplicitPeersAndTags) {
    IndexBuilder b;
    const auto toTwo =
        b.op(0, 0, "Send", "Send-op1", {payload(Io::Input, {4})}, 0, "Default/Send-op1_dest_rank_2_sr_tag_7");
    const auto toOne =
        b.op(0, 0, "Send", "Send-op2", {payload(Io::Input, {4})}, 0, "Default/Send-op2_dest_rank_1_sr_tag_3");
    const auto atOne =
        b.op(1, 0, "Receive", "Receive-op1", {payload(Io::Output, {4})}, 0, "Default/Receive-op1_src_rank_0_sr_tag_3");
    const auto atTwo =
        b.op(2, 0, "Receive", "Receive-op1", {payload(Io::Output, {4})}, 0, "Default/Receive-op1_src_rank_0_sr_tag_7");
    const auto comm = findCommOps(b.idx);
    EXPECT_EQ(comm[0].explicitPeer, 2);
    EXPECT_EQ(comm[0].tag, 7);
    const CommMatch m = matchCommunication(b.idx, comm, StageMap{});
    EXPECT_EQ(m.partner[toTwo], std::int32_t(atTwo));
    EXPECT_EQ(m.partner[toOne], std::int32_t(atOne));
}

TEST(CommMatcher, StagesPairTensorParallelPositions) {
    // Two stages of two ranks: rank 0 -> 2 and rank 1 -> 3, identical shapes everywhere.
    IndexBuilder b;
    std::uint32_t send[2], recv[2];
    for (std::uint32_t r = 0; r < 2; ++r)
        send[r] = b.op(r, 0, "Send", "Send-op1", {payload(Io::Input, {8})}, 0, "Default/Send-op1");
    for (std::uint32_t r = 2; r < 4; ++r)
        recv[r - 2] = b.op(r, 0, "Receive", "Receive-op1", {payload(Io::Output, {8})}, 0, "Default/Receive-op1");
    StageMap stages;
    std::string error;
    ASSERT_TRUE(parseStageSpec("0-1:0,2-3:1", stages, error)) << error;
    const CommMatch m = matchCommunication(b.idx, findCommOps(b.idx), stages);
    EXPECT_EQ(m.partner[send[0]], std::int32_t(recv[0]));
    EXPECT_EQ(m.partner[send[1]], std::int32_t(recv[1]));
    EXPECT_EQ(m.ambiguous, 0u);
}

TEST(CommMatcher, UnmatchedReceiveWhenSenderMissing) {
    IndexBuilder b;
    const auto r = b.op(1, 0, "Receive", "Receive-op1", {payload(Io::Output, {8})});
    const CommMatch m = matchCommunication(b.idx, findCommOps(b.idx), StageMap{});
    EXPECT_TRUE(m.pairs.empty());
    ASSERT_EQ(m.unmatchedReceives.size(), 1u);
    EXPECT_EQ(m.unmatchedReceives[0], r);
}

TEST(CommMatcher, CollectivesGroupByOccurrence) {
    IndexBuilder b;
    for (std::uint32_t r = 0; r < 3; ++r) {
        b.op(r, 0, "AllReduce", "AllReduce-op1", {payload(Io::Input, {4}), payload(Io::Output, {4})});
        b.op(r, 0, "AllReduce", "AllReduce-op2", {payload(Io::Input, {4}), payload(Io::Output, {4})});
    }
    const CommMatch m = matchCommunication(b.idx, findCommOps(b.idx), StageMap{});
    ASSERT_EQ(m.groups.size(), 2u);
    EXPECT_EQ(m.groups[0].ops, (std::vector<std::uint32_t>{0, 2, 4}));
    EXPECT_EQ(m.groups[1].ops, (std::vector<std::uint32_t>{1, 3, 5}));
}

// PP2 x TP2 with clip by global norm: each stage compiles its own graph, so the global-norm
// AllReduce has one name per stage (shared by the TP lanes). Its result is the same on all four
// ranks, so it is one call; the TP AllReduce of each stage (different results) stays per stage.
TEST(CommMatcher, GlobalNormAcrossStagesIsOneCallUnderTensorParallel) {
    IndexBuilder b;
    const char* tpName[2] = {"layer_AllReduce-op12", "layer_AllReduce-op31"};  // one scope, different results
    const char* normName[2] = {"clip_grad-ClipByGlobalNorm_AllReduce-op78",
                               "clip_grad-ClipByGlobalNorm_AllReduce-op183"};
    std::vector<std::uint32_t> tp, norm;
    for (std::uint32_t r = 0; r < 4; ++r) {
        const std::uint32_t stage = r / 2;
        tp.push_back(b.op(r, 0, "AllReduce", tpName[stage],
                          {tensor(Io::Input, dataStats(1.0 + r)), tensor(Io::Output, dataStats(10.0 + stage))}));
        norm.push_back(b.op(r, 0, "AllReduce", normName[stage],
                            {tensor(Io::Input, dataStats(1.0 + r)), tensor(Io::Output, dataStats(7.5))}));
    }
    const CommMatch m = matchCommunication(b.idx, findCommOps(b.idx), StageMap{});
    ASSERT_EQ(m.groups.size(), 3u);
    EXPECT_EQ(m.groups[std::size_t(m.group[norm[0]])].ops, norm);
    EXPECT_EQ(m.groups[std::size_t(m.group[tp[0]])].ops, (std::vector<std::uint32_t>{tp[0], tp[1]}));
    EXPECT_EQ(m.groups[std::size_t(m.group[tp[2]])].ops, (std::vector<std::uint32_t>{tp[2], tp[3]}));
}

TEST(StageMap, ParsesSpecs) {
    StageMap m;
    std::string error;
    ASSERT_TRUE(parseStageSpec("0:0,1:1,2:2,3:3", m, error)) << error;
    EXPECT_EQ(m.stageCount, 4);
    EXPECT_EQ(m.stageOf(2), 2);
    EXPECT_EQ(m.stageOf(9), -1);
    ASSERT_TRUE(parseStageSpec("0-1:0, 2-3:1", m, error)) << error;
    EXPECT_EQ(m.stageOf(1), 0);
    EXPECT_EQ(m.stageOf(3), 1);
    EXPECT_EQ(m.source, "--stages");
    for (const char* bad : {"", "x", "0:0,0:1", "3-1:0", "0:", ":1", "0:0,,1:1", "-1:0", "0:0;1:1"}) {
        EXPECT_FALSE(parseStageSpec(bad, m, error)) << bad;
        EXPECT_FALSE(error.empty());
    }
}

TEST(StageMap, InfersFromDirectedTopologyAndLoss) {
    // 0 -> 1 -> 2 forward, backward sends go the other way; rank 2 holds the loss.
    IndexBuilder b;
    b.op(0, 0, "Send", "Send-op1", {payload(Io::Input, {8})}, 0, "Default/Send-op1");
    b.op(0, 0, "Receive", "Receive-op2", {payload(Io::Output, {8})}, 0, "Gradients/Default/Receive-op2");
    b.op(1, 0, "Receive", "Receive-op1", {payload(Io::Output, {8})}, 0, "Default/Receive-op1");
    b.op(1, 0, "Send", "Send-op3", {payload(Io::Input, {8})}, 0, "Default/Send-op3");
    b.op(1, 0, "Receive", "Receive-op4", {payload(Io::Output, {8})}, 0, "Gradients/Default/Receive-op4");
    b.op(1, 0, "Send", "Send-op2", {payload(Io::Input, {8})}, 0, "Gradients/Default/Send-op2");
    b.op(2, 0, "Receive", "Receive-op3", {payload(Io::Output, {8})}, 0, "Default/Receive-op3");
    b.op(2, 0, "SoftmaxCrossEntropyWithLogits", "SoftmaxCrossEntropyWithLogits-op9", {payload(Io::Output, {8})});
    b.op(2, 0, "Send", "Send-op4", {payload(Io::Input, {8})}, 0, "Gradients/Default/Send-op4");
    std::vector<std::string> warnings;
    StageMap m = inferStageMap(b.idx, findCommOps(b.idx), "", warnings);
    EXPECT_EQ(m.stageCount, 3);
    EXPECT_EQ(m.stageOf(0), 0);
    EXPECT_EQ(m.stageOf(1), 1);
    EXPECT_EQ(m.stageOf(2), 2);
    EXPECT_TRUE(m.confident);
    m = inferStageMap(b.idx, findCommOps(b.idx), "0:2,1:1,2:0", warnings);
    EXPECT_EQ(m.stageOf(0), 2) << "--stages overrides";
    m = inferStageMap(b.idx, findCommOps(b.idx), "garbage", warnings);
    EXPECT_EQ(m.stageOf(2), 2);
    ASSERT_FALSE(warnings.empty());
    EXPECT_NE(warnings.back().find("--stages ignored"), std::string::npos);
}

TEST(StageMap, LossHoldersAreTheLastBlockWithoutTopology) {
    IndexBuilder b;
    for (std::uint32_t r = 0; r < 4; ++r) b.op(r, 0, "MatMul", "MatMul-op1", {payload(Io::Output, {8})});
    b.op(4, 0, "Send", "Send-op1", {payload(Io::Input, {8})});  // a p2p op whose Receive is missing
    for (std::uint32_t r = 5; r < 6; ++r)
        b.op(r, 0, "SparseSoftmaxCrossEntropyWithLogits", "Loss-op1", {payload(Io::Output, {8})});
    b.op(5, 0, "MatMul", "MatMul-op1", {payload(Io::Output, {8})}, 0, "Default/network/NormHead/MatMul-op1");
    std::vector<std::string> warnings;
    StageMap m = inferStageMap(b.idx, findCommOps(b.idx), "", warnings);
    EXPECT_EQ(m.stageCount, 6);
    EXPECT_EQ(m.stageOf(5), 5);
    EXPECT_FALSE(m.confident);
}

// findCommOps and the stage map's loss scan answer each interned string once; per op they must
// give what classifyComm / isLossOrHeadOp give for that op's own strings.
TEST(CommMatcher, PerStringAnswersEqualThePerOpTests) {
    const std::vector<std::pair<std::string, std::string>> forms = {
        {"Send", "Send-op1"},
        {"HcomReceive", "Default/pipeline_recv/Receive-op2"},
        {"", "Distributed.all_reduce.0.forward"},
        {"", "MintDistributed.broadcast.3.backward"},
        {"", "AllGather-op12"},
        {"Mul", "Mul-op3"},
        {"", "Functional.send_grad.0.forward"},
        {"SoftmaxCrossEntropyWithLogits", "loss-op9"},
        {"MatMul", "Default/network/lm_head-Linear/MatMul-op4"},
        {"RmsNorm", "Gradients/NormHead/RmsNorm-op5"},
        {"Add", "Default/NLLLoss-op6"},
        {"nllloss", "x"},
        {"Cast", "Cast-op7"},
    };
    IndexBuilder b;
    std::mt19937 rng(11);
    for (std::uint32_t rank = 0; rank < 6; ++rank)
        for (std::uint32_t it = 0; it < 3; ++it)
            for (int k = 0; k < 30; ++k) {
                // Ranks 0-2 draw from every form, ranks 3-5 never from the loss/head ones.
                const std::size_t pick = rng() % (rank < 3 ? forms.size() : 7);
                const auto& [type, name] = forms[pick];
                b.op(rank, it, type, name, {tensor(Io::Input), tensor(Io::Output)}, 0,
                     k % 4 == 0 ? "Gradients/Default/" + name : "");
            }
    const DumpIndex& ix = b.idx;
    std::vector<std::pair<std::uint32_t, CommKind>> want;
    std::set<std::uint32_t> lossRanks;
    for (std::uint32_t i = 0; i < ix.ops.size(); ++i) {
        const OpRecord& o = ix.ops[i];
        const CommKind k = classifyComm(ix.strings.view(o.type), ix.strings.view(o.name));
        if (k != CommKind::None) want.push_back({i, k});
        if (isLossOrHeadOp(ix, o)) lossRanks.insert(o.rank);
    }
    std::vector<std::pair<std::uint32_t, CommKind>> got;
    for (const CommOp& c : findCommOps(ix)) got.push_back({c.op, c.kind});
    EXPECT_EQ(got, want);
    EXPECT_FALSE(want.empty());
    EXPECT_EQ(lossOrHeadRanks(ix), lossRanks);
    EXPECT_FALSE(lossRanks.empty());
    EXPECT_LT(lossRanks.size(), 6u);
}

// findCommOps reads the peer rank, tag and direction once per interned name and scope; the answer
// must equal the per-op search of "lower(name)|lower(scope)" (first key in order that is followed
// by separators and digits, the name's occurrence before the scope's).
TEST(CommMatcher, PerStringPeerAndTagEqualTheSearchOfNameAndScope) {
    const std::vector<std::string> names = {"Send-op1",
                                            "Receive-op2",
                                            "Send_dest_rank_3-op4",
                                            "Receive-SRC_RANK=5-op5",
                                            "Send-peer:7_sr_tag_2-op6",
                                            "Receive-peer_rank-op7",
                                            "Send-dest_rank-x9-op8",
                                            "Receive-sr_tag:11-op9",
                                            "Send-dest_",
                                            "Send-peer"};
    const std::vector<std::string> scopes = {"",
                                             "Default/pipeline/send_dest_rank_1",
                                             "Gradients/recv/src_rank-2_sr_tag-4",
                                             "rank3_Peer=6",
                                             "Default/tag_9/peer_rank:0",
                                             "Gradients/x",
                                             "rank_4/sr_tag_x",
                                             "Default/network/peer_rank_12345678"};
    // The reference: the per-op search the memo replaced.
    const auto intAfter = [](const std::string& s, const std::string& key) {
        for (std::size_t pos = s.find(key); pos != std::string::npos; pos = s.find(key, pos + 1)) {
            std::size_t i = pos + key.size();
            while (i < s.size() && (s[i] == '=' || s[i] == ':' || s[i] == '_' || s[i] == '-')) ++i;
            if (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
                int v = 0;
                while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && v < 1000000)
                    v = v * 10 + (s[i++] - '0');
                return v;
            }
        }
        return -1;
    };
    const auto lowered = [](std::string s) {
        for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
        return s;
    };
    IndexBuilder b;
    std::mt19937 rng(13);
    for (std::uint32_t rank = 0; rank < 4; ++rank)
        for (std::uint32_t it = 0; it < 2; ++it)
            for (int k = 0; k < 40; ++k) {
                const std::string& name = names[rng() % names.size()];
                b.op(rank, it, name.rfind("Send", 0) == 0 ? "Send" : "Receive", name,
                     {tensor(Io::Input), tensor(Io::Output)}, 0, scopes[rng() % scopes.size()]);
            }
    const DumpIndex& ix = b.idx;
    const std::vector<CommOp> got = findCommOps(ix);
    ASSERT_EQ(got.size(), ix.ops.size());
    int withPeer = 0, withTag = 0;
    for (const CommOp& c : got) {
        const OpRecord& o = ix.ops[c.op];
        const std::string name(ix.strings.view(o.name)), scope(ix.strings.view(o.scope));
        const std::string text = lowered(name) + "|" + lowered(scope);
        int peer = -1;
        for (const char* key : {"dest_rank", "src_rank", "peer_rank", "peer"})
            if ((peer = intAfter(text, key)) >= 0) break;
        EXPECT_EQ(c.explicitPeer, peer) << name << " | " << scope;
        EXPECT_EQ(c.tag, intAfter(text, "sr_tag")) << name << " | " << scope;
        EXPECT_EQ(c.backward, isBackwardName(name) || isBackwardName(scope)) << name << " | " << scope;
        withPeer += peer >= 0;
        withTag += c.tag >= 0;
    }
    EXPECT_GT(withPeer, 0);
    EXPECT_GT(withTag, 0);
}

// Iterations are matched on all cores and merged in order: over 40 iterations of Sends,
// Receives and two AllReduces on three ranks, each group holds its iteration's calls, group ids
// are global and in iteration order, and each Receive has its own iteration's Send. The pairs
// alone (matchSendReceive, for the stage map) are the same, without groups.
TEST(CommMatcher, ManyIterationsMergeInOrder) {
    IndexBuilder b;
    constexpr std::uint32_t kIters = 40;
    std::vector<std::array<std::uint32_t, 2>> sendRecv;            // per iteration
    std::vector<std::array<std::vector<std::uint32_t>, 2>> calls;  // per iteration: AllReduce-op1, -op2 of each rank
    sendRecv.resize(kIters);
    calls.resize(kIters);
    for (std::uint32_t r = 0; r < 3; ++r)
        for (std::uint32_t it = 0; it < kIters; ++it) {
            const std::int64_t t = 1000 * it;
            if (r == 0) sendRecv[it][0] = b.op(r, it, "Send", "Send-op3", {payload(Io::Input, {4, 8})}, t + 1);
            if (r == 1) sendRecv[it][1] = b.op(r, it, "Receive", "Receive-op4", {payload(Io::Output, {4, 8})}, t + 2);
            calls[it][0].push_back(
                b.op(r, it, "AllReduce", "AllReduce-op1", {payload(Io::Input, {4}), payload(Io::Output, {4})}, t + 3));
            calls[it][1].push_back(
                b.op(r, it, "AllReduce", "AllReduce-op2", {payload(Io::Input, {4}), payload(Io::Output, {4})}, t + 4));
        }
    const auto comm = findCommOps(b.idx);
    const CommMatch m = matchCommunication(b.idx, comm, StageMap{});
    ASSERT_EQ(m.groups.size(), 2 * kIters);
    ASSERT_EQ(m.pairs.size(), kIters);
    for (std::uint32_t it = 0; it < kIters; ++it) {
        EXPECT_EQ(m.partner[sendRecv[it][0]], std::int32_t(sendRecv[it][1])) << "iteration " << it;
        EXPECT_EQ(m.pairs[it].send, sendRecv[it][0]);
        for (std::uint32_t k = 0; k < 2; ++k) {
            const std::int32_t g = m.group[calls[it][k].front()];
            ASSERT_GE(g, 0);
            EXPECT_EQ(std::uint32_t(g), 2 * it + k) << "groups in iteration order";
            EXPECT_EQ(m.groups[std::size_t(g)].iteration, it);
            EXPECT_EQ(m.groups[std::size_t(g)].ops, calls[it][k]);
            for (std::uint32_t op : calls[it][k]) EXPECT_EQ(m.group[op], g);
        }
    }
    const CommMatch p = matchSendReceive(b.idx, comm, StageMap{});
    EXPECT_TRUE(p.groups.empty());
    EXPECT_TRUE(std::all_of(p.group.begin(), p.group.end(), [](std::int32_t g) { return g == -1; }));
    EXPECT_EQ(p.partner, m.partner);
    ASSERT_EQ(p.pairs.size(), m.pairs.size());
    for (std::size_t i = 0; i < p.pairs.size(); ++i) {
        EXPECT_EQ(p.pairs[i].send, m.pairs[i].send);
        EXPECT_EQ(p.pairs[i].recv, m.pairs[i].recv);
    }
    EXPECT_EQ(p.unmatchedReceives, m.unmatchedReceives);
    EXPECT_EQ(p.unmatchedSends, m.unmatchedSends);
}

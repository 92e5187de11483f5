#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <unistd.h>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "tests/core/analysis_test_builder.h"

using namespace dl;
using namespace dltest;

namespace {

T p(Io io, TensorStats s = dataStats(2.0)) { return tensor(io, s); }
const TensorStats kInf = dataStats(3.0, 5);
const TensorStats kSat = dataStats(65504.0, 0, 0, 50);

std::string opType(const DumpIndex& idx, std::uint32_t op) { return idx.strings.str(idx.ops[op].type); }

// The motivating case on four pipeline stages (rank r = stage r), iterations 10 and 11.
// Rank 3's clock runs 1 s ahead. Iteration 10: SqrtGrad in the NormHead backward on the last
// stage overflows; its backward Send carries the inf to rank 2, whose Receive inherits it.
// Decoys: a near-limit (60000) fp16 tensor early on rank 1, and an independent overflow on
// rank 0 whose raw timestamp is far smaller but which happens causally later.
struct Pipeline {
    IndexBuilder b;
    std::uint32_t sqrtGrad = 0, decoyExp = 0, recvOnTwo = 0, nearLimit = 0;
    static constexpr std::int64_t kAhead = 1000000;

    Pipeline() {
        const std::string G = "Gradients/Default/network/";
        // rank 0
        b.op(0, 10, "MatMul", "MatMul-op1", {p(Io::Input), p(Io::Output)}, 100, "Default/network/layer0/MatMul-op1");
        b.op(0, 10, "Send", "Send-op2", {p(Io::Input)}, 110, "Default/Send-op2");
        b.op(0, 10, "Receive", "Receive-op3", {p(Io::Output)}, 900, G + "Receive-op3");
        decoyExp = b.op(0, 10, "Exp", "Exp-op50", {p(Io::Input), p(Io::Output, kInf)}, 910, G + "layer0/Exp-op50");
        b.op(0, 11, "MatMul", "MatMul-op1", {p(Io::Input, kInf), p(Io::Output, kInf)}, 2100,
             "Default/network/layer0/MatMul-op1");
        // rank 1
        b.op(1, 10, "Receive", "Receive-op1", {p(Io::Output)}, 120, "Default/Receive-op1");
        nearLimit = b.op(1, 10, "MatMul", "MatMul-op2", {p(Io::Input), p(Io::Output, dataStats(60000.0))}, 130,
                         "Default/network/layer1/MatMul-op2");
        b.op(1, 10, "Send", "Send-op3", {p(Io::Input)}, 140, "Default/Send-op3");
        b.op(1, 10, "Receive", "Receive-op4", {p(Io::Output)}, 800, G + "Receive-op4");
        b.op(1, 10, "Send", "Send-op5", {p(Io::Input)}, 810, G + "Send-op5");
        b.op(1, 11, "MatMul", "MatMul-op2", {p(Io::Input, kInf), p(Io::Output, kInf)}, 2130,
             "Default/network/layer1/MatMul-op2");
        // rank 2
        b.op(2, 10, "Receive", "Receive-op1", {p(Io::Output)}, 150, "Default/Receive-op1");
        b.op(2, 10, "Send", "Send-op2", {p(Io::Input)}, 160, "Default/Send-op2");
        recvOnTwo = b.op(2, 10, "Receive", "Receive-op3", {p(Io::Output, kInf)}, 700, G + "Receive-op3");
        b.op(2, 10, "MatMul", "MatMul-op4", {p(Io::Input, kInf), p(Io::Output, kInf)}, 710, G + "layer2/MatMul-op4");
        b.op(2, 10, "Send", "Send-op5", {p(Io::Input)}, 720, G + "Send-op5");
        b.op(2, 11, "Receive", "Receive-op1", {p(Io::Output, kInf)}, 2150, "Default/Receive-op1");
        // rank 3, clock ahead
        b.op(3, 10, "Receive", "Receive-op1", {p(Io::Output)}, 170 + kAhead, "Default/Receive-op1");
        b.op(3, 10, "SoftmaxCrossEntropyWithLogits", "SoftmaxCrossEntropyWithLogits-op2", {p(Io::Input), p(Io::Output)},
             180 + kAhead, "Default/network/loss/SoftmaxCrossEntropyWithLogits-op2");
        sqrtGrad = b.op(3, 10, "SqrtGrad", "SqrtGrad-op42",
                        {p(Io::Input, dataStats(0.25)), p(Io::Input, dataStats(47580.0)), p(Io::Output, kInf)},
                        500 + kAhead, G + "NormHead/SqrtGrad-op42");
        b.op(3, 10, "MatMul", "MatMul-op43", {p(Io::Input, kInf), p(Io::Output, kInf)}, 510 + kAhead,
             G + "NormHead/MatMul-op43");
        b.op(3, 10, "Send", "Send-op44", {p(Io::Input, kInf)}, 600 + kAhead, G + "Send-op44");
        b.op(3, 11, "SqrtGrad", "SqrtGrad-op42", {p(Io::Input, kInf), p(Io::Input), p(Io::Output, kInf)}, 2500 + kAhead,
             G + "NormHead/SqrtGrad-op42");
    }
};

bool chainHas(const AnalysisResult& r, const DumpIndex& idx, ChainRole role, std::uint32_t rank,
              const std::string& type) {
    return std::any_of(r.chain.begin(), r.chain.end(), [&](const ChainStep& s) {
        return s.role == role && s.at.rank == rank && opType(idx, s.at.op) == type;
    });
}

}  // namespace

TEST(OverflowAnalyzer, BackwardOriginOnLastStageWinsByCausality) {
    Pipeline pl;
    const AnalysisResult r = analyze(pl.b.idx);
    ASSERT_TRUE(r.overflow);
    ASSERT_TRUE(r.firstOverflow);
    EXPECT_EQ(r.firstOverflow->op, pl.sqrtGrad) << opType(pl.b.idx, r.firstOverflow->op);
    EXPECT_EQ(r.firstOverflow->rank, 3u);
    EXPECT_EQ(r.firstOverflow->stage, 3);
    EXPECT_EQ(r.firstOverflow->iteration, 10u);
    EXPECT_EQ(r.firstOverflow->kind, AnomalyKind::Inf);
    EXPECT_EQ(pl.b.idx.tensors[r.firstOverflow->tensor].io, Io::Output);
    EXPECT_EQ(r.stages.stageCount, 4);
    EXPECT_EQ(r.stages.source, "send/receive topology");
    // The clock model sees rank 3 one second ahead of rank 2.
    const std::int64_t skew = r.clockOffsetUs.at(3) - r.clockOffsetUs.at(2);
    EXPECT_GE(skew, 999900);
    EXPECT_LE(skew, 1000010);
    // Chain: origin -> Send on rank 3 -> Receive on rank 2 (inherited, never an origin) -> MatMul.
    ASSERT_GE(r.chain.size(), 4u);
    EXPECT_EQ(r.chain[0].role, ChainRole::Origin);
    EXPECT_EQ(r.chain[0].at.op, pl.sqrtGrad);
    EXPECT_TRUE(chainHas(r, pl.b.idx, ChainRole::Send, 3, "Send"));
    EXPECT_TRUE(chainHas(r, pl.b.idx, ChainRole::Receive, 2, "Receive"));
    EXPECT_TRUE(chainHas(r, pl.b.idx, ChainRole::Propagated, 2, "MatMul"));
    // Rank 0's independent Exp overflow in iteration 10 is linked to nothing: listed, and said so.
    const auto exp =
        std::find_if(r.chain.begin(), r.chain.end(), [&](const ChainStep& s) { return s.at.op == pl.decoyExp; });
    ASSERT_NE(exp, r.chain.end());
    EXPECT_EQ(exp->via, ChainVia::ClockOnly);
    // Stage 1 goes bad only in the next iteration, with no message in the dump that explains it.
    EXPECT_TRUE(chainHas(r, pl.b.idx, ChainRole::Propagated, 1, "MatMul"));
    for (std::size_t i = 1; i < r.chain.size(); ++i) EXPECT_LT(r.chain[i].causedBy, int(i));
    EXPECT_EQ(r.persistence, Persistence::Persistent);
    ASSERT_TRUE(r.firstBadIteration);
    EXPECT_EQ(*r.firstBadIteration, 10u);
    // The near-limit decoy is listed as an early warning, not taken for the overflow.
    ASSERT_FALSE(r.nearLimit.empty());
    EXPECT_EQ(r.nearLimit[0].op, pl.nearLimit);
    EXPECT_NEAR(r.nearLimit[0].fp16MaxShare, 60000.0 / 65504.0, 1e-9);
    // No dumped data: the replay is unavailable and says its advice is a rule of thumb.
    ASSERT_TRUE(r.replay);
    EXPECT_FALSE(r.replay->available);
    EXPECT_FALSE(r.replay->recommendationFromReplay);
    EXPECT_NE(r.replay->recommendation.find("not a replay"), std::string::npos);
    // The text says "unavailable" once, then why ("unavailable: replay unavailable: ..." read twice).
    const std::string text = toText(pl.b.idx, r);
    const std::size_t at = text.find("unavailable: ");
    ASSERT_NE(at, std::string::npos) << text;
    EXPECT_NE(text.find(r.replay->unavailableReason, at), std::string::npos) << text;
    EXPECT_EQ(text.find("unavailable", at + 1), std::string::npos) << text;
    EXPECT_EQ(r.replay->unavailableReason.find("unavailable"), std::string::npos) << r.replay->unavailableReason;
}

TEST(OverflowAnalyzer, JsonContract) {
    Pipeline pl;
    const AnalysisResult r = analyze(pl.b.idx);
    const nlohmann::json j = toJson(pl.b.idx, r);
    EXPECT_EQ(j["schema"], "dumplens.analysis/1");
    EXPECT_EQ(j["verdict"], "overflow");
    const auto& f = j["first_overflow"];
    EXPECT_EQ(f["rank"], 3);
    EXPECT_EQ(f["stage"], 3);
    EXPECT_EQ(f["iteration"], 10);
    EXPECT_EQ(f["op_type"], "SqrtGrad");
    EXPECT_EQ(f["op_name"], "SqrtGrad-op42");
    EXPECT_EQ(f["tensor"], "output.0");
    EXPECT_EQ(f["kind"], "inf");
    EXPECT_EQ(f["timestamp_us"], 500 + Pipeline::kAhead);
    ASSERT_TRUE(j["chain"].is_array());
    EXPECT_EQ(j["chain"][0]["role"], "origin");
    for (const auto& s : j["chain"]) {
        for (const char* key : {"rank", "stage", "op_type", "op_name", "tensor", "timestamp_us", "role"})
            EXPECT_TRUE(s.contains(key)) << key;
    }
    EXPECT_TRUE(j["replay"].is_object());
    EXPECT_TRUE(j["replay"]["results"].is_array());
    EXPECT_TRUE(j["warnings"].is_array());
    EXPECT_EQ(j["persistence"]["kind"], "persistent");
    EXPECT_EQ(j["near_limit"]["total"], 2);  // the 60000 decoy and SqrtGrad's dy (47580)
    EXPECT_EQ(j["stages"]["ranks"]["3"], 3);
    const std::string text = toText(pl.b.idx, r);
    EXPECT_NE(text.find("Verdict: OVERFLOW"), std::string::npos);
    EXPECT_NE(text.find("SqrtGrad SqrtGrad-op42"), std::string::npos);
    EXPECT_NE(text.find("Chain:"), std::string::npos);
    EXPECT_NE(text.find("Near the fp16 limit"), std::string::npos);
}

TEST(OverflowAnalyzer, IterationOptionAnalysesThatIteration) {
    Pipeline pl;
    AnalysisOptions o;
    o.iteration = 11;
    const AnalysisResult r = analyze(pl.b.idx, o);
    ASSERT_TRUE(r.firstOverflow);
    EXPECT_EQ(r.firstOverflow->iteration, 11u);
    EXPECT_FALSE(r.warnings.empty()) << "nothing in iteration 11 has clean inputs: say so";
}

TEST(OverflowAnalyzer, ForwardOriginInSaturationMode) {
    IndexBuilder b;
    const auto exp = b.op(0, 0, "Exp", "Exp-op3", {p(Io::Input, dataStats(12.0)), p(Io::Output, kSat)}, 10,
                          "Default/network/Exp-op3");
    b.op(0, 0, "Send", "Send-op4", {p(Io::Input, kSat)}, 20, "Default/Send-op4");
    const auto recv = b.op(1, 0, "Receive", "Receive-op1", {p(Io::Output, kSat)}, 30, "Default/Receive-op1");
    b.op(1, 0, "Mul", "Mul-op2", {p(Io::Input, kSat), p(Io::Output, kSat)}, 40, "Default/network/Mul-op2");
    const AnalysisResult r = analyze(b.idx);
    ASSERT_TRUE(r.firstOverflow);
    EXPECT_EQ(r.firstOverflow->op, exp);
    EXPECT_EQ(r.firstOverflow->kind, AnomalyKind::Saturated);
    ASSERT_EQ(r.chain.size(), 4u);
    EXPECT_EQ(r.chain[1].role, ChainRole::Send);
    EXPECT_EQ(r.chain[2].role, ChainRole::Receive);
    EXPECT_EQ(r.chain[2].at.op, recv);
    EXPECT_EQ(r.chain[3].role, ChainRole::Propagated);
    EXPECT_EQ(r.persistence, Persistence::SingleIteration);
    EXPECT_EQ(toJson(b.idx, r)["first_overflow"]["kind"], "saturated");
}

TEST(OverflowAnalyzer, ReceiveWithMissingSenderIsNeverAnOrigin) {
    IndexBuilder b;
    b.op(1, 0, "Receive", "Receive-op1", {p(Io::Output, kInf)}, 30);
    b.op(1, 0, "Mul", "Mul-op2", {p(Io::Input, kInf), p(Io::Output, kInf)}, 40);
    const AnalysisResult r = analyze(b.idx);
    ASSERT_TRUE(r.firstOverflow);
    ASSERT_FALSE(r.chain.empty());
    EXPECT_EQ(r.chain[0].role, ChainRole::Receive);
    EXPECT_TRUE(std::any_of(r.warnings.begin(), r.warnings.end(),
                            [](const std::string& w) { return w.find("not in the dump") != std::string::npos; }));
}

TEST(OverflowAnalyzer, OverflowOnlyDumpFromOpdebugRecords) {
    IndexBuilder b;
    b.idx.meta.dumpMode = "tensor, overflow only";
    const auto a5 = b.op(0, 5, "Add", "Add-op3", {}, 2000);
    b.opdebug(a5, 0x20, 2000);
    const auto a6 = b.op(0, 6, "Add", "Add-op3", {}, 3000);
    b.opdebug(a6, 0x20, 3000);
    const auto a9 = b.op(0, 9, "Add", "Add-op3", {}, 4000);
    b.opdebug(a9, 0x20, 4000);
    const auto m5 = b.op(1, 5, "Mul", "Mul-op9", {}, 1500);
    b.opdebug(m5, 0x100, 1500);
    const AnalysisResult r = analyze(b.idx);
    ASSERT_TRUE(r.firstOverflow);
    EXPECT_EQ(r.firstOverflow->op, m5);
    EXPECT_EQ(r.firstOverflow->kind, AnomalyKind::Opdebug);
    EXPECT_NE(r.firstOverflow->opdebugStatus.find("fp32->fp16"), std::string::npos);
    EXPECT_EQ(r.persistence, Persistence::Intermittent) << "iterations 7 and 8 were not dumped: clean";
    EXPECT_FALSE(r.warnings.empty()) << "cross-rank order from raw clocks only is thin evidence";
    const nlohmann::json j = toJson(b.idx, r);
    EXPECT_EQ(j["first_overflow"]["kind"], "opdebug");
    EXPECT_EQ(j["first_overflow"]["tensor"], "output.0");
}

TEST(OverflowAnalyzer, CleanRunKeepsHeadroomWarning) {
    IndexBuilder b;
    b.op(0, 0, "MatMul", "MatMul-op1", {p(Io::Input), p(Io::Output, dataStats(40000.0))}, 10);
    T wide = p(Io::Input, dataStats(50000.0));
    wide.dtype = DType::Float32;
    b.op(0, 0, "Cast", "Cast-op2", {wide, p(Io::Output, dataStats(50000.0))}, 20);
    b.op(0, 0, "Mul", "Mul-op3", {p(Io::Input), p(Io::Output, dataStats(100.0))}, 30);
    b.op(0, 1, "Mul", "Mul-op3", {p(Io::Input), p(Io::Output, dataStats(100.0))}, 30);
    const AnalysisResult r = analyze(b.idx);
    EXPECT_FALSE(r.overflow);
    EXPECT_FALSE(r.firstOverflow);
    EXPECT_TRUE(r.chain.empty());
    EXPECT_FALSE(r.replay);
    EXPECT_EQ(r.anomalousTensors, 0u);
    EXPECT_EQ(r.nearLimitTotal, 3u);
    EXPECT_TRUE(
        std::any_of(r.nearLimit.begin(), r.nearLimit.end(), [](const NearLimitEntry& e) { return e.castToFp16; }));
    const nlohmann::json j = toJson(b.idx, r);
    EXPECT_EQ(j["verdict"], "clean");
    EXPECT_TRUE(j["first_overflow"].is_null());
    EXPECT_TRUE(j["replay"].is_null());
    EXPECT_EQ(j["near_limit"]["tensors"].size(), 3u);
    EXPECT_NE(toText(b.idx, r).find("Verdict: clean"), std::string::npos);
}

TEST(OverflowAnalyzer, TransientWhenLaterIterationsRecover) {
    IndexBuilder b;
    b.op(0, 1, "Mul", "Mul-op3", {p(Io::Input), p(Io::Output, kInf)}, 10);
    b.op(0, 2, "Mul", "Mul-op3", {p(Io::Input), p(Io::Output)}, 20);
    b.op(0, 3, "Mul", "Mul-op3", {p(Io::Input), p(Io::Output)}, 30);
    const AnalysisResult r = analyze(b.idx);
    EXPECT_EQ(r.persistence, Persistence::Transient);
    ASSERT_EQ(r.iterations.size(), 3u);
    EXPECT_TRUE(r.iterations[0].overflow);
    EXPECT_FALSE(r.iterations[1].overflow);
}

TEST(OverflowAnalyzer, TensorParallelPeersAreOneStep) {
    IndexBuilder b;
    const std::string G = "Gradients/Default/network/NormHead/";
    for (std::uint32_t rank = 0; rank < 2; ++rank)
        b.op(rank, 0, "MatMul", "MatMul-op1", {p(Io::Input), p(Io::Output)}, 10);
    std::uint32_t sg[2];
    for (std::uint32_t rank = 2; rank < 4; ++rank) {
        b.op(rank, 0, "SoftmaxCrossEntropyWithLogits", "Loss-op1", {p(Io::Output)}, 50);
        sg[rank - 2] = b.op(rank, 0, "SqrtGrad", "SqrtGrad-op42", {p(Io::Input), p(Io::Input), p(Io::Output, kInf)},
                            100 + rank, G + "SqrtGrad-op42");
    }
    AnalysisOptions o;
    o.stages = "0-1:0,2-3:1";
    const AnalysisResult r = analyze(b.idx, o);
    ASSERT_TRUE(r.firstOverflow);
    EXPECT_EQ(r.firstOverflow->op, sg[0]);
    EXPECT_EQ(r.firstOverflow->stage, 1);
    EXPECT_EQ(r.firstOverflow->peerRanks, std::vector<std::uint32_t>{3});
    EXPECT_EQ(r.stages.source, "--stages");
    EXPECT_EQ(
        std::count_if(r.chain.begin(), r.chain.end(), [](const ChainStep& s) { return s.role == ChainRole::Origin; }),
        1);
}

TEST(OverflowAnalyzer, EmptyAndMalformedIndexDoNotCrash) {
    DumpIndex empty;
    AnalysisResult r = analyze(empty);
    EXPECT_FALSE(r.overflow);
    IndexBuilder b;
    b.op(0, 0, "Mul", "Mul-op1", {p(Io::Output, kInf)});
    b.idx.ops[0].tensorCount = 99;  // points past the tensor table
    r = analyze(b.idx);
    EXPECT_FALSE(r.warnings.empty());
    EXPECT_FALSE(r.overflow);
}

TEST(OverflowAnalyzer, SingleValueAtLimitCountsOnlyWhereProduced) {
    const TensorStats one = dataStats(65504.0, 0, 0, 1);
    IndexBuilder copied;  // a legitimate 65504 copied along: no overflow
    copied.op(0, 0, "Gather", "Gather-op1", {p(Io::Input, one), p(Io::Input), p(Io::Output, one)}, 10);
    copied.op(0, 0, "Receive", "Receive-op2", {p(Io::Output, one)}, 20);
    AnalysisResult r = analyze(copied.idx);
    EXPECT_FALSE(r.overflow);
    EXPECT_GE(r.nearLimitTotal, 2u);
    IndexBuilder produced;  // inputs far from the limit, one output value pinned at 65504
    const auto op =
        produced.op(0, 0, "SqrtGrad", "SqrtGrad-op1",
                    {p(Io::Input, dataStats(0.3)), p(Io::Input, dataStats(47580.0)), p(Io::Output, one)}, 10);
    r = analyze(produced.idx);
    ASSERT_TRUE(r.firstOverflow);
    EXPECT_EQ(r.firstOverflow->op, op);
    EXPECT_EQ(r.firstOverflow->kind, AnomalyKind::Saturated);
    EXPECT_TRUE(std::any_of(r.warnings.begin(), r.warnings.end(),
                            [](const std::string& w) { return w.find("single value") != std::string::npos; }));
}

// The classification runs in blocks of kWorkStride ops on all cores: over several blocks, the
// counts, the near-limit list (ascending tensors, the capped list by headroom), the suspects'
// proof and the warnings are those of the ops as built, in op order.
TEST(OverflowAnalyzer, ClassificationOverManyBlocksKeepsOpOrder) {
    IndexBuilder b;
    constexpr std::uint32_t kCount = 3 * std::uint32_t(kWorkStride) + 211;
    std::vector<std::uint32_t> nearTensors;  // fp16 outputs near the limit, and fp32 inputs of Casts to fp16
    std::uint64_t bad = 0;
    std::uint32_t firstBadOp = kNoIndex;
    std::vector<std::uint32_t> skipped;  // ops pointing past the tensor table
    double largest = 0;
    constexpr std::uint32_t kHalf = (kCount + 1) / 2;  // rank 0, then rank 1; three iterations each
    for (std::uint32_t i = 0; i < kCount; ++i) {
        const std::uint32_t rank = i / kHalf, iter = (i % kHalf) / 2084;
        const auto first = std::uint32_t(b.idx.tensors.size());
        if (i % 777 == 5 || i % 1000 == 17) largest = 40000.0 + i;
        if (i % 777 == 5) {
            T wide = p(Io::Input, dataStats(40000.0 + i));
            wide.dtype = DType::Float32;
            b.op(rank, iter, "Cast", "Cast-op" + std::to_string(i), {wide, p(Io::Output, dataStats(2.0))}, 10 + i);
            nearTensors.push_back(first);
        } else if (i % 1000 == 17) {
            b.op(rank, iter, "MatMul", "MatMul-op" + std::to_string(i),
                 {p(Io::Input), p(Io::Output, dataStats(40000.0 + i))}, 10 + i);
            nearTensors.push_back(first + 1);
        } else if (i % 3001 == 2999) {
            const auto op =
                b.op(rank, iter, "Exp", "Exp-op" + std::to_string(i), {p(Io::Input), p(Io::Output, kInf)}, 10 + i);
            ++bad;
            if (firstBadOp == kNoIndex) firstBadOp = op;
        } else {
            b.op(rank, iter, "Mul", "Mul-op" + std::to_string(i), {p(Io::Input), p(Io::Output)}, 10 + i);
        }
        if (i == kWorkStride + 3 || i == 2 * kWorkStride + 9) skipped.push_back(i);
    }
    // Two Muls in the second and third block point past the tensor table: skipped with a warning each, in op order.
    for (std::uint32_t op : skipped) b.idx.ops[op].firstTensor = std::uint32_t(b.idx.tensors.size());
    const AnalysisResult r = analyze(b.idx);
    ASSERT_FALSE(r.cancelled);
    EXPECT_EQ(r.tensorsExamined, b.idx.tensors.size() - 2 * skipped.size());
    EXPECT_EQ(r.anomalousTensors, bad);
    EXPECT_EQ(r.anomalousOps, bad);
    EXPECT_EQ(r.nearLimitTensors, nearTensors);
    EXPECT_EQ(r.nearLimitTotal, nearTensors.size());
    ASSERT_EQ(r.nearLimit.size(), std::min<std::size_t>(100, nearTensors.size()));
    EXPECT_TRUE(std::is_sorted(
        r.nearLimit.begin(), r.nearLimit.end(),
        [](const NearLimitEntry& x, const NearLimitEntry& y) { return x.fp16MaxShare > y.fp16MaxShare; }));
    EXPECT_EQ(r.nearLimit.front().maxAbs, largest);
    std::vector<std::string> skipWarnings;
    for (const std::string& w : r.warnings)
        if (w.find("points past the tensor table") != std::string::npos) skipWarnings.push_back(w);
    ASSERT_EQ(skipWarnings.size(), 2u);
    EXPECT_NE(skipWarnings[0].find("Mul-op" + std::to_string(skipped[0]) + " "), std::string::npos);
    EXPECT_NE(skipWarnings[1].find("Mul-op" + std::to_string(skipped[1]) + " "), std::string::npos);
    ASSERT_TRUE(r.firstOverflow);
    EXPECT_EQ(r.firstOverflow->op, firstBadOp);
}

// A mock of MindSpore's CPU writer: Mul runs in float32 and makes 64 * 65504; the Cast MindSpore
// inserted rounds it to fp16 inf. The Cast is the first inf, but the op to name is Mul: in the
// Recommendation (not "run Cast in bfloat16"), as value_made_by, and the Cast's input is listed as
// past the fp16 limit, not as "near" it with "an early warning, not an overflow".
TEST(OverflowAnalyzer, InsertedCastOfAValuePastTheLimitNamesTheOpThatMadeIt) {
    const std::string dir = ::testing::TempDir() + "/dl_castmaker_" + std::to_string(::getpid());
    std::filesystem::create_directories(dir);
    IndexBuilder b;
    b.idx.root = dir;
    const float big = 64.0f * 65504.0f;
    T x = in(0, dataStats(2048.0), DType::Float32), y = in(1, dataStats(2048.0), DType::Float32);
    T made = out(0, dataStats(big), DType::Float32);
    T castIn = in(0, dataStats(big), DType::Float32), castOut = out(0, dataStats(1.0, 1));
    x.shape = y.shape = made.shape = castIn.shape = castOut.shape = {2};
    x.file = writeNpy(dir, "Mul.x.npy", DType::Float32, {2}, {2048.f, 1.f});
    y.file = writeNpy(dir, "Mul.y.npy", DType::Float32, {2}, {2048.f, 1.f});
    made.file = writeNpy(dir, "Mul.out.npy", DType::Float32, {2}, {big, 1.f});
    castIn.file = writeNpy(dir, "Cast.in.npy", DType::Float32, {2}, {big, 1.f});
    castOut.file = writeNpy(dir, "Cast.out.npy", DType::Float16, {2}, {INFINITY, 1.f});
    b.op(0, 0, "Mul", "Default_Mul-op0", {x, y, made}, 10);
    b.op(0, 0, "Cast", "Default_Cast-op0", {castIn, castOut}, 20);
    const AnalysisResult r = analyze(b.idx);
    ASSERT_TRUE(r.firstOverflow);
    EXPECT_EQ(b.idx.strings.str(b.idx.ops[r.firstOverflow->op].type), "Cast");
    ASSERT_TRUE(r.valueMadeBy);
    EXPECT_EQ(b.idx.strings.str(b.idx.ops[*r.valueMadeBy].name), "Default_Mul-op0");
    ASSERT_TRUE(r.replay);
    EXPECT_NE(r.replay->recommendation.find("Mul Default_Mul-op0"), std::string::npos) << r.replay->recommendation;
    EXPECT_EQ(r.replay->recommendation.find("run Cast"), std::string::npos) << r.replay->recommendation;
    const std::string text = toText(b.idx, r);
    EXPECT_NE(text.find("value made by: Mul Default_Mul-op0"), std::string::npos) << text;
    ASSERT_EQ(r.nearLimitTotal, 1u);  // the Cast's float32 input
    EXPECT_NE(text.find("1 of them already past 65504 going into a Cast to fp16"), std::string::npos) << text;
    EXPECT_NE(text.find("(cast to fp16: past 65504, inf after the Cast)"), std::string::npos) << text;
    EXPECT_EQ(text.find("an early warning, not an overflow"), std::string::npos) << text;
    std::filesystem::remove_all(dir);
}

// The chain is a causal claim: steps listed in happens-before order, each naming the step it
// came from and through what. Hand-built indexes where the true order follows from the pairs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/demo/demo_dumps.h"
#include "core/index/dump_indexer.h"
#include "tests/core/analysis_test_builder.h"
#include "tests/core/shared_demo.h"
#include "tests/core/temp_dir.h"

using namespace dl;
using namespace dltest;

namespace {

T t(Io io, TensorStats s = dataStats(2.0)) { return tensor(io, s); }
const TensorStats kInf = dataStats(3.0, 5);

// PP4 (rank r = stage r). Iteration 1: the origin is in rank 3's backward and only reaches the
// head weight (ApplyMomentum); nothing bad is sent. Iteration 2: rank 3's forward uses the bad
// weight, its backward sends bad gradients 3 -> 2 -> 1 -> 0. Rank 2's clock lags 3 ms, so raw
// timestamps would put rank 2 first; true times are 100 us apart per hop.
struct BackwardNextIteration {
    IndexBuilder b;
    std::uint32_t origin = 0, momentum = 0;
    static constexpr std::int64_t kOffset[4] = {0, 850, -3000, 420};

    explicit BackwardNextIteration(bool timestamps) {
        const std::string G = "Gradients/Default/network-PipelineCell/";
        auto ts = [&](std::uint32_t rank, std::int64_t trueUs) {
            return timestamps ? 1700000000000000 + trueUs + kOffset[rank] : 0;
        };
        for (std::uint32_t it = 1; it <= 2; ++it) {
            const std::int64_t base = std::int64_t(it) * 100000;
            const bool bad2 = it == 2;
            for (std::uint32_t r = 0; r < 4; ++r) {
                // Forward: Receive from r-1 (r > 0), MatMul, Send to r+1 (r < 3).
                if (r > 0)
                    b.op(r, it, "Receive", "Receive-op1", {t(Io::Output)}, ts(r, base + 10 * r + 5),
                         "Default/network-PipelineCell/_pipeline_receive_sr_tag_" + std::to_string(r - 1) +
                             "/Receive-op1");
                const bool headBad = bad2 && r == 3;
                b.op(r, it, "MatMul", "MatMul-op2",
                     {t(Io::Input, headBad ? kInf : dataStats(2.0)), t(Io::Output, headBad ? kInf : dataStats(2.0))},
                     ts(r, base + 10 * r + 6),
                     "Default/network-PipelineCell/layer" + std::to_string(r) + "/MatMul-op2");
                if (r < 3)
                    b.op(r, it, "Send", "Send-op3", {t(Io::Input)}, ts(r, base + 10 * r + 7),
                         "Default/network-PipelineCell/_pipeline_send_sr_tag_" + std::to_string(r) + "/Send-op3");
            }
            // Backward, from rank 3 down: true time 1000 + 100 * (3 - r).
            for (int r = 3; r >= 0; --r) {
                const std::uint32_t ru = std::uint32_t(r);
                const std::int64_t tb = base + 1000 + 100 * (3 - r);
                const bool gradBad = bad2;
                if (r < 3)
                    b.op(ru, it, "Receive", "Receive-op10", {t(Io::Output, gradBad ? kInf : dataStats(2.0))},
                         ts(ru, tb), G + "_pipeline_send_sr_tag_" + std::to_string(r) + "/gradSend/Receive-op10");
                if (r == 3 && it == 1) {
                    b.op(3, it, "SqrtGrad", "SqrtGrad-op11",
                         {t(Io::Input, dataStats(0.25)), t(Io::Input, dataStats(47580.0)), t(Io::Output, kInf)},
                         ts(3, tb + 10), G + "NormHead/SqrtGrad-op11");
                } else {
                    b.op(
                        ru, it, "MatMul", "MatMul-op12",
                        {t(Io::Input, gradBad ? kInf : dataStats(2.0)), t(Io::Output, gradBad ? kInf : dataStats(2.0))},
                        ts(ru, tb + 10), G + "layer" + std::to_string(r) + "/MatMul-op12");
                }
                if (r > 0)
                    b.op(ru, it, "Send", "Send-op13", {t(Io::Input, gradBad ? kInf : dataStats(2.0))}, ts(ru, tb + 20),
                         G + "_pipeline_receive_sr_tag_" + std::to_string(r - 1) + "/gradReceive/Send-op13");
                const bool momentumBad = (it == 1 && r == 3) || bad2;
                b.op(ru, it, "ApplyMomentum", "ApplyMomentum-op14",
                     {t(Io::Input, momentumBad ? kInf : dataStats(2.0)),
                      t(Io::Output, momentumBad ? kInf : dataStats(2.0))},
                     ts(ru, base + 5000 + r), "Default/optimizer-Momentum/ApplyMomentum-op14");
            }
        }
        b.idx.finalize();  // rank-major order: look the ops up again
        origin = find(3, 1, "SqrtGrad");
        momentum = find(3, 1, "ApplyMomentum");
    }
    std::uint32_t find(std::uint32_t rank, std::uint32_t it, const std::string& type) const {
        for (std::uint32_t i = 0; i < b.idx.ops.size(); ++i)
            if (b.idx.ops[i].rank == rank && b.idx.ops[i].iteration == it &&
                b.idx.strings.str(b.idx.ops[i].type) == type)
                return i;
        return kNoIndex;
    }
};

// Each step after the step it came from, on the aligned clock.
void expectCausal(const AnalysisResult& r) {
    ASSERT_FALSE(r.chain.empty());
    EXPECT_EQ(r.chain[0].causedBy, -1);
    for (std::size_t i = 1; i < r.chain.size(); ++i) {
        const ChainStep& s = r.chain[i];
        ASSERT_GE(s.causedBy, 0) << i;
        ASSERT_LT(std::size_t(s.causedBy), i) << "step " << i << " listed before the step it came from";
        EXPECT_NE(s.via, ChainVia::None);
        const ChainStep& p = r.chain[std::size_t(s.causedBy)];
        EXPECT_GE(s.at.iteration, p.at.iteration);
        // Times are comparable only where messages link both ranks' clocks to the reference clock.
        if (r.chainOrderedByClock && s.clockAligned && p.clockAligned) {
            EXPECT_GE(s.alignedUs, p.alignedUs) << "step " << i;
        }
    }
}

// Ranks of the Receive steps (the hops), in chain order.
std::vector<std::uint32_t> receiveRanks(const AnalysisResult& r) {
    std::vector<std::uint32_t> out;
    for (const ChainStep& s : r.chain)
        if (s.role == ChainRole::Receive) out.push_back(s.at.rank);
    return out;
}

}  // namespace

class ChainOrder : public ::testing::TestWithParam<bool> {};

TEST_P(ChainOrder, BackwardSpreadInTheNextIterationGoesThroughTheWeights) {
    BackwardNextIteration d(GetParam());
    const AnalysisResult r = analyze(d.b.idx);
    ASSERT_TRUE(r.firstOverflow);
    EXPECT_EQ(r.firstOverflow->op, d.origin);
    EXPECT_EQ(r.chainOrderedByClock, GetParam());
    expectCausal(r);
    // origin -> ApplyMomentum (same rank) -> first anomaly of iteration 2 on rank 3 (weight update)
    ASSERT_GE(r.chain.size(), 3u);
    EXPECT_EQ(r.chain[1].at.op, d.momentum);
    EXPECT_EQ(r.chain[1].via, ChainVia::SameRank);
    EXPECT_EQ(r.chain[1].causedBy, 0);
    EXPECT_EQ(r.chain[2].via, ChainVia::WeightUpdate);
    EXPECT_EQ(r.chain[2].at.rank, 3u);
    EXPECT_EQ(r.chain[2].at.iteration, 2u);
    EXPECT_EQ(r.chain[2].linkOp, d.momentum);
    // Then hop by hop in the order the gradients travelled.
    EXPECT_EQ(receiveRanks(r), (std::vector<std::uint32_t>{2, 1, 0}));
    for (const ChainStep& s : r.chain)
        if (s.role == ChainRole::Receive) {
            EXPECT_EQ(s.via, ChainVia::SendReceive);
            const ChainStep& from = r.chain[std::size_t(s.causedBy)];
            EXPECT_EQ(from.role, ChainRole::Send);
            EXPECT_EQ(from.at.rank, s.at.rank + 1);
            EXPECT_EQ(s.linkOp, from.at.op);
        }
    const auto j = toJson(d.b.idx, r);
    ASSERT_EQ(j["chain"].size(), r.chain.size());
    EXPECT_TRUE(j["chain"][0]["caused_by"].is_null());
    EXPECT_EQ(j["chain"][2]["via"], "weight_update");
    EXPECT_EQ(j["chain"][2]["via_detail"]["link_op_type"], "ApplyMomentum");
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutTimestamps, ChainOrder, ::testing::Values(true, false));

TEST(ChainOrder, OptimizerMissingIsSaid) {
    BackwardNextIteration d(true);
    // Drop the optimizer: rename its type so nothing in the dump applies the gradient.
    for (OpRecord& o : d.b.idx.ops)
        if (d.b.idx.strings.view(o.type) == "ApplyMomentum") o.type = d.b.idx.strings.intern("Identity");
    const AnalysisResult r = analyze(d.b.idx);
    expectCausal(r);
    ASSERT_GE(r.chain.size(), 2u);
    EXPECT_EQ(r.chain[1].via, ChainVia::WeightUpdate);
    EXPECT_EQ(r.chain[1].linkOp, kNoIndex);
    EXPECT_NE(r.chain[1].note.find("the optimizer is not in the dump"), std::string::npos) << r.chain[1].note;
}

// Property over every dump the tests have on disk: the bundled demo variants and the real
// sample trees. Each chain step comes after the step it came from (index and aligned time).
namespace {

std::vector<std::string> sampleRoots() {
    std::vector<std::string> roots;
    const std::filesystem::path s = DUMPLENS_SAMPLES_DIR;
    for (const char* sub : {"mindinsight/Ascend_async", "mindinsight/Ascend_sync", "mindspore-docs/sample_code_dump",
                            "mindspore-tests/gpu_dumps", "mindspore-tests/st_dump", "msprobe"})
        if (std::filesystem::exists(s / sub)) roots.push_back((s / sub).string());
    return roots;
}

}  // namespace

class ChainProperty : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        // The bundled variants, written once per ctest run (shared_demo.h).
        std::vector<std::pair<std::string, demo::DemoOptions>> variants = demo::demoVariants();
        demo::DemoOptions overflowOnlyInfNan;  // no message links the ranks: the chain by data flow
        overflowOnlyInfNan.mode = demo::OverflowMode::InfNan;
        overflowOnlyInfNan.overflowOnly = true;
        variants.push_back({"overflow_only_infnan", overflowOnlyInfNan});
        for (const auto& [name, opt] : variants) {
            demo::DemoVariantInfo info;
            try {
                m_roots.push_back(dltest::sharedDemoVariant(opt, info));
            } catch (const std::exception& e) {
                ADD_FAILURE() << name << ": " << e.what();
            }
        }
        for (const std::string& r : sampleRoots()) m_roots.push_back(r);
    }
    static void TearDownTestSuite() { m_roots.clear(); }
    static std::vector<std::string> m_roots;
};
std::vector<std::string> ChainProperty::m_roots;

TEST_F(ChainProperty, EveryStepComesAfterTheStepItCameFrom) {
    ASSERT_GE(m_roots.size(), 5u);
    std::size_t chains = 0;
    for (const std::string& root : m_roots) {
        SCOPED_TRACE(root);
        DumpIndex idx;
        IndexOptions io;
        io.useCache = false;
        IndexReport rep;
        std::string error;
        if (!indexDump(root, io, idx, rep, error)) continue;  // a sample folder of another kind
        const AnalysisResult r = analyze(idx);
        if (r.chain.empty()) continue;
        ++chains;
        expectCausal(r);
    }
    EXPECT_GE(chains, 4u);  // every overflowing demo variant has a chain
}

// An overflow-only dump holds no Send/Receive: nothing relates the ranks' clocks, so a step
// placed by time is placed by raw timestamps, and the chain must say that order is weak. Rank 1's
// raw clock runs 3 ms behind, putting its (later) anomaly first on the raw clock.
TEST(ChainOrder, RawClocksWithoutMessagesAreFlagged) {
    IndexBuilder b;
    const std::int64_t t0 = 1700000000000000;
    b.op(0, 1, "SqrtGrad", "SqrtGrad-op11", {t(Io::Input, dataStats(0.25)), t(Io::Output, kInf)}, t0 + 5000);
    b.op(1, 1, "MatMul", "MatMul-op2", {t(Io::Input, kInf), t(Io::Output, kInf)}, t0 + 5200 - 3000);
    const AnalysisResult r = analyze(b.idx);
    ASSERT_TRUE(r.firstOverflow);
    ASSERT_EQ(r.chain.size(), 2u) << toText(b.idx, r);
    EXPECT_EQ(r.chain[1].via, ChainVia::ClockOnly);
    EXPECT_FALSE(r.clocksAligned);
    EXPECT_FALSE(r.chainOrderedByFlow) << "no stage map tells the data flow: raw clocks, flagged";
    EXPECT_NE(r.chain[1].note.find("raw timestamp"), std::string::npos) << r.chain[1].note;
    const auto raw = std::find_if(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
        return w.find("raw timestamps of unsynchronised rank clocks") != std::string::npos &&
            w.find("rank 1") != std::string::npos;
    });
    EXPECT_NE(raw, r.warnings.end()) << toText(b.idx, r);
}

// End to end: demo dumps written to disk -> indexDump -> analyze, for every layout and mode.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/demo/demo_dumps.h"
#include "core/index/dump_indexer.h"
#include "tests/core/shared_demo.h"

using namespace dl;

namespace {

struct DemoRun {
    demo::DemoVariantInfo info;
    DumpIndex index;
    AnalysisResult result;
};

class AnalysisDemo : public ::testing::Test {
protected:
    // Variants are written once per ctest run (tests/core/shared_demo.h); the name only labels them.
    DemoRun run(const std::string& /*name*/, const demo::DemoOptions& o, const AnalysisOptions& ao = {}) {
        DemoRun r;
        std::string error;
        const std::string root = dltest::sharedDemoVariant(o, r.info);
        IndexOptions io;
        io.useCache = false;
        IndexReport report;
        EXPECT_TRUE(indexDump(root, io, r.index, report, error)) << error;
        r.result = analyze(r.index, ao);
        return r;
    }

    void expectMotivatingCase(const DemoRun& r, AnomalyKind kind) {
        ASSERT_TRUE(r.result.overflow) << toText(r.index, r.result);
        ASSERT_TRUE(r.result.firstOverflow);
        const OverflowPoint& p = *r.result.firstOverflow;
        const std::string name = r.index.strings.str(r.index.ops[p.op].name);
        EXPECT_NE(name.find(r.info.culpritShortName.substr(r.info.culpritShortName.find("-op"))), std::string::npos)
            << name;
        EXPECT_EQ(r.index.strings.str(r.index.ops[p.op].type), "SqrtGrad");
        EXPECT_EQ(int(p.rank), r.info.culpritRank);
        EXPECT_EQ(int(p.iteration), r.info.firstOverflowIteration);
        EXPECT_EQ(p.kind, kind);
        ASSERT_TRUE(r.result.replay);
        ASSERT_TRUE(r.result.replay->available) << r.result.replay->unavailableReason;
        EXPECT_TRUE(r.result.replay->reproducesOverflow);
        EXPECT_FALSE(r.result.replay->results[1].overflow);
        EXPECT_NE(r.result.replay->recommendation.find("bfloat16"), std::string::npos);
    }
};

}  // namespace

TEST_F(AnalysisDemo, SaturationModeNormHead) {
    const DemoRun r = run("sat", demo::DemoOptions{});
    expectMotivatingCase(r, AnomalyKind::Saturated);
    EXPECT_EQ(r.result.firstOverflow->stage, 3);
    EXPECT_EQ(r.result.persistence, Persistence::Persistent);
    EXPECT_GT(r.result.nearLimitTotal, 0u);
}

TEST_F(AnalysisDemo, InfNanModeLaggingClockDoesNotWin) {
    demo::DemoOptions o;
    o.mode = demo::OverflowMode::InfNan;
    const DemoRun r = run("infnan", o);
    expectMotivatingCase(r, AnomalyKind::Inf);
    // Rank 2 lags 3 ms: the estimated offsets recover the demo's clocks.
    EXPECT_NEAR(double(r.result.clockOffsetUs.at(2) - r.result.clockOffsetUs.at(0)), -3000.0, 200.0);
    ASSERT_GE(r.result.chain.size(), 2u);
    EXPECT_EQ(r.result.chain[0].role, ChainRole::Origin);
    const nlohmann::json j = toJson(r.index, r.result);
    EXPECT_EQ(j["first_overflow"]["op_type"], "SqrtGrad");
    EXPECT_EQ(j["replay"]["results"].size(), 3u);
}

TEST_F(AnalysisDemo, OverflowOnlyDump) {
    demo::DemoOptions o;
    o.overflowOnly = true;
    expectMotivatingCase(run("oo", o), AnomalyKind::Saturated);
}

TEST_F(AnalysisDemo, KernelByKernelLayout) {
    demo::DemoOptions o;
    o.layout = demo::DemoLayout::Ms24KernelByKernel;
    o.mode = demo::OverflowMode::InfNan;
    expectMotivatingCase(run("kbk", o), AnomalyKind::Inf);
}

TEST_F(AnalysisDemo, ForwardOrigin) {
    // The near-limit outlier (exactly 65504, copied along by Gather) is pushed past the limit by
    // rank 0's first residual Add: only a replay on the dumped inputs tells that 65504 from a copy.
    demo::DemoOptions o;
    o.scenario = demo::DemoScenario::ForwardOrigin;
    const DemoRun r = run("fwd", o);
    ASSERT_TRUE(r.result.firstOverflow) << toText(r.index, r.result);
    EXPECT_EQ(r.result.firstOverflow->rank, 0u);
    EXPECT_EQ(r.index.strings.str(r.index.ops[r.result.firstOverflow->op].type), "Add");
    EXPECT_EQ(int(r.result.firstOverflow->iteration), o.decoyIteration);
    EXPECT_EQ(r.result.firstOverflow->kind, AnomalyKind::Saturated);
    ASSERT_TRUE(r.result.replay && r.result.replay->available);
    EXPECT_TRUE(r.result.replay->reproducesOverflow);
}

TEST_F(AnalysisDemo, Bf16FixIsClean) {
    demo::DemoOptions o;
    o.sqrtGradPrecision = DType::BFloat16;
    const DemoRun r = run("bf16", o);
    EXPECT_FALSE(r.result.overflow) << toText(r.index, r.result);
    EXPECT_FALSE(r.result.firstOverflow);
    EXPECT_GT(r.result.nearLimitTotal, 0u) << "the headroom warning stays";
}

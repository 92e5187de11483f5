// The demo twin runs (fp16 overflow vs the bf16 fix): where they diverge, the overlay, statistics
// only, identical runs, the JSON/CSV output, and the fix within bf16 rounding until the overflow.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/compare/compare_json.h"
#include "core/compare/compare_overlay.h"
#include "core/compare/run_comparison.h"
#include "core/compare/time_map.h"
#include "core/demo/demo_dumps.h"
#include "core/index/dump_indexer.h"
#include "core/query/op_state.h"
#include "core/timeline/timeline_data.h"
#include "tests/core/float_reference.h"
#include "tests/core/shared_demo.h"

using namespace dl;
using dltest::spacing;

namespace {

std::string typeOf(const DumpIndex& idx, std::uint32_t op) { return idx.strings.str(idx.ops[op].type); }

}  // namespace

class CompareDemo : public ::testing::Test {
protected:
    // The twin runs are written once per ctest run (tests/core/shared_demo.h) and indexed here.
    static void SetUpTestSuite() {
        demo::DemoOptions fp16, bf16;
        bf16.sqrtGradPrecision = DType::BFloat16;
        load(fp16, s_fp16);
        load(bf16, s_bf16);
    }

    static void load(const demo::DemoOptions& o, DumpIndex& idx) {
        std::string error;
        demo::DemoVariantInfo info;
        const std::string root = dltest::sharedDemoVariant(o, info);
        IndexOptions io;
        io.useCache = false;
        IndexReport report;
        ASSERT_TRUE(indexDump(root, io, idx, report, error)) << error;
    }

    static void expectNormHeadDivergence(const RunComparison& c) {
        ASSERT_GE(c.firstDivergence, 0) << compareText(c, s_fp16, s_bf16);
        const TensorPair& p = c.alignment.tensors[std::size_t(c.firstDivergence)];
        const OpRecord& oa = s_fp16.ops[s_fp16.tensors[p.a].op];
        const std::string type = s_fp16.strings.str(oa.type);
        EXPECT_TRUE(type == "SqrtGrad" || type == "Cast") << compareText(c, s_fp16, s_bf16);
        EXPECT_EQ(oa.rank, 3u);
        EXPECT_NE(s_fp16.strings.str(oa.scope).find("NormHead"), std::string::npos);
    }

    static DumpIndex s_fp16, s_bf16;
};
DumpIndex CompareDemo::s_fp16, CompareDemo::s_bf16;

TEST_F(CompareDemo, TwinRunsDivergeAtNormHeadSqrtGrad) {
    const RunComparison c = compareRuns(s_fp16, s_bf16, {});
    EXPECT_GT(c.fromData, 0u);
    EXPECT_GT(c.bytesCompared, 0u);
    expectNormHeadDivergence(c);
    // The Casts of the fix exist only in run B; every fp16 op finds its counterpart.
    EXPECT_TRUE(c.alignment.onlyOpsA.empty());
    ASSERT_FALSE(c.alignment.onlyOpsB.empty());
    for (std::uint32_t op : c.alignment.onlyOpsB) EXPECT_EQ(typeOf(s_bf16, op), "Cast");
    EXPECT_GT(c.alignment.tolerantOps, 0u);  // later -opN numbers shifted
    for (const OpPair& p : c.alignment.ops) {
        ASSERT_EQ(typeOf(s_fp16, p.a), typeOf(s_bf16, p.b));
        ASSERT_EQ(stripOpNumbers(s_fp16.strings.view(s_fp16.ops[p.a].scope)),
                  stripOpNumbers(s_bf16.strings.view(s_bf16.ops[p.b].scope)));
    }
}

TEST_F(CompareDemo, OverlayLinksOpsAndColoursTheDivergence) {
    const RunComparison c = compareRuns(s_fp16, s_bf16, {});
    ASSERT_GE(c.firstDivergence, 0);
    const CompareOverlay ov = buildCompareOverlay(c, s_fp16, s_bf16);
    ASSERT_EQ(ov.partnerA.size(), s_fp16.ops.size());
    for (const OpPair& p : c.alignment.ops) {
        ASSERT_EQ(ov.partnerA[p.a], p.b);
        ASSERT_EQ(ov.partnerB[p.b], p.a);
    }
    for (std::uint32_t op : c.alignment.onlyOpsB) EXPECT_EQ(ov.stateB(op), CompareState::Unmatched);
    const TensorPair& first = c.alignment.tensors[std::size_t(c.firstDivergence)];
    EXPECT_EQ(ov.stateA(s_fp16.tensors[first.a].op), CompareState::FirstDivergence);
    EXPECT_EQ(ov.stateB(s_bf16.tensors[first.b].op), CompareState::FirstDivergence);
    EXPECT_EQ(ov.rowOfTensorA[first.a], std::uint32_t(c.firstDivergence));
    EXPECT_EQ(ov.statesA.counts[int(CompareState::FirstDivergence)], 1u);
    EXPECT_GT(ov.statesA.counts[int(CompareState::Agree)], 0u);
    // The same iteration of both runs, locked through matched ops: every matched op's centre in A
    // maps to within its own extent of the partner's centre in B.
    TimelineOptions to;
    to.iteration = s_fp16.ops[s_fp16.tensors[first.a].op].iteration;
    const TimelineData ta = buildTimeline(s_fp16, nullptr, ov.statesA, to);
    const TimelineData tb = buildTimeline(s_bf16, nullptr, ov.statesB, to);
    const TimeMap m = timeMapBetween(ta, tb, ov);
    std::size_t la, ia, lb, ib, close = 0, total = 0;
    for (const OpPair& p : c.alignment.ops) {
        if (!ta.locate(p.a, la, ia) || !tb.locate(p.b, lb, ib)) continue;
        const TimelineItem &x = ta.lanes[la].items[ia], &y = tb.lanes[lb].items[ib];
        ++total;
        close += std::fabs(m.toB((x.start + x.end) / 2.0) - (y.start + y.end) / 2.0) <= 0.05 * double(tb.t1 - tb.t0);
    }
    ASSERT_GT(total, 0u);
    EXPECT_GE(double(close) / double(total), 0.9);
}

TEST_F(CompareDemo, StatisticsOnlyAlsoPointsAtNormHead) {
    CompareOptions o;
    o.useData = false;
    const RunComparison c = compareRuns(s_fp16, s_bf16, o);
    EXPECT_EQ(c.fromData, 0u);
    EXPECT_EQ(c.bytesCompared, 0u);
    expectNormHeadDivergence(c);
}

TEST_F(CompareDemo, IdenticalRunsHaveNoDivergence) {
    const RunComparison c = compareRuns(s_fp16, s_fp16, {});
    EXPECT_EQ(c.firstDivergence, -1);
    EXPECT_EQ(c.diverged, 0u);
    EXPECT_EQ(c.alignment.tensors.size(), s_fp16.tensors.size());
    EXPECT_EQ(c.alignment.exactOps, s_fp16.ops.size());
    EXPECT_EQ(c.alignment.onlyTensorsA + c.alignment.onlyTensorsB, 0u);
    for (const TensorComparison& r : c.rows)
        if (r.metrics.fromData) {
            ASSERT_EQ(r.metrics.maxAbsErr, 0.0);
        }
}

TEST_F(CompareDemo, JsonAndCsv) {
    const RunComparison c = compareRuns(s_fp16, s_bf16, {});
    const auto j = nlohmann::json::parse(compareJson(c, s_fp16, s_bf16));
    EXPECT_EQ(j["schema"], "dumplens.compare/1");
    ASSERT_TRUE(j["first_divergence"].is_object());
    const auto& fd = j["first_divergence"];
    EXPECT_EQ(fd.size(), 6u);
    EXPECT_EQ(fd["class"], "nonfinite");
    EXPECT_EQ(j["first_difference"]["class"], "precision");
    EXPECT_EQ(j["first_nonfinite_mismatch"], fd);
    std::size_t total = 0;
    for (const auto& [k, v] : j["counts"].items()) total += v.get<std::size_t>();
    EXPECT_EQ(total, c.rows.size());
    EXPECT_EQ(j["precision"], "bfloat16");
    EXPECT_EQ(j["thresholds"]["rules"], "precision");
    EXPECT_EQ(fd["rank"], 3);
    EXPECT_TRUE(fd["iteration"].is_number_integer());
    EXPECT_TRUE(fd["op_type"] == "SqrtGrad" || fd["op_type"] == "Cast");
    EXPECT_TRUE(fd["tensor"].get<std::string>().rfind("input.", 0) == 0 ||
                fd["tensor"].get<std::string>().rfind("output.", 0) == 0);
    EXPECT_EQ(j["matched"], c.alignment.tensors.size());
    EXPECT_EQ(j["only_in_a"], 0);
    EXPECT_GT(j["only_in_b"].get<int>(), 0);
    EXPECT_EQ(j["rows"].size(), c.rows.size());
    const std::string csv = compareCsv(c, s_fp16, s_bf16);
    EXPECT_EQ(std::size_t(std::count(csv.begin(), csv.end(), '\n')), c.rows.size() + 1);
    EXPECT_EQ(csv.rfind("Rank,Iteration,Op Type", 0), 0u);
    const auto same = nlohmann::json::parse(compareJson(compareRuns(s_fp16, s_fp16, {}), s_fp16, s_fp16));
    EXPECT_TRUE(same["first_divergence"].is_null());
}

TEST_F(CompareDemo, FixIsWithinBf16RoundingUntilTheOverflow) {
    const int overflowIteration = demo::DemoOptions{}.overflowIteration;
    const RunComparison c = compareRuns(s_fp16, s_bf16, {});
    EXPECT_EQ(c.precision, DType::BFloat16);
    auto iterOf = [&](std::int64_t row) {
        return s_fp16.ops[s_fp16.tensors[c.alignment.tensors[std::size_t(row)].a].op].iteration;
    };
    ASSERT_GE(c.firstDifference, 0);
    EXPECT_EQ(iterOf(c.firstDifference), 0u);
    EXPECT_EQ(c.rows[std::size_t(c.firstDifference)].verdict, Verdict::Precision);
    expectNormHeadDivergence(c);
    EXPECT_EQ(iterOf(c.firstDivergence), std::uint32_t(overflowIteration));
    EXPECT_EQ(c.rows[std::size_t(c.firstDivergence)].verdict, Verdict::NonFinite);
    EXPECT_EQ(c.firstNonFinite, c.firstDivergence);
    // Before the overflow iteration every changed tensor moved by less than 2 bf16 ulps at its
    // largest magnitude (checked here from the metrics and statistics, not from the verdicts).
    std::size_t changed = 0;
    for (std::size_t r = 0; r < c.rows.size(); ++r) {
        if (iterOf(std::int64_t(r)) >= std::uint32_t(overflowIteration)) continue;
        const TensorComparison& row = c.rows[r];
        EXPECT_FALSE(row.diverged) << row.reason;
        if (!row.metrics.fromData || row.metrics.maxAbsErr == 0) continue;
        const TensorPair& p = c.alignment.tensors[r];
        const TensorStats sa = s_fp16.stats(s_fp16.tensors[p.a]), sb = s_bf16.stats(s_bf16.tensors[p.b]);
        const double scale = std::max({std::fabs(sa.max), std::fabs(sa.min), std::fabs(sb.max), std::fabs(sb.min)});
        EXPECT_LE(row.metrics.maxAbsErr, 2 * spacing(scale, 8)) << row.reason;
        EXPECT_EQ(row.verdict, Verdict::Precision);
        ++changed;
    }
    EXPECT_GT(changed, 0u);
    EXPECT_NE(c.story.find("agree to bfloat16 precision until iteration " + std::to_string(overflowIteration)),
              std::string::npos)
        << c.story;
    EXPECT_NE(c.story.find("run A overflows at SqrtGrad"), std::string::npos) << c.story;
    EXPECT_NE(compareText(c, s_fp16, s_bf16).find(c.story), std::string::npos);
    // msprobe's absolute rules still read the bf16 rounding at iteration 0 as a divergence.
    CompareOptions ms;
    ms.thresholds = CompareThresholds::defaults(CompareRules::Msprobe);
    const RunComparison m = compareRuns(s_fp16, s_bf16, ms);
    ASSERT_GE(m.firstDivergence, 0);
    EXPECT_EQ(s_fp16.ops[s_fp16.tensors[m.alignment.tensors[std::size_t(m.firstDivergence)].a].op].iteration, 0u);
    EXPECT_NE(m.rows[std::size_t(m.firstDivergence)].reason.find("max_abs"), std::string::npos);
}

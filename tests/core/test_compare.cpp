// Run comparison: msprobe metric definitions on hand-computed vectors, statistics differences,
// op alignment (identical, renumbered, pinned), the demo twin runs (fp16 overflow vs bf16 fix)
// and the JSON/CSV output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <fstream>
#include <random>
#include <sstream>

#include "core/compare/compare_json.h"
#include "core/compare/compare_overlay.h"
#include "core/compare/compare_rows.h"
#include "core/compare/time_map.h"
#include "core/compare/run_comparison.h"
#include "core/demo/demo_dumps.h"
#include "core/index/dump_indexer.h"
#include "core/query/op_state.h"
#include "core/timeline/timeline_data.h"
#include "tests/core/analysis_test_builder.h"
#include "tests/core/shared_demo.h"

using namespace dl;
using dltest::IndexBuilder;

namespace {

TensorMetrics data(const std::vector<float>& a, const std::vector<float>& b, bool zeroDim = false) {
    TensorMetrics m;
    computeDataMetrics(a.data(), b.data(), a.size(), zeroDim, m);
    return m;
}

std::string typeOf(const DumpIndex& idx, std::uint32_t op) { return idx.strings.str(idx.ops[op].type); }
std::string nameOf(const DumpIndex& idx, std::uint32_t op) { return idx.strings.str(idx.ops[op].name); }

// Run A: MatMul, Add, Mul all at 2.0; run B: the same at 2.0, 2.5 and 9.0 (Mul on `mulRank`).
void threeOpRuns(IndexBuilder& a, IndexBuilder& b, std::uint32_t mulRank = 0) {
    for (IndexBuilder* x : {&a, &b}) {
        const bool isB = x == &b;
        x->op(0, 0, "MatMul", "MatMul-op1", {dltest::out(0, dltest::dataStats(2.0))});
        x->op(0, 0, "Add", "Add-op2", {dltest::out(0, dltest::dataStats(isB ? 2.5 : 2.0))});
        x->op(mulRank, 0, "Mul", "Mul-op3", {dltest::out(0, dltest::dataStats(isB ? 9.0 : 2.0))});
    }
}

}  // namespace

TEST(TensorMetrics, HandComputedVector) {
    const TensorMetrics m = data({1, 2, 3, 4}, {1, 2, 3, 5});
    ASSERT_TRUE(m.fromData);
    EXPECT_NEAR(m.cosine, 34.0 / std::sqrt(30.0 * 39.0), 1e-15);
    EXPECT_DOUBLE_EQ(m.maxAbsErr, 1.0);
    EXPECT_DOUBLE_EQ(m.maxRelErr, 0.2);        // |4 - 5| / 5
    EXPECT_DOUBLE_EQ(m.oneThousandthRatio, 0.75);
    EXPECT_DOUBLE_EQ(m.fiveThousandthRatio, 0.75);
    EXPECT_DOUBLE_EQ(m.eucDist, 1.0);
}

TEST(TensorMetrics, RatioThresholdsAreStrict) {
    // Relative errors 0.0005, 0.002, 0.004 and 0.01 (bench 1000 keeps the float rounding far below).
    const TensorMetrics m = data({1000.5f, 1002.f, 1004.f, 1010.f}, {1000, 1000, 1000, 1000});
    EXPECT_DOUBLE_EQ(m.oneThousandthRatio, 0.25);
    EXPECT_DOUBLE_EQ(m.fiveThousandthRatio, 0.75);
    EXPECT_NEAR(m.maxRelErr, 0.01, 1e-12);
}

TEST(TensorMetrics, ZeroBenchUsesEpsilonLikeMsprobe) {
    // msprobe adds eps to both where bench == 0: ((0.5 + eps) - eps) / eps; 0 vs 0 gives 0.
    const TensorMetrics m = data({0.5f, 0, 1}, {0, 0, 1});
    EXPECT_DOUBLE_EQ(m.maxRelErr, ((0.5 + DBL_EPSILON) - DBL_EPSILON) / DBL_EPSILON);
    EXPECT_NEAR(m.oneThousandthRatio, 2.0 / 3.0, 1e-15);
}

TEST(TensorMetrics, CosineSpecialCases) {
    EXPECT_DOUBLE_EQ(data({0, 0, 0}, {0, 0, 0}).cosine, 1.0);      // both all zero
    EXPECT_TRUE(std::isnan(data({0, 0, 0}, {1, 0, 0}).cosine));    // one side all zero
    const TensorMetrics one = data({2}, {1});                       // one element: no cosine
    EXPECT_TRUE(std::isnan(one.cosine));
    EXPECT_DOUBLE_EQ(one.oneThousandthRatio, 0.0);
    const TensorMetrics scalar = data({2}, {1}, true);              // 0-d: no cosine, no ratios
    EXPECT_TRUE(std::isnan(scalar.cosine));
    EXPECT_TRUE(std::isnan(scalar.oneThousandthRatio));
    EXPECT_DOUBLE_EQ(scalar.maxAbsErr, 1.0);
    EXPECT_DOUBLE_EQ(scalar.maxRelErr, 1.0);
    EXPECT_NEAR(data({1, 0}, {-1, 0}).cosine, -1.0, 1e-15);
}

TEST(TensorMetrics, NanInfPositions) {
    const float inf = INFINITY, nan = NAN;
    const TensorMetrics same = data({nan, 1, inf, 2}, {nan, 1, -inf, 2});   // positions agree: zeroed
    ASSERT_TRUE(same.fromData);
    EXPECT_FALSE(same.nanInfMismatch);
    EXPECT_DOUBLE_EQ(same.maxAbsErr, 0.0);
    EXPECT_DOUBLE_EQ(same.cosine, 1.0);
    const TensorMetrics diff = data({nan, 1, 1, 2}, {1, 1, 1, 2});
    EXPECT_TRUE(diff.nanInfMismatch);
    EXPECT_FALSE(diff.fromData);
    EXPECT_TRUE(std::isnan(diff.cosine));
    EXPECT_TRUE(std::isnan(diff.maxAbsErr));
    // Inf against a finite value, past the vector body (in the scalar tail).
    std::vector<float> a(9, 1.f), b(9, 1.f);
    a[8] = inf;
    EXPECT_TRUE(data(a, b).nanInfMismatch);
}

TEST(TensorMetrics, VectorLoopMatchesReference) {
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0, 3);
    const std::size_t n = 1003;
    std::vector<float> a(n), b(n);
    for (std::size_t i = 0; i < n; ++i) {
        a[i] = nd(rng);
        b[i] = i % 17 == 0 ? 0.f : a[i] * (1 + nd(rng) * 0.002f);
    }
    double dot = 0, na = 0, nb = 0, maxAbs = 0, maxRel = 0;
    std::size_t c1 = 0, c5 = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double x = a[i], y = b[i];
        dot += x * y, na += x * x, nb += y * y;
        maxAbs = std::max(maxAbs, std::fabs(x - y));
        const double rel = y == 0 ? std::fabs((x + DBL_EPSILON) - DBL_EPSILON) / DBL_EPSILON : std::fabs((x - y) / y);
        maxRel = std::max(maxRel, rel);
        c1 += rel < 0.001, c5 += rel < 0.005;
    }
    const TensorMetrics m = data(a, b);
    EXPECT_NEAR(m.cosine, dot / std::sqrt(na * nb), 1e-12);
    EXPECT_DOUBLE_EQ(m.maxAbsErr, maxAbs);
    EXPECT_DOUBLE_EQ(m.maxRelErr, maxRel);
    EXPECT_DOUBLE_EQ(m.oneThousandthRatio, double(c1) / n);
    EXPECT_DOUBLE_EQ(m.fiveThousandthRatio, double(c5) / n);
}

TEST(TensorMetrics, StatisticsDifferences) {
    TensorStats a = dltest::dataStats(4.0), b = dltest::dataStats(5.0);
    TensorMetrics m;
    computeStatsMetrics(a, b, m);
    EXPECT_DOUBLE_EQ(m.maxDiff, -1.0);
    EXPECT_DOUBLE_EQ(m.maxRelDiff, 0.2);
    EXPECT_DOUBLE_EQ(m.minRelDiff, 0.2);
    EXPECT_TRUE(std::isnan(m.meanRelDiff));   // bench mean is 0: N/A like msprobe
    EXPECT_FALSE(m.nanInfMismatch);
    std::string reason;
    const CompareThresholds ms = CompareThresholds::defaults(CompareRules::Msprobe);
    EXPECT_TRUE(crossesThreshold(m, a, b, ms, reason));
    EXPECT_NE(reason.find("max"), std::string::npos);

    TensorMetrics n;
    computeStatsMetrics(dltest::dataStats(1.0, 0, 2), dltest::dataStats(1.0), n);
    EXPECT_TRUE(n.nanInfMismatch);
    EXPECT_TRUE(crossesThreshold(n, a, a, ms, reason));
    EXPECT_EQ(reason, "NaN/Inf disagreement");
    TensorMetrics same;
    computeStatsMetrics(a, a, same);
    EXPECT_FALSE(crossesThreshold(same, a, a, ms, reason));
}

TEST(CompareThresholds, ParseAndDescribe) {
    CompareThresholds t;
    std::string error;
    ASSERT_TRUE(parseThresholds("cosine=0.95,max_abs=off,max_rel=0.01,nan_inf=off", t, error)) << error;
    EXPECT_DOUBLE_EQ(t.minCosine, 0.95);
    EXPECT_TRUE(std::isinf(t.maxAbsErr));
    EXPECT_DOUBLE_EQ(t.maxRelErr, 0.01);
    EXPECT_FALSE(t.nanInf);
    EXPECT_NE(describeThresholds(t).find("cosine < 0.95"), std::string::npos);
    EXPECT_EQ(describeThresholds(t).find(", max_abs >"), std::string::npos);
    EXPECT_FALSE(parseThresholds("bogus=1", t, error));
    EXPECT_NE(error.find("bogus"), std::string::npos);
    EXPECT_FALSE(parseThresholds("cosine=abc", t, error));
    EXPECT_FALSE(parseThresholds("cosine", t, error));
}

// msprobe's check_accuracy: "No" when cosine < 0.99 with max abs err > 0.001, when cosine < 0.9
// whatever the error, or when max abs err > 1.
TEST(CompareThresholds, MsprobeRulesAreCheckAccuracys) {
    const CompareThresholds ms = CompareThresholds::defaults(CompareRules::Msprobe);
    const TensorStats none;
    auto fails = [&](double cos, double maxAbs) {
        TensorMetrics m;
        m.fromData = true;
        m.cosine = cos, m.maxAbsErr = maxAbs, m.maxRelErr = 0, m.oneThousandthRatio = m.fiveThousandthRatio = 1;
        std::string reason;
        return crossesThreshold(m, none, none, ms, reason);
    };
    for (double cos : {0.5, 0.85, 0.95, 0.989, 0.995, 1.0})
        for (double maxAbs : {0.0, 0.0005, 0.01, 0.5, 2.0}) {
            const bool no = (cos < 0.99 && maxAbs > 0.001) || cos < 0.9 || maxAbs > 1;
            EXPECT_EQ(fails(cos, maxAbs), no) << cos << " " << maxAbs;
        }
}

TEST(CompareThresholds, SpecRoundTrips) {
    for (const char* spec : {"", "cosine=0.95,max_abs=off,max_rel=0.01,nan_inf=off", "one_thousandth=0.9,stats_rel=off",
                             "rules=msprobe", "ulps=8,precision=bfloat16", "precision=fp16,rules=precision"}) {
        CompareThresholds t, back;
        std::string error;
        ASSERT_TRUE(parseThresholds(spec, t, error)) << error;
        ASSERT_TRUE(parseThresholds(thresholdSpec(t), back, error)) << thresholdSpec(t) << ": " << error;
        EXPECT_EQ(thresholdSpec(back), thresholdSpec(t));
        EXPECT_EQ(describeThresholds(back), describeThresholds(t));
    }
    EXPECT_EQ(thresholdSpec({}), "rules=precision,ulps=2,precision=auto,precision_cosine=0.0001,cosine=off,cosine_alone=off,abs_floor=0.001,"
                                 "max_abs=off,max_rel=off,one_thousandth=off,five_thousandth=off,stats_rel=off,nan_inf=on");
    // msprobe's rules keep its absolute tests (and the old spelling of them).
    EXPECT_EQ(thresholdSpec(CompareThresholds::defaults(CompareRules::Msprobe)),
              "rules=msprobe,ulps=off,precision=auto,precision_cosine=0.0001,cosine=0.99,cosine_alone=0.9,abs_floor=0.001,max_abs=1,"
              "max_rel=off,one_thousandth=off,five_thousandth=off,stats_rel=0.001,nan_inf=on");
    // rules= resets the other keys wherever it stands; the keys around it still apply.
    CompareThresholds t;
    std::string error;
    ASSERT_TRUE(parseThresholds("max_abs=5,rules=msprobe", t, error)) << error;
    EXPECT_EQ(t.rules, CompareRules::Msprobe);
    EXPECT_DOUBLE_EQ(t.maxAbsErr, 5);
    EXPECT_DOUBLE_EQ(t.minCosine, 0.99);
    EXPECT_TRUE(std::isinf(t.ulps));
    EXPECT_FALSE(parseThresholds("rules=strict", t, error));
    EXPECT_FALSE(parseThresholds("precision=int8", t, error));
}

TEST(RunAligner, StripOpNumbers) {
    EXPECT_EQ(stripOpNumbers("Gradients/Default/gradSqrt/SqrtGrad-op154"), "Gradients/Default/gradSqrt/SqrtGrad");
    EXPECT_EQ(stripOpNumbers("Default_net-Net_Add-op12_x"), "Default_net-Net_Add_x");
    EXPECT_EQ(stripOpNumbers("a-opx-op"), "a-opx-op");
}

TEST(RunAligner, RenumberedOpsStillAlign) {
    // A Cast around SqrtGrad in run B shifts every later -opN (no scopes: names only).
    IndexBuilder a, b;
    auto t = [] { return std::vector<dltest::T>{dltest::in(0, dltest::dataStats(1)), dltest::out(0, dltest::dataStats(1))}; };
    for (const char* n : {"MatMul-op1", "Add-op2", "SqrtGrad-op3", "Mul-op4", "Mul-op5"})
        a.op(0, 0, std::string(n).substr(0, std::string(n).find('-')), n, t());
    for (const char* n : {"MatMul-op1", "Add-op2", "Cast-op3", "SqrtGrad-op4", "Cast-op5", "Mul-op6", "Mul-op7"})
        b.op(0, 0, std::string(n).substr(0, std::string(n).find('-')), n, t());
    const RunAlignment al = alignRuns(a.idx, b.idx);
    ASSERT_EQ(al.ops.size(), 5u);
    EXPECT_EQ(al.exactOps, 2u);
    EXPECT_EQ(al.tolerantOps, 3u);
    EXPECT_EQ(nameOf(b.idx, al.ops[2].b), "SqrtGrad-op4");
    EXPECT_EQ(nameOf(b.idx, al.ops[3].b), "Mul-op6");
    EXPECT_EQ(nameOf(b.idx, al.ops[4].b), "Mul-op7");
    EXPECT_TRUE(al.onlyOpsA.empty());
    ASSERT_EQ(al.onlyOpsB.size(), 2u);
    for (std::uint32_t op : al.onlyOpsB) EXPECT_EQ(typeOf(b.idx, op), "Cast");
    EXPECT_EQ(al.tensors.size(), 10u);
    EXPECT_EQ(al.onlyTensorsB, 4u);
}

TEST(RunAligner, ScopesBeatCoincidentNames) {
    // Same name, different scope: MatMul-op9 is w2 in A but w1 in B; the scopes decide.
    IndexBuilder a, b;
    auto t = [] { return std::vector<dltest::T>{dltest::out(0, dltest::dataStats(1))}; };
    a.op(0, 0, "MatMul", "MatMul-op9", t(), 0, "net/w2/MatMul-op9");
    a.op(0, 0, "MatMul", "MatMul-op10", t(), 0, "net/w1/MatMul-op10");
    b.op(0, 0, "Cast", "Cast-op8", t(), 0, "net/w2/Cast-op8");
    b.op(0, 0, "MatMul", "MatMul-op11", t(), 0, "net/w2/MatMul-op11");
    b.op(0, 0, "MatMul", "MatMul-op9", t(), 0, "net/w1/MatMul-op9");
    const RunAlignment al = alignRuns(a.idx, b.idx);
    ASSERT_EQ(al.ops.size(), 2u);
    EXPECT_EQ(nameOf(b.idx, al.ops[0].b), "MatMul-op11");
    EXPECT_EQ(nameOf(b.idx, al.ops[1].b), "MatMul-op9");
    EXPECT_EQ(al.ops[1].kind, MatchKind::Tolerant);
}

TEST(RunAligner, MappingPins) {
    IndexBuilder a, b;
    auto t = [] { return std::vector<dltest::T>{dltest::out(0, dltest::dataStats(1))}; };
    a.op(0, 0, "FusedNorm", "FusedNorm-op1", t());
    a.op(0, 0, "Add", "Add-op2", t());
    b.op(0, 0, "RmsNorm", "RmsNorm-op1", t());
    b.op(0, 0, "Add", "Add-op2", t());
    RunAlignment plain = alignRuns(a.idx, b.idx);
    EXPECT_EQ(plain.ops.size(), 1u);
    EXPECT_EQ(plain.onlyOpsA.size(), 1u);

    std::vector<OpNamePin> pins;
    std::string error;
    ASSERT_TRUE(parseMappingText("name_a,name_b\n# comment\nFusedNorm-op1, RmsNorm-op1\nNope-op7,Add-op2\n", pins, error)) << error;
    ASSERT_EQ(pins.size(), 2u);
    const RunAlignment al = alignRuns(a.idx, b.idx, pins);
    ASSERT_EQ(al.ops.size(), 2u);
    EXPECT_EQ(al.pinnedOps, 1u);
    EXPECT_EQ(al.ops[0].kind, MatchKind::Pinned);
    EXPECT_EQ(nameOf(b.idx, al.ops[0].b), "RmsNorm-op1");
    EXPECT_TRUE(al.onlyOpsA.empty());
    ASSERT_EQ(al.warnings.size(), 1u);   // "Nope-op7" is not in run A
    EXPECT_NE(al.warnings[0].find("Nope-op7"), std::string::npos);

    std::vector<OpNamePin> bad;
    EXPECT_FALSE(parseMappingText("a,b\nno comma here\n", bad, error));
    EXPECT_NE(error.find("line 2"), std::string::npos);
    EXPECT_FALSE(readMappingFile("/nonexistent/mapping.csv", bad, error));
}

TEST(RunComparison, StatisticsOnlyFindsEarliestByExecutionOrder) {
    IndexBuilder a, b;
    threeOpRuns(a, b);
    const RunComparison c = compareRuns(a.idx, b.idx, {});
    EXPECT_EQ(c.fromStats, 3u);
    EXPECT_EQ(c.diverged, 2u);
    ASSERT_EQ(c.firstDivergence, 1);
    EXPECT_FALSE(c.rows[0].diverged);
    CompareOptions loose;
    std::string error;
    ASSERT_TRUE(parseThresholds("rules=msprobe,stats_rel=0.5", loose.thresholds, error));
    const RunComparison l = compareRuns(a.idx, b.idx, loose);
    EXPECT_EQ(l.firstDivergence, 2);   // 2.5 vs 2 is within 50 %
}

TEST(RunComparison, ApplyThresholdsRejudgesWithoutRecomputing) {
    IndexBuilder a, b;
    threeOpRuns(a, b);
    RunComparison c = compareRuns(a.idx, b.idx, {});
    ASSERT_EQ(c.firstDivergence, 1);
    CompareThresholds loose;
    std::string error;
    ASSERT_TRUE(parseThresholds("rules=msprobe,stats_rel=0.5", loose, error));
    applyThresholds(a.idx, b.idx, loose, c);
    EXPECT_EQ(c.firstDivergence, 2);
    EXPECT_EQ(c.diverged, 1u);
    EXPECT_EQ(c.rows[1].verdict, Verdict::Agree);
    EXPECT_EQ(c.rows[2].verdict, Verdict::Diverged);
    EXPECT_NE(c.rows[2].reason.find("relative difference"), std::string::npos);
    ASSERT_TRUE(parseThresholds("rules=msprobe,stats_rel=100", loose, error));
    applyThresholds(a.idx, b.idx, loose, c);
    EXPECT_EQ(c.firstDivergence, -1);
    EXPECT_EQ(c.diverged, 0u);
    EXPECT_EQ(describeThresholds(c.thresholds), describeThresholds(loose));
}

TEST(CompareRows, FilterAndSort) {
    IndexBuilder a, b;
    threeOpRuns(a, b, 1);
    const RunComparison c = compareRuns(a.idx, b.idx, {});
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, {}, CompareSortKey::Order, false), (std::vector<std::uint32_t>{0, 1, 2}));
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, {}, CompareSortKey::Order, true), (std::vector<std::uint32_t>{2, 1, 0}));
    CompareRowFilter f;
    f.divergedOnly = true;
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, f, CompareSortKey::Order, false), (std::vector<std::uint32_t>{1, 2}));
    f.text = "mul-OP";
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, f, CompareSortKey::Order, false), (std::vector<std::uint32_t>{2}));
    f = {};
    f.rank = 1;
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, f, CompareSortKey::Order, false), (std::vector<std::uint32_t>{2}));
    // Mul differs most (9 vs 2), MatMul not at all.
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, {}, CompareSortKey::StatsRelDiff, true),
              (std::vector<std::uint32_t>{2, 1, 0}));
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, {}, CompareSortKey::StatsRelDiff, false),
              (std::vector<std::uint32_t>{0, 1, 2}));
    // Statistics-only rows have no cosine: N/A sorts last and keeps execution order.
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, {}, CompareSortKey::Cosine, false), (std::vector<std::uint32_t>{0, 1, 2}));
}

TEST(TimeMap, MonotoneThroughMatchedPoints) {
    TimeMap m;
    // B runs twice as slow; one contradicting pair (an op matched across the order) is dropped.
    m.build({{10, 20}, {30, 60}, {20, 40}, {25, 5}, {40, 80}}, 0, 50, 0, 100);
    EXPECT_DOUBLE_EQ(m.toB(10), 20);
    EXPECT_DOUBLE_EQ(m.toB(15), 30);
    EXPECT_DOUBLE_EQ(m.toB(25), 50);   // not pulled to 5
    EXPECT_DOUBLE_EQ(m.toA(70), 35);
    EXPECT_DOUBLE_EQ(m.toB(0), 0);
    EXPECT_DOUBLE_EQ(m.toB(50), 100);
    for (double t = 0; t <= 50; t += 0.5) EXPECT_LE(m.toB(t), m.toB(t + 0.5));
    TimeMap empty;
    empty.build({}, 0, 10, 100, 300);
    EXPECT_DOUBLE_EQ(empty.toB(5), 200);
    EXPECT_DOUBLE_EQ(empty.toA(300), 10);
}

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
    EXPECT_GT(c.alignment.tolerantOps, 0u);   // later -opN numbers shifted
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
    EXPECT_TRUE(fd["tensor"].get<std::string>().rfind("input.", 0) == 0 || fd["tensor"].get<std::string>().rfind("output.", 0) == 0);
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

namespace {

// Round-to-nearest-even to bfloat16, written out on the float's bits.
float toBf16(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    float y;
    std::memcpy(&y, &u, 4);
    return y;
}

// Spacing of a p-bit significand at magnitude m (m a normal number), by walking the binades.
double spacing(double m, int p) {
    int e = 0;
    while (std::ldexp(1.0, e + 1) <= m) ++e;
    while (std::ldexp(1.0, e) > m) --e;
    return std::ldexp(1.0, e - p + 1);
}

// Statistics of a float vector with a plain float64 loop.
TensorStats statsOf(const std::vector<float>& v) {
    TensorStats s;
    s.max = -INFINITY, s.min = INFINITY;
    double sum = 0, sq = 0;
    for (float x : v) s.max = std::max(s.max, double(x)), s.min = std::min(s.min, double(x)), sum += x, sq += double(x) * x;
    s.mean = sum / double(v.size());
    s.l2 = std::sqrt(sq);
    s.maxAbs = std::max(std::fabs(s.max), std::fabs(s.min));
    s.count = v.size();
    s.known = stat::Max | stat::Min | stat::Mean | stat::L2 | stat::MaxAbs | stat::Count | stat::NanCount |
              stat::PosInfCount | stat::NegInfCount;
    return s;
}

Verdict judge(const std::vector<float>& a, const std::vector<float>& b, DType da, DType db, const CompareThresholds& t,
              std::string& reason) {
    const TensorMetrics m = data(a, b);
    return judgeTensor(m, statsOf(a), statsOf(b), da, db, coarserFloat(da, db), t, "", reason);
}

}  // namespace

TEST(TensorVerdict, UlpAtIsTheBinadeSpacing) {
    EXPECT_EQ(ulpAt(19968, DType::BFloat16), 128.0);   // 2^14 <= 19968 < 2^15: 2^(14 - 7)
    for (double m : {1.0, 1.5, 3.0, 19952.0, 65504.0, 0.0123, 1e-3})
        for (auto [d, p] : {std::pair{DType::Float16, 11}, std::pair{DType::BFloat16, 8}, std::pair{DType::Float32, 24}})
            EXPECT_EQ(ulpAt(m, d), spacing(m, p)) << m << " " << p;
    EXPECT_EQ(ulpAt(1e-6, DType::Float16), std::ldexp(1.0, -24));   // below fp16's smallest normal
    EXPECT_EQ(ulpAt(5, DType::Int32), 0.0);
    EXPECT_EQ(coarserFloat(DType::Float16, DType::BFloat16), DType::BFloat16);
    EXPECT_EQ(coarserFloat(DType::Int32, DType::Float32), DType::Float32);
    EXPECT_EQ(unitRoundoff(DType::BFloat16), std::ldexp(1.0, -8));
}

TEST(TensorVerdict, Bf16RoundingIsPrecisionAndBeyondItDiverges) {
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0, 300);
    std::vector<float> a(1003), b(1003);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = nd(rng), b[i] = toBf16(a[i]);
    double maxAbs = 0, scale = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        maxAbs = std::max(maxAbs, std::fabs(double(a[i]) - b[i])), scale = std::max({scale, std::fabs(double(a[i])), std::fabs(double(b[i]))});
    const double ulp = spacing(scale, 8);
    ASSERT_LE(maxAbs, 0.5 * ulp);   // round-to-nearest: half an ulp at most
    std::string reason;
    EXPECT_EQ(judge(a, b, DType::Float16, DType::BFloat16, CompareThresholds{}, reason), Verdict::Precision);
    EXPECT_NE(reason.find("ulps of bfloat16"), std::string::npos) << reason;
    // The largest element 10 bf16 ulps off: beyond the 2-ulp bound, and the L2 test does not save it
    // when switched off.
    std::size_t big = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::fabs(b[i]) > std::fabs(b[big])) big = i;
    std::vector<float> c = b;
    c[big] = float(b[big] + std::copysign(10 * spacing(std::fabs(b[big]), 8), b[big]));
    CompareThresholds strict;
    strict.precisionCosine = 0;
    EXPECT_EQ(judge(b, c, DType::BFloat16, DType::BFloat16, strict, reason), Verdict::Diverged);
    const double expectUlps = 10 * spacing(std::fabs(b[big]), 8) / spacing(std::fabs(c[big]), 8);
    EXPECT_NE(reason.find(" is " + std::to_string(int(expectUlps)) + " ulps of bfloat16"), std::string::npos) << reason;
    // The demo's figures: 19952 in fp16 against 19968 in bf16 is an eighth of a bf16 ulp.
    EXPECT_EQ(toBf16(19952.f), 19968.f);
    EXPECT_EQ(judge({19952, -1041, 7}, {19968, -1040, 7}, DType::Float16, DType::BFloat16, {}, reason), Verdict::Precision);
    EXPECT_NE(reason.find("within 0.125 ulps"), std::string::npos) << reason;
    // The same gap judged at fp16 precision is 3 fp16 ulps at 30000 (48 / 16): diverged.
    EXPECT_EQ(toBf16(30000.f), 29952.f);
    EXPECT_EQ(judge({30000, 1, 2}, {29952, 1, 2}, DType::Float16, DType::Float16, strict, reason), Verdict::Diverged);
    EXPECT_NE(reason.find("is 3 ulps of float16"), std::string::npos) << reason;
    // Equal values are identical; integer tensors must be equal.
    EXPECT_EQ(judge(a, a, DType::Float16, DType::Float16, {}, reason), Verdict::Identical);
    EXPECT_EQ(judge({1, 2, 3}, {1, 2, 4}, DType::Int32, DType::Int32, {}, reason), Verdict::Diverged);
}

TEST(TensorVerdict, OverflowInOneRunOnlyIsNonFinite) {
    std::string reason;
    // Saturation mode: the fp16 run holds 65504 where the bf16 fix reaches 86528.
    EXPECT_EQ(toBf16(86528.f), 86528.f);
    EXPECT_EQ(judge({65504, -2430, 1}, {86528, -2432, 1}, DType::Float16, DType::BFloat16, {}, reason), Verdict::NonFinite);
    EXPECT_NE(reason.find("run A saturates at the fp16 limit 65504"), std::string::npos) << reason;
    // Both fp16 runs saturate: no change of status, the values are judged.
    EXPECT_NE(judge({65504, 1}, {65504, 1.0009765625f}, DType::Float16, DType::Float16, {}, reason), Verdict::NonFinite);
    // INF/NAN mode: inf against finite; off when the NaN/Inf test is.
    const std::vector<float> withInf{INFINITY, 3, 1}, finite{86528, 3, 1};
    TensorStats sa = statsOf({3, 1}), sb = statsOf(finite);
    sa.posInfCount = 1;
    const TensorMetrics m = data(withInf, finite);
    EXPECT_EQ(judgeTensor(m, sa, sb, DType::Float16, DType::BFloat16, DType::BFloat16, {}, "", reason), Verdict::NonFinite);
    EXPECT_NE(reason.find("run A inf, run B finite"), std::string::npos) << reason;
    CompareThresholds off;
    off.nanInf = false;
    EXPECT_NE(judgeTensor(m, sa, sb, DType::Float16, DType::BFloat16, DType::BFloat16, off, "", reason), Verdict::NonFinite);
}

TEST_F(CompareDemo, FixIsWithinBf16RoundingUntilTheOverflow) {
    const int overflowIteration = demo::DemoOptions{}.overflowIteration;
    const RunComparison c = compareRuns(s_fp16, s_bf16, {});
    EXPECT_EQ(c.precision, DType::BFloat16);
    auto iterOf = [&](std::int64_t row) { return s_fp16.ops[s_fp16.tensors[c.alignment.tensors[std::size_t(row)].a].op].iteration; };
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
    EXPECT_NE(c.story.find("agree to bfloat16 precision until iteration " + std::to_string(overflowIteration)), std::string::npos)
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


TEST(CompareJson, StreamedRowsParseWithEscapesNullsAndValues) {
    IndexBuilder a, b;
    const std::string odd = "Mul\"q\\x\n\tend";
    a.op(0, 0, "Mul", odd, {dltest::in(0, dltest::csvStats(-1, 3)), dltest::out(0, dltest::dataStats(2.0, 1))});
    b.op(0, 0, "Mul", odd, {dltest::in(0, dltest::csvStats(-1, 3.5)), dltest::out(0, dltest::dataStats(2.0))});
    const RunComparison c = compareRuns(a.idx, b.idx, {});
    const auto j = nlohmann::json::parse(compareJson(c, a.idx, b.idx));
    ASSERT_EQ(j["rows"].size(), 2u);
    const auto& r0 = j["rows"][0];
    EXPECT_EQ(r0["op_name_a"], odd);
    EXPECT_EQ(r0["tensor"], "input.0");
    EXPECT_EQ(r0["stats_a"]["max"], 3.0);
    EXPECT_EQ(r0["stats_b"]["max"], 3.5);
    EXPECT_TRUE(r0["stats_a"]["mean"].is_null());
    EXPECT_TRUE(r0["metrics"]["cosine"].is_null());
    EXPECT_DOUBLE_EQ(r0["metrics"]["max_rel_diff"].get<double>(), 0.5 / 3.5);
    EXPECT_TRUE(r0["md5_a"].is_null());
    EXPECT_EQ(r0["class"], verdictName(c.rows[0].verdict));
    EXPECT_EQ(r0["reason"], c.rows[0].reason);
    const auto& r1 = j["rows"][1];
    EXPECT_EQ(r1["class"], "nonfinite");
    EXPECT_EQ(r1["diverged"], true);
    EXPECT_EQ(r1["stats_a"]["inf"], 1);
    EXPECT_EQ(r1["metrics"]["nan_inf_mismatch"], true);
    EXPECT_EQ(j["first_divergence"]["op_name"], odd);
}

// Tensor metrics as msprobe defines them (cosine, errors, ratios, NaN/Inf positions) on
// hand-computed vectors, the vector loop against a plain reference, statistics differences.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "core/compare/run_comparison.h"
#include "core/compare/tensor_metrics.h"
#include "tests/core/analysis_test_builder.h"

using namespace dl;

namespace {

TensorMetrics data(const std::vector<float>& a, const std::vector<float>& b, bool zeroDim = false) {
    TensorMetrics m;
    computeDataMetrics(a.data(), b.data(), a.size(), zeroDim, m);
    return m;
}

}  // namespace

TEST(TensorMetrics, HandComputedVector) {
    const TensorMetrics m = data({1, 2, 3, 4}, {1, 2, 3, 5});
    ASSERT_TRUE(m.fromData);
    EXPECT_NEAR(m.cosine, 34.0 / std::sqrt(30.0 * 39.0), 1e-15);
    EXPECT_DOUBLE_EQ(m.maxAbsErr, 1.0);
    EXPECT_DOUBLE_EQ(m.maxRelErr, 0.2);  // |4 - 5| / 5
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
    EXPECT_DOUBLE_EQ(data({0, 0, 0}, {0, 0, 0}).cosine, 1.0);    // both all zero
    EXPECT_TRUE(std::isnan(data({0, 0, 0}, {1, 0, 0}).cosine));  // one side all zero
    const TensorMetrics one = data({2}, {1});                    // one element: no cosine
    EXPECT_TRUE(std::isnan(one.cosine));
    EXPECT_DOUBLE_EQ(one.oneThousandthRatio, 0.0);
    const TensorMetrics scalar = data({2}, {1}, true);  // 0-d: no cosine, no ratios
    EXPECT_TRUE(std::isnan(scalar.cosine));
    EXPECT_TRUE(std::isnan(scalar.oneThousandthRatio));
    EXPECT_DOUBLE_EQ(scalar.maxAbsErr, 1.0);
    EXPECT_DOUBLE_EQ(scalar.maxRelErr, 1.0);
    EXPECT_NEAR(data({1, 0}, {-1, 0}).cosine, -1.0, 1e-15);
}

TEST(TensorMetrics, NanInfPositions) {
    const float inf = INFINITY, nan = NAN;
    const TensorMetrics same = data({nan, 1, inf, 2}, {nan, 1, -inf, 2});  // positions agree: zeroed
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
    EXPECT_TRUE(std::isnan(m.meanRelDiff));  // bench mean is 0: N/A like msprobe
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

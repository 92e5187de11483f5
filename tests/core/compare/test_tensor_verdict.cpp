// A tensor's verdict: the ulp at a magnitude is the binade spacing, bf16 rounding is precision
// and beyond it diverges, an overflow in one run only is non-finite.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/compare/run_comparison.h"
#include "core/compare/tensor_metrics.h"
#include "core/compare/tensor_verdict.h"
#include "tests/core/float_reference.h"

using namespace dl;
using dltest::spacing;
using dltest::toBf16;

namespace {

TensorMetrics data(const std::vector<float>& a, const std::vector<float>& b, bool zeroDim = false) {
    TensorMetrics m;
    computeDataMetrics(a.data(), b.data(), a.size(), zeroDim, m);
    return m;
}

// Statistics of a float vector with a plain float64 loop.
TensorStats statsOf(const std::vector<float>& v) {
    TensorStats s;
    s.max = -INFINITY, s.min = INFINITY;
    double sum = 0, sq = 0;
    for (float x : v)
        s.max = std::max(s.max, double(x)), s.min = std::min(s.min, double(x)), sum += x, sq += double(x) * x;
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
    EXPECT_EQ(ulpAt(19968, DType::BFloat16), 128.0);  // 2^14 <= 19968 < 2^15: 2^(14 - 7)
    for (double m : {1.0, 1.5, 3.0, 19952.0, 65504.0, 0.0123, 1e-3})
        for (auto [d, p] :
             {std::pair{DType::Float16, 11}, std::pair{DType::BFloat16, 8}, std::pair{DType::Float32, 24}})
            EXPECT_EQ(ulpAt(m, d), spacing(m, p)) << m << " " << p;
    EXPECT_EQ(ulpAt(1e-6, DType::Float16), std::ldexp(1.0, -24));  // below fp16's smallest normal
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
        maxAbs = std::max(maxAbs, std::fabs(double(a[i]) - b[i])),
        scale = std::max({scale, std::fabs(double(a[i])), std::fabs(double(b[i]))});
    const double ulp = spacing(scale, 8);
    ASSERT_LE(maxAbs, 0.5 * ulp);  // round-to-nearest: half an ulp at most
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
    EXPECT_EQ(judge({19952, -1041, 7}, {19968, -1040, 7}, DType::Float16, DType::BFloat16, {}, reason),
              Verdict::Precision);
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
    EXPECT_EQ(judge({65504, -2430, 1}, {86528, -2432, 1}, DType::Float16, DType::BFloat16, {}, reason),
              Verdict::NonFinite);
    EXPECT_NE(reason.find("run A saturates at the fp16 limit 65504"), std::string::npos) << reason;
    // Both fp16 runs saturate: no change of status, the values are judged.
    EXPECT_NE(judge({65504, 1}, {65504, 1.0009765625f}, DType::Float16, DType::Float16, {}, reason),
              Verdict::NonFinite);
    // INF/NAN mode: inf against finite; off when the NaN/Inf test is.
    const std::vector<float> withInf{INFINITY, 3, 1}, finite{86528, 3, 1};
    TensorStats sa = statsOf({3, 1}), sb = statsOf(finite);
    sa.posInfCount = 1;
    const TensorMetrics m = data(withInf, finite);
    EXPECT_EQ(judgeTensor(m, sa, sb, DType::Float16, DType::BFloat16, DType::BFloat16, {}, "", reason),
              Verdict::NonFinite);
    EXPECT_NE(reason.find("run A inf, run B finite"), std::string::npos) << reason;
    CompareThresholds off;
    off.nanInf = false;
    EXPECT_NE(judgeTensor(m, sa, sb, DType::Float16, DType::BFloat16, DType::BFloat16, off, "", reason),
              Verdict::NonFinite);
}

// msprobe reduces an fp16/bf16 tensor's Mean and L2 norm in that dtype (docs/formats.md 3): the
// L2 of 128 bf16 values summed in bf16 can sit percents off the exact one. Its bound follows the
// reduction ((n-1) unit roundoffs), so that is precision; the same gap between float32 norms, or
// with the reduction length unknown, still diverges.
TEST(TensorVerdict, StatisticReducedInBf16IsPrecision) {
    std::mt19937 rng(3);
    std::normal_distribution<float> g(0, 1);
    std::vector<float> v(128);
    for (float& x : v) x = toBf16(1.1f + 0.05f * g(rng));  // once the sum of squares passes 128, each 1.2 adds 1
    // The bf16 run's figure as a bf16 reduction gives it: each partial sum rounded to bf16.
    float acc = 0;
    for (float x : v) acc = toBf16(acc + toBf16(x * x));
    const TensorStats exact = statsOf(v);
    TensorStats reduced = exact;
    reduced.l2 = toBf16(std::sqrt(acc));
    const double gap = std::fabs(reduced.l2 - exact.l2);
    ASSERT_GT(gap, 2 * ulpAt(exact.l2, DType::BFloat16));  // past the 2-ulp bound of a rounded result
    TensorMetrics m;
    computeStatsMetrics(reduced, exact, m);
    std::string reason;
    EXPECT_EQ(judgeTensor(m, reduced, exact, DType::BFloat16, DType::Float32, DType::BFloat16, {}, "", reason, {}, {},
                          128, 128),
              Verdict::Precision)
        << reason;
    EXPECT_NE(reason.find("reduction in bfloat16 over 128 elements"), std::string::npos) << reason;
    EXPECT_EQ(judgeTensor(m, reduced, exact, DType::BFloat16, DType::Float32, DType::BFloat16, {}, "", reason),
              Verdict::Diverged)
        << reason;
    EXPECT_EQ(judgeTensor(m, reduced, exact, DType::Float32, DType::Float32, DType::BFloat16, {}, "", reason, {}, {},
                          128, 128),
              Verdict::Diverged)
        << reason;
    // Max is no reduction: a max off by the same gap diverges whatever the length.
    TensorStats moved = exact;
    moved.max = exact.max + gap;
    computeStatsMetrics(moved, exact, m);
    EXPECT_EQ(judgeTensor(m, moved, exact, DType::BFloat16, DType::Float32, DType::BFloat16, {}, "", reason, {}, {},
                          128, 128),
              Verdict::Diverged)
        << reason;
}

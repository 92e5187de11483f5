#include "core/compare/tensor_metrics.h"
#include "core/compare/tensor_verdict.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace dl {

namespace {

constexpr double kEps = DBL_EPSILON;                        // np.finfo(float64).eps: both sides are float64 in msprobe
constexpr double kThousandth = 0.001;                       // CompareConst.THOUSAND_RATIO_THRESHOLD
constexpr double kFiveThousandth = 0.005;                   // CompareConst.FIVE_THOUSAND_RATIO_THRESHOLD
constexpr std::size_t kParallelMin = std::size_t(1) << 22;  // elements: split one tensor over cores

using v4f = float __attribute__((vector_size(16)));
using v4i = std::int32_t __attribute__((vector_size(16)));
using v4d = double __attribute__((vector_size(32)));
using v4l = std::int64_t __attribute__((vector_size(32)));

struct Sums {
    double dot = 0, na = 0, nb = 0, euc = 0, maxAbs = 0, maxRel = 0;
    std::uint64_t below1 = 0, below5 = 0, mismatch = 0;

    void add(const Sums& o) {
        dot += o.dot, na += o.na, nb += o.nb, euc += o.euc;
        maxAbs = std::max(maxAbs, o.maxAbs), maxRel = std::max(maxRel, o.maxRel);
        below1 += o.below1, below5 += o.below5, mismatch += o.mismatch;
    }
};

// One element pair, the reference the vector loop must agree with.
inline void scalarStep(float xf, float yf, Sums& s) {
    const bool xn = std::isnan(xf), yn = std::isnan(yf), xi = std::isinf(xf), yi = std::isinf(yf);
    s.mismatch += (xn != yn) || (xi != yi);
    const double x = std::isfinite(xf) ? xf : 0.0, y = std::isfinite(yf) ? yf : 0.0;
    const double d = x - y;
    s.dot += x * y, s.na += x * x, s.nb += y * y, s.euc += d * d;
    s.maxAbs = std::max(s.maxAbs, std::fabs(d));
    const double rel = y == 0 ? std::fabs((x + kEps) - kEps) / kEps : std::fabs(d / y);
    s.maxRel = std::max(s.maxRel, rel);
    s.below1 += rel < kThousandth;
    s.below5 += rel < kFiveThousandth;
}

// GCC resolves target_clones through an ifunc, whose resolver runs while the program is being
// relocated, before the ThreadSanitizer runtime is up: a TSan build crashes at load. It takes the
// default clone only.
#if defined(__SANITIZE_THREAD__)
#define DL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DL_TSAN 1
#endif
#endif
#ifdef DL_TSAN
#define DL_AVX2_CLONES
#else
#define DL_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#endif

// Four pairs per step in float64 lanes; compiled for AVX2 where the CPU has it.
DL_AVX2_CLONES
Sums kernel(const float* a, const float* b, std::size_t n) {
    const v4d zero = {0, 0, 0, 0}, eps = {kEps, kEps, kEps, kEps};
    const v4d t1 = {kThousandth, kThousandth, kThousandth, kThousandth};
    const v4d t5 = {kFiveThousandth, kFiveThousandth, kFiveThousandth, kFiveThousandth};
    const v4l absMask = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
    const v4i expMask = {0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000};
    v4d dot = zero, na = zero, nb = zero, euc = zero, maxAbs = zero, maxRel = zero;
    v4l c1 = {0, 0, 0, 0}, c5 = {0, 0, 0, 0};
    v4i mism = {0, 0, 0, 0};
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4f x, y;
        std::memcpy(&x, a + i, sizeof x);
        std::memcpy(&y, b + i, sizeof y);
        const v4i xnf = ((v4i)x & expMask) == expMask;  // NaN or Inf
        const v4i ynf = ((v4i)y & expMask) == expMask;
        const v4i xnan = x != x, ynan = y != y;  // NOLINT(misc-redundant-expression): lane-wise NaN test
        mism |= (xnan ^ ynan) | ((xnf & ~xnan) ^ (ynf & ~ynan));
        const v4f xz = (v4f)((v4i)x & ~xnf);
        const v4f yz = (v4f)((v4i)y & ~ynf);
        const v4d dx = __builtin_convertvector(xz, v4d), dy = __builtin_convertvector(yz, v4d);
        const v4d d = dx - dy;
        dot += dx * dy, na += dx * dx, nb += dy * dy, euc += d * d;
        const v4d ad = (v4d)((v4l)d & absMask);
        maxAbs = ad > maxAbs ? ad : maxAbs;
        const v4l bz = dy == zero;
        const v4d num = bz ? (dx + eps) - eps : d;
        const v4d den = bz ? eps : dy;
        const v4d q = num / den;
        const v4d rel = (v4d)((v4l)q & absMask);
        maxRel = rel > maxRel ? rel : maxRel;
        c1 -= rel < t1;
        c5 -= rel < t5;
    }
    Sums s;
    for (int l = 0; l < 4; ++l) {
        s.dot += dot[l], s.na += na[l], s.nb += nb[l], s.euc += euc[l];
        s.maxAbs = std::max(s.maxAbs, maxAbs[l]), s.maxRel = std::max(s.maxRel, maxRel[l]);
        s.below1 += std::uint64_t(c1[l]), s.below5 += std::uint64_t(c5[l]);
        s.mismatch += mism[l] != 0;
    }
    for (; i < n; ++i) scalarStep(a[i], b[i], s);
    return s;
}

Sums sumsOf(const float* a, const float* b, std::size_t n) {
    if (n < kParallelMin) return kernel(a, b, n);
    return tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, n, kParallelMin / 4), Sums{},
        [&](const tbb::blocked_range<std::size_t>& r, Sums s) {
            s.add(kernel(a + r.begin(), b + r.begin(), r.size()));
            return s;
        },
        [](Sums x, const Sums& y) {
            x.add(y);
            return x;
        });
}

// msprobe: |a - b| / |b| as a fraction; N/A when b is 0 or either side unknown.
double relDiff(double a, double b) {
    if (std::isnan(a) || std::isnan(b) || b == 0) return TensorMetrics::kNA;
    return std::fabs(a - b) / std::fabs(b);
}

}  // namespace

void computeDataMetrics(const float* a, const float* b, std::size_t n, bool zeroDim, TensorMetrics& out) {
    out.elements = n;
    out.fromData = false;
    if (n == 0) return;  // msprobe: "This is empty data, can not compare."
    const Sums s = sumsOf(a, b, n);
    if (s.mismatch) {  // "The position of inf or nan in NPU and bench Tensor do not match."
        out.nanInfMismatch = true;
        return;
    }
    out.fromData = true;
    out.maxAbsErr = s.maxAbs;
    out.maxRelErr = s.maxRel;
    out.eucDist = std::sqrt(s.euc);
    if (!zeroDim) {
        out.oneThousandthRatio = double(s.below1) / double(n);
        out.fiveThousandthRatio = double(s.below5) / double(n);
    }
    if (zeroDim || n == 1) return;  // cosine unsupported for scalars
    const double normA = std::sqrt(s.na), normB = std::sqrt(s.nb);
    if (normA <= kEps && normB <= kEps)
        out.cosine = 1.0;
    else if (normA <= kEps || normB <= kEps)
        out.cosine = TensorMetrics::kNA;  // all zero on one side
    else
        out.cosine = s.dot / (normA * normB);
}

void computeStatsMetrics(const TensorStats& a, const TensorStats& b, TensorMetrics& out) {
    auto fill = [&](std::uint32_t bit, double va, double vb, double& diff, double& rel) {
        if (!a.has(bit) || !b.has(bit)) return;
        diff = va - vb;
        rel = relDiff(va, vb);
    };
    fill(stat::Max, a.max, b.max, out.maxDiff, out.maxRelDiff);
    fill(stat::Min, a.min, b.min, out.minDiff, out.minRelDiff);
    fill(stat::Mean, a.mean, b.mean, out.meanDiff, out.meanRelDiff);
    fill(stat::L2, a.l2, b.l2, out.l2Diff, out.l2RelDiff);
    // Exact counts compare as counts; an "at least" count only by presence (below).
    const bool exact = !a.nonFiniteCountsAreLowerBounds() && !b.nonFiniteCountsAreLowerBounds();
    if (exact && a.has(stat::NanCount) && b.has(stat::NanCount) && a.nanCount != b.nanCount) out.nanInfMismatch = true;
    const std::uint32_t inf = stat::PosInfCount | stat::NegInfCount;
    if (exact && a.has(inf) && b.has(inf) && (a.posInfCount != b.posInfCount || a.negInfCount != b.negInfCount))
        out.nanInfMismatch = true;
    // One side may only say "NaN/Inf present" (msprobe's inf/NaN Max or Min becomes a count of 1)
    // while the other has finite Max and Min and no counts: presence is what can be compared.
    const AnomalyStatus xa = anomalyOf(a, DType::Unknown), xb = anomalyOf(b, DType::Unknown);
    if (xa.known && xb.known && (xa.nan != xb.nan || xa.inf != xb.inf)) out.nanInfMismatch = true;
    if (a.has(stat::Count) && b.has(stat::Count) && a.count != b.count) out.shapeMismatch = true;
}

}  // namespace dl

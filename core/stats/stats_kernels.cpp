#include "core/stats/stats_kernels.h"
#include "core/util/byte_swap.h"

#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>

#include "core/util/half.h"

// Design (chosen by measurement, see docs/PERFORMANCE.md): every 16/32-bit float type is widened
// to float32 in L1-sized blocks (fp16 and bf16 convert exactly), then one AVX2 block kernel does
// min/max, zero count and double sums; NaN/Inf are rare, so a block holding any is redone by the
// exact scalar kernel instead of paying for their masks on every element. A scalar pass counts
// sign+exponent (bits >> 23) into 4 interleaved tables: that gives the log2 histogram (no log2
// calls; fp16 subnormals are normal floats, so their bins are exact) and the sign and tiny counts.

namespace dl::kernels {

namespace {

constexpr std::size_t kBlock = 4096;  // elements per block: the float copy stays in L1
constexpr double kSatLimit = kFp16Max;
constexpr double kTinyLimit = 0x1p-14;

bool cpuHasAvx2() {
    __builtin_cpu_init();
    // F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports does not know "f16c".
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
}

std::atomic<bool>& simdFlag() {
    static std::atomic<bool> on{cpuHasAvx2()};
    return on;
}

// floor(log2|x|) for finite non-zero x, from the bit pattern (exact at powers of two).
inline int log2Floor(double x) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
    const int e = int((bits >> 52) & 0x7ff);
    return e ? e - 1023 : std::ilogb(x);  // ilogb only for f64 subnormals
}

inline void addOne(double d, StatsPartial& p, Log2Histogram& h) {
    if (std::isnan(d)) {
        ++p.nan;
        ++h.nan;
        return;
    }
    if (std::isinf(d)) {
        if (d > 0) {
            ++p.posInf;
            ++p.pos;
            ++h.posInf;
        } else {
            ++p.negInf;
            ++p.neg;
            ++h.negInf;
        }
        return;
    }
    ++p.finite;
    p.sum += d;
    p.sumSq += d * d;
    p.min = std::min(p.min, d);
    p.max = std::max(p.max, d);
    const double a = std::fabs(d);
    p.maxAbs = std::max(p.maxAbs, a);
    if (d == 0) {
        ++p.zero;
        ++h.zero;
        return;
    }
    if (d < 0)
        ++p.neg;
    else
        ++p.pos;
    if (a >= kSatLimit) ++p.sat;
    if (a < kTinyLimit) ++p.sub;
    ++h.exp[Log2Histogram::binOf(log2Floor(d))];
}

void scalarFloats(const float* x, std::size_t n, StatsPartial& p, Log2Histogram& h) {
    for (std::size_t i = 0; i < n; ++i) addOne(double(x[i]), p, h);
}

// ---- AVX2 path -------------------------------------------------------------------------------

#define DL_AVX2 __attribute__((target("avx2,fma,f16c")))

DL_AVX2 inline float hmin(__m256 v) {
    __m128 m = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_min_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_min_ss(m, _mm_shuffle_ps(m, m, 1)));
}
DL_AVX2 inline float hmax(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1)));
}
DL_AVX2 inline double hsum(__m256d v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}
DL_AVX2 inline std::uint64_t hcount(__m256i v) {
    alignas(32) std::uint32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
    std::uint64_t s = 0;
    for (std::uint32_t c : lanes) s += c;
    return s;
}

// Accumulators for one 8-lane step; two sets alternate so the FP add/FMA latency chains
// (3-5 cycles) overlap instead of bounding the loop. Signs, tiny values and the histogram come
// from the exponent tables, maxAbs from min/max, NaN/Inf from the sum turning non-finite, so
// the step is only min, max, zero count and the double sums.
struct Lanes {
    __m256 vmin, vmax;
    __m256d s0, s1, q0, q1;
    __m256i cZero;
};

DL_AVX2 inline void initLanes(Lanes& l) {
    l.vmin = _mm256_set1_ps(INFINITY);
    l.vmax = _mm256_set1_ps(-INFINITY);
    l.s0 = l.s1 = l.q0 = l.q1 = _mm256_setzero_pd();
    l.cZero = _mm256_setzero_si256();
}

DL_AVX2 inline void step(Lanes& l, __m256 v) {
    l.vmin = _mm256_min_ps(l.vmin, v);
    l.vmax = _mm256_max_ps(l.vmax, v);
    l.cZero = _mm256_sub_epi32(l.cZero, _mm256_castps_si256(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_EQ_OQ)));
    const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
    const __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    l.s0 = _mm256_add_pd(l.s0, lo);
    l.s1 = _mm256_add_pd(l.s1, hi);
    l.q0 = _mm256_fmadd_pd(lo, lo, l.q0);
    l.q1 = _mm256_fmadd_pd(hi, hi, l.q1);
}

DL_AVX2 std::uint64_t countSaturated(const float* x, std::size_t n) {
    const __m256 absMask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 sat = _mm256_set1_ps(float(kSatLimit));
    __m256i c = _mm256_setzero_si256();
    for (std::size_t i = 0; i < n; i += 8) {
        const __m256 a = _mm256_and_ps(_mm256_loadu_ps(x + i), absMask);
        c = _mm256_sub_epi32(c, _mm256_castps_si256(_mm256_cmp_ps(a, sat, _CMP_GE_OQ)));
    }
    return hcount(c);
}

// Float block: min/max/maxAbs/sums/finite/sat into `p`, zeros into `zeros`. Returns false
// (having changed nothing) if the block holds NaN or Inf. `n` is a multiple of 8.
DL_AVX2 bool fastBlock(const float* x, std::size_t n, StatsPartial& p, std::uint64_t& zeros) {
    zeros = 0;
    if (n == 0) return true;
    Lanes a, b;
    initLanes(a);
    initLanes(b);
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        step(a, _mm256_loadu_ps(x + i));
        step(b, _mm256_loadu_ps(x + i + 8));
    }
    if (i < n) step(a, _mm256_loadu_ps(x + i));
    // Finite floats cannot overflow a double sum of a block; NaN or Inf makes it non-finite.
    const double sum = hsum(_mm256_add_pd(_mm256_add_pd(a.s0, a.s1), _mm256_add_pd(b.s0, b.s1)));
    if (!std::isfinite(sum)) return false;
    const double mn = hmin(_mm256_min_ps(a.vmin, b.vmin)), mx = hmax(_mm256_max_ps(a.vmax, b.vmax));
    p.min = std::min(p.min, mn);
    p.max = std::max(p.max, mx);
    p.maxAbs = std::max(p.maxAbs, std::max(-mn, mx));
    p.sum += sum;
    p.sumSq += hsum(_mm256_add_pd(_mm256_add_pd(a.q0, a.q1), _mm256_add_pd(b.q0, b.q1)));
    p.finite += n;
    if (mx >= kSatLimit || mn <= -kSatLimit) p.sat += countSaturated(x, n);
    zeros = hcount(a.cZero) + hcount(b.cZero);
    p.zero += zeros;
    return true;
}

DL_AVX2 void halfBlock(const std::uint8_t* in, std::size_t n, bool bigEndian, float* out) {
    const __m128i swap = _mm_setr_epi8(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i));
        if (bigEndian) h = _mm_shuffle_epi8(h, swap);
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        out[i] = halfToFloat(bigEndian ? byteSwap(h) : h);
    }
}

DL_AVX2 void bf16Block(const std::uint8_t* in, std::size_t n, bool bigEndian, float* out) {
    const __m128i swap = _mm_setr_epi8(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i));
        if (bigEndian) h = _mm_shuffle_epi8(h, swap);
        const __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
        _mm256_storeu_ps(out + i, _mm256_castsi256_ps(w));
    }
    for (; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        out[i] = bf16ToFloat(bigEndian ? byteSwap(h) : h);
    }
}

// ---- shared driver ---------------------------------------------------------------------------

// Runs blocks of floats through the fast kernel and the sign+exponent tables; folds on
// destruction. Table index = bits >> 23: sign bit, then the exponent field E, where
// floor(log2|x|) = E - 127 for E in 1..254. E = 0 (zero or f32 subnormal) is binned per block.
class FloatRun {
public:
    FloatRun(StatsPartial& p, Log2Histogram& h) : m_p(p), m_h(h), m_simd(simdEnabled()) {}
    ~FloatRun() { fold(); }
    FloatRun(const FloatRun&) = delete;
    FloatRun& operator=(const FloatRun&) = delete;

    void block(const float* x, std::size_t n) {
        if (!m_simd) return scalarFloats(x, n, m_p, m_h);
        const std::size_t body = n & ~std::size_t(7);
        std::uint64_t zeros = 0;
        if (!fastBlock(x, body, m_p, zeros)) return scalarFloats(x, n, m_p, m_h);
        m_h.zero += zeros;
        const std::uint64_t e0Before = exponentZeroCount();
        histogram(x, body);
        if (exponentZeroCount() - e0Before > zeros) f32Subnormals(x, body);
        scalarFloats(x + body, n - body, m_p, m_h);
        if ((m_sinceFold += n) > (1u << 30)) fold();
    }

private:
    std::uint64_t exponentZeroCount() const {
        std::uint64_t c = 0;
        for (const auto& t : m_t) c += std::uint64_t(t[0]) + t[256];
        return c;
    }
    void histogram(const float* x, std::size_t n) {
        std::size_t i = 0;
        for (; i + 4 <= n; i += 4) {
            std::uint32_t b[4];
            std::memcpy(b, x + i, sizeof b);
            ++m_t[0][b[0] >> 23];
            ++m_t[1][b[1] >> 23];
            ++m_t[2][b[2] >> 23];
            ++m_t[3][b[3] >> 23];
        }
        for (; i < n; ++i) ++m_t[0][std::bit_cast<std::uint32_t>(x[i]) >> 23];
    }
    void f32Subnormals(const float* x, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            if (x[i] == 0 || (std::bit_cast<std::uint32_t>(x[i]) & 0x7f800000u)) continue;
            ++m_h.exp[Log2Histogram::binOf(std::ilogb(x[i]))];
            ++m_p.sub;
            if (x[i] < 0)
                ++m_p.neg;
            else
                ++m_p.pos;
        }
    }
    void fold() {
        for (int e = 1; e < 255; ++e) {
            std::uint64_t pos = 0, neg = 0;
            for (const auto& t : m_t) {
                pos += t[e];
                neg += t[256 + e];
            }
            m_h.exp[Log2Histogram::binOf(e - 127)] += pos + neg;
            m_p.pos += pos;
            m_p.neg += neg;
            if (e - 127 < -14) m_p.sub += pos + neg;
        }
        std::memset(m_t, 0, sizeof m_t);
        m_sinceFold = 0;
    }

    StatsPartial& m_p;
    Log2Histogram& m_h;
    bool m_simd;
    std::uint32_t m_t[4][512]{};
    std::uint64_t m_sinceFold = 0;
};

template <class Convert>
void runConverted(const std::uint8_t* in, std::size_t n, std::size_t elemSize, StatsPartial& p, Log2Histogram& h,
                  Convert convert) {
    alignas(64) float buf[kBlock];
    FloatRun run(p, h);
    for (std::size_t i = 0; i < n; i += kBlock) {
        const std::size_t m = std::min(kBlock, n - i);
        convert(in + i * elemSize, m, buf);
        run.block(buf, m);
    }
}

void scalarHalf(const std::uint8_t* in, std::size_t n, bool bigEndian, float* out, bool bf16) {
    for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        if (bigEndian) h = byteSwap(h);
        out[i] = bf16 ? bf16ToFloat(h) : halfToFloat(h);
    }
}

}  // namespace

bool simdEnabled() { return simdFlag().load(std::memory_order_relaxed); }
void setSimdEnabled(bool on) { simdFlag().store(on && cpuHasAvx2()); }

void addFloat16(const void* data, std::size_t n, bool bigEndian, StatsPartial& p, Log2Histogram& hist) {
    const bool simd = simdEnabled();
    runConverted(static_cast<const std::uint8_t*>(data), n, 2, p, hist,
                 [&](const std::uint8_t* in, std::size_t m, float* out) {
                     if (simd)
                         halfBlock(in, m, bigEndian, out);
                     else
                         scalarHalf(in, m, bigEndian, out, false);
                 });
}

void addBFloat16(const void* data, std::size_t n, bool bigEndian, StatsPartial& p, Log2Histogram& hist) {
    const bool simd = simdEnabled();
    runConverted(static_cast<const std::uint8_t*>(data), n, 2, p, hist,
                 [&](const std::uint8_t* in, std::size_t m, float* out) {
                     if (simd)
                         bf16Block(in, m, bigEndian, out);
                     else
                         scalarHalf(in, m, bigEndian, out, true);
                 });
}

void addFloat32(const void* data, std::size_t n, bool bigEndian, StatsPartial& p, Log2Histogram& hist) {
    const auto* in = static_cast<const std::uint8_t*>(data);
    const bool aligned = reinterpret_cast<std::uintptr_t>(in) % alignof(float) == 0;
    if (!bigEndian && aligned) {  // read in place, no copy
        FloatRun run(p, hist);
        const auto* x = reinterpret_cast<const float*>(in);
        for (std::size_t i = 0; i < n; i += kBlock) run.block(x + i, std::min(kBlock, n - i));
        return;
    }
    runConverted(in, n, 4, p, hist, [&](const std::uint8_t* src, std::size_t m, float* out) {
        std::memcpy(out, src, m * 4);
        if (bigEndian)
            for (std::size_t i = 0; i < m; ++i)
                out[i] = std::bit_cast<float>(byteSwap(std::bit_cast<std::uint32_t>(out[i])));
    });
}

void addDoubles(const double* x, std::size_t n, StatsPartial& p, Log2Histogram& hist) {
    for (std::size_t i = 0; i < n; ++i) addOne(x[i], p, hist);
}

}  // namespace dl::kernels

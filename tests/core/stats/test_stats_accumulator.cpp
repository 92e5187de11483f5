#include "core/stats/stats_accumulator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/stats/stats_kernels.h"
#include "core/util/half.h"

using namespace dl;

namespace {

// Straightforward reference: one double loop with frexp for the histogram.
struct Reference {
    TensorStats s;
    Log2Histogram h;
    explicit Reference(const std::vector<double>& v) {
        double sum = 0, sumSq = 0, mn = INFINITY, mx = -INFINITY, ma = 0;
        std::uint64_t finite = 0;
        for (double x : v) {
            if (std::isnan(x)) {
                ++s.nanCount;
                ++h.nan;
                continue;
            }
            if (std::isinf(x)) {
                if (x > 0) {
                    ++s.posInfCount;
                    ++s.posCount;
                    ++h.posInf;
                } else {
                    ++s.negInfCount;
                    ++s.negCount;
                    ++h.negInf;
                }
                continue;
            }
            ++finite;
            sum += x;
            sumSq += x * x;
            mn = std::min(mn, x);
            mx = std::max(mx, x);
            ma = std::max(ma, std::fabs(x));
            if (x == 0) {
                ++s.zeroCount;
                ++h.zero;
                continue;
            }
            (x < 0 ? s.negCount : s.posCount)++;
            if (std::fabs(x) >= 65504) ++s.satCount;
            if (std::fabs(x) < std::ldexp(1.0, -14)) ++s.subnormalCount;
            int e = 0;
            std::frexp(x, &e);
            ++h.exp[Log2Histogram::binOf(e - 1)];
        }
        s.count = v.size();
        s.l2 = std::sqrt(sumSq);
        if (finite) {
            s.min = mn;
            s.max = mx;
            s.mean = sum / double(finite);
            s.maxAbs = ma;
        }
    }
};

void expectMatches(const StatsAccumulator& acc, const std::vector<double>& values, const char* what) {
    SCOPED_TRACE(what);
    const Reference ref(values);
    const TensorStats s = acc.stats();
    EXPECT_EQ(s.count, ref.s.count);
    EXPECT_EQ(s.nanCount, ref.s.nanCount);
    EXPECT_EQ(s.posInfCount, ref.s.posInfCount);
    EXPECT_EQ(s.negInfCount, ref.s.negInfCount);
    EXPECT_EQ(s.zeroCount, ref.s.zeroCount);
    EXPECT_EQ(s.negCount, ref.s.negCount);
    EXPECT_EQ(s.posCount, ref.s.posCount);
    EXPECT_EQ(s.satCount, ref.s.satCount);
    EXPECT_EQ(s.subnormalCount, ref.s.subnormalCount);
    EXPECT_TRUE(s.has(stat::Count | stat::NanCount | stat::L2 | stat::Histogram | stat::SatCount));
    EXPECT_NEAR(s.l2, ref.s.l2, 1e-12 * ref.s.l2);
    const bool anyFinite = !std::isnan(ref.s.min);
    EXPECT_EQ(s.has(stat::Min), anyFinite);
    EXPECT_EQ(s.has(stat::Max | stat::Mean | stat::MaxAbs), anyFinite);
    if (anyFinite) {
        EXPECT_EQ(s.min, ref.s.min);
        EXPECT_EQ(s.max, ref.s.max);
        EXPECT_EQ(s.maxAbs, ref.s.maxAbs);
        EXPECT_NEAR(s.mean, ref.s.mean, 1e-12 * std::max(1.0, ref.s.maxAbs));
    }
    const Log2Histogram& h = acc.histogram();
    EXPECT_EQ(h.exp, ref.h.exp);
    EXPECT_EQ(h.zero, ref.h.zero);
    EXPECT_EQ(h.nan, ref.h.nan);
    EXPECT_EQ(h.posInf, ref.h.posInf);
    EXPECT_EQ(h.negInf, ref.h.negInf);
}

// Random fp16 bit patterns drawn from a mix: normal data, specials, subnormals, 65504,
// powers of two. `specials` off keeps NaN/Inf out so the SIMD fast path is exercised.
std::vector<std::uint16_t> randomHalves(std::size_t n, bool specials, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<std::uint16_t> out(n);
    for (auto& h : out) {
        const unsigned pick = rng() % 100;
        if (pick < 70)
            h = floatToHalf(normal(rng));
        else if (pick < 78)
            h = std::uint16_t(rng() % 0x400) | std::uint16_t(rng() & 0x8000);  // subnormal/zero
        else if (pick < 82)
            h = rng() & 1 ? 0x7bff : 0xfbff;  // +-65504
        else if (pick < 90)
            h = floatToHalf(std::ldexp(rng() & 1 ? 1.0f : -1.0f, int(rng() % 40) - 24));
        else if (pick < 93)
            h = rng() & 1 ? 0x0000 : 0x8000;
        else if (specials && pick < 96)
            h = std::uint16_t(0x7c01 + rng() % 0x3ff) | std::uint16_t(rng() & 0x8000);
        else if (specials)
            h = rng() & 1 ? 0x7c00 : 0xfc00;
        else
            h = std::uint16_t(rng());                          // any pattern...
        if (!specials && (h & 0x7c00) == 0x7c00) h &= 0xbfff;  // ...but finite
    }
    return out;
}

class BothPaths : public ::testing::TestWithParam<bool> {
protected:
    void SetUp() override { kernels::setSimdEnabled(GetParam()); }
    void TearDown() override { kernels::setSimdEnabled(true); }
};

template <class U>
std::vector<U> swapped(const std::vector<U>& v) {
    std::vector<U> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        auto bytes = std::bit_cast<std::array<std::uint8_t, sizeof(U)>>(v[i]);
        std::reverse(bytes.begin(), bytes.end());
        out[i] = std::bit_cast<U>(bytes);
    }
    return out;
}

}  // namespace

TEST_P(BothPaths, Float16MatchesReference) {
    for (bool specials : {false, true}) {
        for (std::size_t n : {0u, 1u, 7u, 8u, 100u, 4096u, 4103u, 50000u}) {
            const auto bits = randomHalves(n, specials, std::uint32_t(n * 2 + specials));
            std::vector<double> values;
            for (auto b : bits) values.push_back(halfToFloat(b));
            StatsAccumulator acc;
            acc.add(bits.data(), bits.size(), DType::Float16);
            expectMatches(acc, values, specials ? "fp16 with NaN/Inf" : "fp16 finite");
            StatsAccumulator be;
            const auto sw = swapped(bits);
            be.add(sw.data(), sw.size(), DType::Float16, true);
            expectMatches(be, values, "fp16 big-endian");
        }
    }
}

TEST_P(BothPaths, BFloat16MatchesReference) {
    std::mt19937 rng(11);
    for (bool specials : {false, true}) {
        std::vector<std::uint16_t> bits(9001);
        for (auto& b : bits) {
            b = std::uint16_t(rng());
            if (!specials && (b & 0x7f80) == 0x7f80) b &= 0xbfff;
        }
        bits[5] = 0x7f7f;  // bf16 max
        bits[6] = 0x0001;  // smallest subnormal (2^-133)
        bits[7] = 0x3f80;  // 1.0, a power of two
        std::vector<double> values;
        for (auto b : bits) values.push_back(bf16ToFloat(b));
        StatsAccumulator acc;
        acc.add(bits.data(), bits.size(), DType::BFloat16);
        expectMatches(acc, values, "bf16");
        const auto sw = swapped(bits);
        StatsAccumulator be;
        be.add(sw.data(), sw.size(), DType::BFloat16, true);
        expectMatches(be, values, "bf16 big-endian");
    }
}

TEST_P(BothPaths, Float32IncludingSubnormalsAndUnalignedData) {
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 1e5f);
    for (bool specials : {false, true}) {
        std::vector<float> v(20000);
        for (auto& x : v) {
            const unsigned pick = rng() % 10;
            if (pick < 6)
                x = normal(rng);
            else if (pick < 7)
                x = std::bit_cast<float>(std::uint32_t(rng() % 0x800000));  // f32 subnormal
            else if (pick < 8)
                x = std::ldexp(1.0f, int(rng() % 250) - 125);
            else if (pick < 9)
                x = 65504.0f;
            else
                x = specials ? (rng() & 1 ? NAN : -INFINITY) : 0.0f;
        }
        std::vector<double> values(v.begin(), v.end());
        StatsAccumulator acc;
        acc.add(v.data(), v.size(), DType::Float32);
        expectMatches(acc, values, "fp32");
        // Same values one byte off alignment.
        std::vector<std::uint8_t> raw(v.size() * 4 + 1);
        std::memcpy(raw.data() + 1, v.data(), v.size() * 4);
        StatsAccumulator un;
        un.add(raw.data() + 1, v.size(), DType::Float32);
        expectMatches(un, values, "fp32 unaligned");
        const auto sw = swapped(v);
        StatsAccumulator be;
        be.add(sw.data(), sw.size(), DType::Float32, true);
        expectMatches(be, values, "fp32 big-endian");
    }
}

INSTANTIATE_TEST_SUITE_P(Stats, BothPaths, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "simd" : "scalar"; });

TEST(StatsAccumulator, Float64AndIntegers) {
    const std::vector<double> d = {1.5, -2.0, 0.0, NAN, INFINITY, 1e150, 4.9e-324, -65504.0, 0x1p-20};
    StatsAccumulator acc;
    acc.add(d.data(), d.size(), DType::Float64);
    expectMatches(acc, d, "f64");
    const auto dsw = swapped(d);
    StatsAccumulator dbe;
    dbe.add(dsw.data(), dsw.size(), DType::Float64, true);
    expectMatches(dbe, d, "f64 big-endian");

    const std::vector<std::int8_t> i8 = {-128, -1, 0, 1, 7, 127};
    const std::vector<double> i8d(i8.begin(), i8.end());
    for (DType t : {DType::Int8, DType::Int4}) {
        StatsAccumulator a;
        a.add(i8.data(), i8.size(), t);
        expectMatches(a, i8d, "int8/int4");
    }
    const std::vector<std::int32_t> i32 = {-70000, 3, 0, 65504, 2147483647};
    const std::vector<double> i32d(i32.begin(), i32.end());
    StatsAccumulator a32;
    a32.add(i32.data(), i32.size(), DType::Int32);
    expectMatches(a32, i32d, "int32");
    const auto i32sw = swapped(i32);
    StatsAccumulator b32;
    b32.add(i32sw.data(), i32sw.size(), DType::Int32, true);
    expectMatches(b32, i32d, "int32 big-endian");
    const std::vector<std::uint64_t> u64 = {0, 1, 1ull << 40};
    StatsAccumulator a64;
    a64.add(u64.data(), u64.size(), DType::UInt64);
    expectMatches(a64, {0.0, 1.0, std::ldexp(1.0, 40)}, "uint64");
    const std::vector<std::int16_t> i16 = {-5, 300};
    StatsAccumulator a16;
    a16.add(i16.data(), i16.size(), DType::Int16);
    expectMatches(a16, {-5.0, 300.0}, "int16");
    const std::vector<std::uint8_t> u1 = {0, 1, 1, 0, 1};
    StatsAccumulator au;
    au.add(u1.data(), u1.size(), DType::UInt1);
    expectMatches(au, {0, 1, 1, 0, 1}, "uint1");
}

TEST(StatsAccumulator, Bool) {
    const std::vector<std::uint8_t> b = {0, 1, 1, 0, 2, 0};
    StatsAccumulator acc;
    acc.add(b.data(), b.size(), DType::Bool);
    expectMatches(acc, {0, 1, 1, 0, 1, 0}, "bool");
    StatsAccumulator allFalse;
    allFalse.add(b.data(), 1, DType::Bool);
    EXPECT_EQ(allFalse.stats().max, 0.0);
}

TEST(StatsAccumulator, NoFiniteValuesLeavesRangeUnknown) {
    const std::vector<std::uint16_t> h = {0x7e00, 0x7c00, 0xfc00};
    StatsAccumulator acc;
    acc.add(h.data(), h.size(), DType::Float16);
    const TensorStats s = acc.stats();
    EXPECT_FALSE(s.known & (stat::Min | stat::Max | stat::Mean | stat::MaxAbs));
    EXPECT_TRUE(s.has(stat::Count | stat::NanCount | stat::PosInfCount | stat::NegInfCount));
    EXPECT_EQ(s.nanCount, 1u);
    EXPECT_EQ(s.infCount(), 2u);
    EXPECT_EQ(s.posCount, 1u);
    EXPECT_EQ(s.negCount, 1u);
    StatsAccumulator empty;
    EXPECT_EQ(empty.stats().count, 0u);
    EXPECT_TRUE(empty.stats().has(stat::Count));
    EXPECT_FALSE(empty.stats().has(stat::Min));
}

TEST(StatsAccumulator, ComplexAndUnknownAreUnsupported) {
    const std::vector<float> c = {1, 2, 3, 4};
    StatsAccumulator acc;
    acc.add(c.data(), 2, DType::Complex64);
    EXPECT_EQ(acc.stats().known, 0u);
    StatsAccumulator unk;
    unk.add(c.data(), 2, DType::Unknown);
    EXPECT_EQ(unk.stats().known, 0u);
}

TEST(StatsAccumulator, MergeEqualsOnePass) {
    const auto bits = randomHalves(30000, true, 99);
    std::vector<double> values;
    for (auto b : bits) values.push_back(halfToFloat(b));
    StatsAccumulator a, b;
    a.add(bits.data(), 12345, DType::Float16);
    b.add(bits.data() + 12345, bits.size() - 12345, DType::Float16);
    a.merge(b);
    expectMatches(a, values, "merged");
}

TEST(StatsAccumulator, AllFp16PatternsPowersOfTwoExact) {
    std::vector<std::uint16_t> all(65536);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = std::uint16_t(i);
    std::vector<double> values;
    for (auto b : all) values.push_back(halfToFloat(b));
    StatsAccumulator acc;
    acc.add(all.data(), all.size(), DType::Float16);
    expectMatches(acc, values, "all fp16 patterns");
    // 1024 mantissas per normal exponent and sign -> 2048 per bin; subnormal bins halve downwards.
    const auto& h = acc.histogram();
    EXPECT_EQ(h.exp[Log2Histogram::binOf(15)], 2048u);
    EXPECT_EQ(h.exp[Log2Histogram::binOf(-14)], 2048u);
    EXPECT_EQ(h.exp[Log2Histogram::binOf(-15)], 1024u);
    EXPECT_EQ(h.exp[Log2Histogram::binOf(-24)], 2u);
    EXPECT_EQ(acc.stats().satCount, 2u);
    EXPECT_EQ(acc.stats().subnormalCount, 2046u);
}

// ---- computeFileStats -------------------------------------------------------------------------

namespace {

std::string writeTemp(const std::string& name, const void* data, std::size_t n, std::size_t prefix) {
    const auto path = std::filesystem::temp_directory_path() / ("dl_stats_" + std::to_string(::getpid()) + "_" + name);
    std::ofstream f(path, std::ios::binary);
    const std::string pad(prefix, 'x');
    f.write(pad.data(), std::streamsize(pad.size()));
    f.write(static_cast<const char*>(data), std::streamsize(n));
    return path.string();
}

}  // namespace

TEST(ComputeFileStats, MatchesAccumulatorSerialAndParallel) {
    const auto bits = randomHalves(300000, true, 1234);
    const std::string path = writeTemp("f16.bin", bits.data(), bits.size() * 2, 128);
    StatsAccumulator acc;
    acc.add(bits.data(), bits.size(), DType::Float16);
    std::vector<double> values;
    for (auto b : bits) values.push_back(halfToFloat(b));
    FileStatsOptions small;
    small.chunkBytes = 4099;  // odd on purpose: rounded down to whole elements
    small.parallelThreshold = 10000;
    for (const FileStatsOptions& opt : {FileStatsOptions{}, small}) {
        TensorStats s;
        Log2Histogram h;
        std::string err;
        ASSERT_TRUE(computeFileStats(path.c_str(), 128, bits.size() * 2, DType::Float16, false, s, h, err, opt)) << err;
        const Reference ref(values);
        EXPECT_EQ(s.count, bits.size());
        EXPECT_EQ(s.nanCount, ref.s.nanCount);
        EXPECT_EQ(s.satCount, ref.s.satCount);
        EXPECT_EQ(s.min, ref.s.min);
        EXPECT_EQ(s.max, ref.s.max);
        EXPECT_NEAR(s.mean, ref.s.mean, 1e-9);
        EXPECT_EQ(h.exp, ref.h.exp);
    }
    std::filesystem::remove(path);
}

TEST(ComputeFileStats, ReportsShortFilesAndBadRegions) {
    const std::vector<float> v(10, 1.0f);
    const std::string path = writeTemp("short.bin", v.data(), v.size() * 4, 64);
    TensorStats s;
    Log2Histogram h;
    std::string err;
    EXPECT_FALSE(computeFileStats(path.c_str(), 64, 400, DType::Float32, false, s, h, err));
    EXPECT_EQ(err, "file ends at 104 bytes, header promises 464");
    EXPECT_FALSE(computeFileStats(path.c_str(), 64, 10, DType::Float32, false, s, h, err));
    EXPECT_NE(err.find("whole number"), std::string::npos);
    EXPECT_FALSE(computeFileStats(path.c_str(), UINT64_MAX - 2, 8, DType::Float32, false, s, h, err));
    EXPECT_FALSE(computeFileStats(path.c_str(), 0, 4, DType::Unknown, false, s, h, err));
    EXPECT_FALSE(computeFileStats("/nonexistent/dl.bin", 0, 4, DType::Float32, false, s, h, err));
    EXPECT_NE(err.find("cannot open"), std::string::npos);
    ASSERT_TRUE(computeFileStats(path.c_str(), 64, 40, DType::Float32, false, s, h, err)) << err;
    EXPECT_EQ(s.count, 10u);
    EXPECT_EQ(s.mean, 1.0);
    ASSERT_TRUE(computeFileStats(path.c_str(), 104, 0, DType::Float32, false, s, h, err)) << err;
    EXPECT_EQ(s.count, 0u);
    std::filesystem::remove(path);
}

#include "core/stats/log2_histogram.h"

#include <gtest/gtest.h>

#include <random>

using dl::Log2Histogram;

namespace {

bool sameHist(const Log2Histogram& a, const Log2Histogram& b) {
    return a.exp == b.exp && a.zero == b.zero && a.nan == b.nan && a.posInf == b.posInf && a.negInf == b.negInf;
}

Log2Histogram roundTrip(const Log2Histogram& h, std::size_t* encodedSize = nullptr) {
    std::vector<std::uint8_t> buf;
    h.encode(buf);
    if (encodedSize) *encodedSize = buf.size();
    Log2Histogram back;
    back.exp[3] = 99;  // decode must overwrite old content
    std::size_t pos = 0;
    EXPECT_TRUE(back.decode(buf.data(), buf.size(), pos));
    EXPECT_EQ(pos, buf.size());
    return back;
}

}  // namespace

TEST(Log2Histogram, EmptyAndBinOf) {
    Log2Histogram h;
    EXPECT_TRUE(h.empty());
    h.nan = 1;
    EXPECT_FALSE(h.empty());
    h.nan = 0;
    h.exp[Log2Histogram::binOf(0)] = 1;
    EXPECT_FALSE(h.empty());
    EXPECT_EQ(Log2Histogram::binOf(-1000), 0);
    EXPECT_EQ(Log2Histogram::binOf(1000), Log2Histogram::kExpBins - 1);
    EXPECT_EQ(Log2Histogram::binOf(0), -Log2Histogram::kMinExp);
}

TEST(Log2Histogram, EmptyEncodesCompactly) {
    Log2Histogram h;
    std::size_t size = 0;
    EXPECT_TRUE(sameHist(roundTrip(h, &size), h));
    EXPECT_EQ(size, 6u);  // lo, span, zero, nan, +inf, -inf: one byte each
}

TEST(Log2Histogram, RoundTripsSpansAndExtremes) {
    Log2Histogram h;
    h.exp[Log2Histogram::binOf(-24)] = 5;
    h.exp[Log2Histogram::binOf(15)] = 300;
    h.zero = 7;
    h.nan = 1ull << 40;
    h.posInf = 2;
    h.negInf = UINT64_MAX;
    std::size_t size = 0;
    EXPECT_TRUE(sameHist(roundTrip(h, &size), h));
    EXPECT_LT(size, 80u);  // only the -24..15 span is stored

    Log2Histogram edges;
    edges.exp.front() = 1;
    edges.exp.back() = UINT64_MAX;
    EXPECT_TRUE(sameHist(roundTrip(edges), edges));
}

TEST(Log2Histogram, RandomRoundTrips) {
    std::mt19937_64 rng(7);
    for (int iter = 0; iter < 200; ++iter) {
        Log2Histogram h;
        const int n = int(rng() % 20);
        for (int i = 0; i < n; ++i) h.exp[rng() % Log2Histogram::kExpBins] = rng() >> (rng() % 64);
        h.zero = rng() % 3 ? 0 : rng();
        h.nan = rng() % 1000;
        EXPECT_TRUE(sameHist(roundTrip(h), h));
    }
}

TEST(Log2Histogram, SeveralRecordsInOneBuffer) {
    Log2Histogram a, b;
    a.exp[10] = 3;
    b.exp[200] = 4;
    b.negInf = 1;
    std::vector<std::uint8_t> buf;
    a.encode(buf);
    b.encode(buf);
    Log2Histogram ra, rb;
    std::size_t pos = 0;
    ASSERT_TRUE(ra.decode(buf.data(), buf.size(), pos));
    ASSERT_TRUE(rb.decode(buf.data(), buf.size(), pos));
    EXPECT_EQ(pos, buf.size());
    EXPECT_TRUE(sameHist(ra, a));
    EXPECT_TRUE(sameHist(rb, b));
}

TEST(Log2Histogram, RejectsMalformed) {
    Log2Histogram h;
    h.exp[50] = 1000;
    h.exp[60] = 1;
    h.nan = 3;
    std::vector<std::uint8_t> buf;
    h.encode(buf);
    // Every truncation fails and leaves pos alone.
    for (std::size_t cut = 0; cut < buf.size(); ++cut) {
        Log2Histogram out;
        std::size_t pos = 0;
        EXPECT_FALSE(out.decode(buf.data(), cut, pos)) << cut;
        EXPECT_EQ(pos, 0u);
    }
    std::size_t pos = 0;
    Log2Histogram out;
    EXPECT_FALSE(out.decode(nullptr, 0, pos));
    // Span longer than the bin array.
    std::vector<std::uint8_t> bad = {0x00, 0xff, 0x03};
    pos = 0;
    EXPECT_FALSE(out.decode(bad.data(), bad.size(), pos));
    // Lowest exponent below kMinExp: zigzag(-135) = 269 = 0x8d 0x02.
    bad = {0x8d, 0x02, 0x01, 0x01, 0, 0, 0, 0};
    pos = 0;
    EXPECT_FALSE(out.decode(bad.data(), bad.size(), pos));
    // Span running past kMaxExp: lo 128 (zigzag 256 = 0x80 0x02), span 2.
    bad = {0x80, 0x02, 0x02, 0x01, 0x01, 0, 0, 0, 0};
    pos = 0;
    EXPECT_FALSE(out.decode(bad.data(), bad.size(), pos));
    // Varint longer than 64 bits.
    bad = {0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0};
    pos = 0;
    EXPECT_FALSE(out.decode(bad.data(), bad.size(), pos));
    // Garbage never crashes.
    std::mt19937 rng(3);
    for (int i = 0; i < 2000; ++i) {
        std::vector<std::uint8_t> junk(rng() % 40);
        for (auto& b : junk) b = std::uint8_t(rng());
        pos = 0;
        if (out.decode(junk.data(), junk.size(), pos)) {
            EXPECT_LE(pos, junk.size());
        }
    }
}

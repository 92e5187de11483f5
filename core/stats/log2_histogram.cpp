#include "core/stats/log2_histogram.h"

#include <algorithm>

namespace dl {

namespace {

void putVarint(std::vector<std::uint8_t>& out, std::uint64_t v) {
    while (v >= 0x80) {
        out.push_back(std::uint8_t(v | 0x80));
        v >>= 7;
    }
    out.push_back(std::uint8_t(v));
}

// At most 10 bytes; rejects truncation and bits beyond 64.
bool getVarint(const std::uint8_t* data, std::size_t size, std::size_t& pos, std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (pos >= size) return false;
        const std::uint8_t b = data[pos++];
        if (shift == 63 && (b & 0x7e)) return false;  // would overflow 64 bits
        v |= std::uint64_t(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

std::uint64_t zigzag(std::int64_t v) { return (std::uint64_t(v) << 1) ^ std::uint64_t(v >> 63); }
std::int64_t unzigzag(std::uint64_t v) { return std::int64_t(v >> 1) ^ -std::int64_t(v & 1); }

}  // namespace

bool Log2Histogram::empty() const {
    if (zero || nan || posInf || negInf) return false;
    return std::all_of(exp.begin(), exp.end(), [](std::uint64_t c) { return c == 0; });
}

// Layout: zigzag(lowest exponent), span, span counts, zero, nan, +inf, -inf (all varints).
// An empty exponent range is written as lo 0, span 0.
void Log2Histogram::encode(std::vector<std::uint8_t>& out) const {
    int first = 0, last = -1;
    for (int i = 0; i < kExpBins; ++i)
        if (exp[i]) {
            first = i;
            break;
        }
    for (int i = kExpBins - 1; i >= 0; --i)
        if (exp[i]) {
            last = i;
            break;
        }
    const int span = last >= first ? last - first + 1 : 0;
    putVarint(out, zigzag(span ? first + kMinExp : 0));
    putVarint(out, std::uint64_t(span));
    for (int i = 0; i < span; ++i) putVarint(out, exp[first + i]);
    for (std::uint64_t c : {zero, nan, posInf, negInf}) putVarint(out, c);
}

bool Log2Histogram::decode(const std::uint8_t* data, std::size_t size, std::size_t& pos) {
    std::size_t p = pos;
    std::uint64_t loZ = 0, span = 0;
    if (!data || !getVarint(data, size, p, loZ) || !getVarint(data, size, p, span)) return false;
    const std::int64_t lo = unzigzag(loZ);
    if (span > std::uint64_t(kExpBins)) return false;
    if (span && (lo < kMinExp || lo + std::int64_t(span) - 1 > kMaxExp)) return false;
    Log2Histogram h;
    for (std::uint64_t i = 0; i < span; ++i)
        if (!getVarint(data, size, p, h.exp[std::size_t(lo - kMinExp) + i])) return false;
    for (std::uint64_t* c : {&h.zero, &h.nan, &h.posInf, &h.negInf})
        if (!getVarint(data, size, p, *c)) return false;
    *this = h;
    pos = p;
    return true;
}

}  // namespace dl

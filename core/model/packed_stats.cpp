#include "core/model/packed_stats.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace dl {
namespace {

// Same figure: equal bits up to the NaN payload.
bool same(double a, double b) { return std::isnan(a) ? std::isnan(b) : std::memcmp(&a, &b, sizeof a) == 0; }

bool same(const TensorStats& a, const TensorStats& b) {
    return same(a.min, b.min) && same(a.max, b.max) && same(a.mean, b.mean) && same(a.l2, b.l2) &&
        same(a.maxAbs, b.maxAbs) && a.count == b.count && a.nanCount == b.nanCount && a.posInfCount == b.posInfCount &&
        a.negInfCount == b.negInfCount && a.zeroCount == b.zeroCount && a.negCount == b.negCount &&
        a.posCount == b.posCount && a.satCount == b.satCount && a.subnormalCount == b.subnormalCount &&
        a.known == b.known;
}

}  // namespace

bool PackedStats::pack(const TensorStats& s, PackedCounts* more) {
    mean = s.mean;
    l2 = s.l2;
    min = s.min;
    max = s.max;
    // Truncated counts and an underived maxAbs are caught by the round trip below.
    count = std::uint32_t(s.count);
    nanCount = std::uint32_t(s.nanCount);
    posInfCount = std::uint32_t(s.posInfCount);
    negInfCount = std::uint32_t(s.negInfCount);
    zeroCount = std::uint32_t(s.zeroCount);
    PackedCounts c;
    c.negCount = std::uint32_t(s.negCount);
    c.posCount = std::uint32_t(s.posCount);
    c.satCount = std::uint32_t(s.satCount);
    c.subnormalCount = std::uint32_t(s.subnormalCount);
    if (more)
        *more = c;
    else if (s.negCount | s.posCount | s.satCount | s.subnormalCount)
        return false;
    known = std::uint16_t(s.known);
    wide = 0;
    return same(unpack(more), s);
}

TensorStats PackedStats::unpack(const PackedCounts* more) const {
    TensorStats s;
    s.min = min;
    s.max = max;
    s.mean = mean;
    s.l2 = l2;
    if (known & stat::MaxAbs) s.maxAbs = std::max(-s.min, s.max);
    s.count = count;
    s.nanCount = nanCount;
    s.posInfCount = posInfCount;
    s.negInfCount = negInfCount;
    s.zeroCount = zeroCount;
    if (more) {
        s.negCount = more->negCount;
        s.posCount = more->posCount;
        s.satCount = more->satCount;
        s.subnormalCount = more->subnormalCount;
    }
    s.known = known;
    return s;
}

}  // namespace dl

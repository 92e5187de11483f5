#pragma once
// Per-tensor statistics as plain data. Filled either by the statistics kernel from tensor bytes
// or, partially, from a writer's statistic.csv; `known` says which figures are real.
#include <cstdint>
#include <limits>

namespace dl {

namespace stat {
// Bits of TensorStats::known. A figure whose bit is clear was not available and must not be shown.
enum Known : std::uint32_t {
    Min = 1u << 0,
    Max = 1u << 1,
    Mean = 1u << 2,
    L2 = 1u << 3,
    MaxAbs = 1u << 4,
    Count = 1u << 5,  // elements
    NanCount = 1u << 6,
    PosInfCount = 1u << 7,
    NegInfCount = 1u << 8,
    ZeroCount = 1u << 9,
    NegCount = 1u << 10,        // elements < 0
    PosCount = 1u << 11,        // elements > 0
    SatCount = 1u << 12,        // |x| >= 65504 (finite): fp16 saturated or would overflow as fp16
    SubnormalCount = 1u << 13,  // 0 < |x| < 2^-14: fp16 subnormal or flushed to zero
    Histogram = 1u << 14,
    AllFromData = (1u << 15) - 1,
    // Not a figure: the NaN/Inf counts that are set are only "at least" values (1 when a writer's
    // Max/Min showed NaN/Inf and it wrote no count: msprobe's dump.json, statistic.csv without
    // count columns). Shown as "at least N", never as an exact count; compared by presence only.
    NonFiniteLowerBound = 1u << 15,
};
}  // namespace stat

struct TensorStats {
    // min/max/mean/L2/maxAbs are over finite values only (NaN and +/-Inf are counted separately),
    // so a single Inf does not hide the finite range. Writers that propagate NaN/Inf into Max/Min
    // (MindSpore 2.3+ statistic.csv) are normalised into the counts where the CSV carries them.
    double min = std::numeric_limits<double>::quiet_NaN();
    double max = std::numeric_limits<double>::quiet_NaN();
    double mean = std::numeric_limits<double>::quiet_NaN();
    double l2 = std::numeric_limits<double>::quiet_NaN();
    double maxAbs = std::numeric_limits<double>::quiet_NaN();
    std::uint64_t count = 0;
    std::uint64_t nanCount = 0;
    std::uint64_t posInfCount = 0;
    std::uint64_t negInfCount = 0;
    std::uint64_t zeroCount = 0;
    std::uint64_t negCount = 0;
    std::uint64_t posCount = 0;
    std::uint64_t satCount = 0;
    std::uint64_t subnormalCount = 0;
    std::uint32_t known = 0;
    // The index files hold these as raw bytes (DumpIndex::wideStats): a named, zeroed tail instead
    // of 4 bytes of compiler padding, which kept whatever the stack held and made two indexes of
    // the same dump differ byte for byte.
    std::uint32_t unusedTail = 0;

    bool has(std::uint32_t bits) const { return (known & bits) == bits; }
    std::uint64_t infCount() const { return posInfCount + negInfCount; }
    bool nonFiniteCountsAreLowerBounds() const { return has(stat::NonFiniteLowerBound); }
};
// No padding: every byte is a member (doubles rule out std::has_unique_object_representations).
static_assert(sizeof(TensorStats) == 5 * sizeof(double) + 9 * sizeof(std::uint64_t) + 2 * sizeof(std::uint32_t));

}  // namespace dl

#pragma once
// TensorStats as a TensorRecord holds it: 64 bytes instead of 120. Read and write it through
// DumpIndex::stats() / setStats(), which fall back to a full TensorStats when this form cannot hold
// the figures exactly, so every reader sees what was stored, bit for bit.
#include <cstdint>
#include <limits>

#include "core/stats/tensor_stats.h"

namespace dl {

// Field by field:
// - min/max are float: the finite values of fp16/bf16/fp32 tensors are exactly floats.
// - maxAbs is not stored: the statistics kernel defines it as max(-min, max).
// - mean and l2 stay double: they are computed (sum / count, sqrt of a sum of squares), not tensor
//   values, so a float would round them (compare metrics and reports would move in the 8th digit),
//   and l2 can exceed the float range.
// - counts are 32-bit: 2^32 elements is a 8 GiB fp16 tensor, rare enough for the fallback.
// What does not survive (counts >= 2^32, fp64/int ranges, decimal figures from a statistic.csv)
// is kept whole in DumpIndex::wideStats.
struct PackedStats {
    double mean = std::numeric_limits<double>::quiet_NaN();
    double l2 = std::numeric_limits<double>::quiet_NaN();
    float min = std::numeric_limits<float>::quiet_NaN();
    float max = std::numeric_limits<float>::quiet_NaN();
    std::uint32_t count = 0;  // index into DumpIndex::wideStats when `wide`
    std::uint32_t nanCount = 0, posInfCount = 0, negInfCount = 0, zeroCount = 0;
    std::uint32_t negCount = 0, posCount = 0, satCount = 0, subnormalCount = 0;
    std::uint16_t known = 0;
    std::uint16_t wide = 0;

    // False when s has no exact packed form (then *this is unspecified).
    bool pack(const TensorStats& s);
    TensorStats unpack() const;
};
static_assert(sizeof(PackedStats) == 64);

}  // namespace dl

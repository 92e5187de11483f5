#pragma once
// TensorStats as a TensorRecord holds it: 56 bytes instead of 120. Read and write it through
// DumpIndex::stats() / setStats(), which fall back to a full TensorStats when this form cannot hold
// the figures exactly, so every reader sees what was stored, bit for bit.
#include <cstdint>
#include <limits>

#include "core/stats/tensor_stats.h"

namespace dl {

// Field by field:
// - maxAbs is not stored: the statistics kernel and the CSV/dump.json readers all make it
//   max(|min|, |max|).
// - min/max stay double although tensor values are floats: statistic.csv prints 6 significant
//   digits ("0.123457" is no float), and as floats every statistics-only tensor would take the
//   wide form (136 + 120 bytes instead of 144).
// - mean and l2 stay double: they are computed (sum / count, sqrt of a sum of squares), so a float
//   would round them (compare metrics and reports would move in the 8th digit), and l2 can exceed
//   the float range.
// - counts are 32-bit: 2^32 elements is an 8 GiB fp16 tensor, rare enough for the fallback.
// - the four counts only the statistics kernel computes (negative, positive, saturated, subnormal)
//   live in PackedCounts, beside the file fields of the tensors that have them (TensorSide):
//   statistics-only tensors (statistic.csv, dump.json) never carry them.
// What does not survive (counts >= 2^32, a maxAbs that is not max(|min|, |max|)) is kept whole in
// DumpIndex::wideStats.
struct PackedCounts {
    std::uint32_t negCount = 0, posCount = 0, satCount = 0, subnormalCount = 0;
    bool empty() const { return (negCount | posCount | satCount | subnormalCount) == 0; }
};

struct PackedStats {
    double mean = std::numeric_limits<double>::quiet_NaN();
    double l2 = std::numeric_limits<double>::quiet_NaN();
    double min = std::numeric_limits<double>::quiet_NaN();
    double max = std::numeric_limits<double>::quiet_NaN();
    std::uint32_t count = 0;  // index into DumpIndex::wideStats when `wide`
    std::uint32_t nanCount = 0, posInfCount = 0, negInfCount = 0, zeroCount = 0;
    std::uint16_t known = 0;
    std::uint16_t wide = 0;

    // False when s has no exact packed form (then *this and *more are unspecified). `more` receives
    // the kernel-only counts; without it they must be zero to pack.
    bool pack(const TensorStats& s, PackedCounts* more = nullptr);
    TensorStats unpack(const PackedCounts* more = nullptr) const;
};
static_assert(sizeof(PackedStats) == 56);
static_assert(sizeof(PackedCounts) == 16);

}  // namespace dl

#pragma once
// Element kernels behind StatsAccumulator: an AVX2/F16C/FMA path chosen at run time (the binary
// itself targets plain x86-64) and a portable scalar path that is also the reference.
#include <cstddef>
#include <cstdint>

#include "core/stats/log2_histogram.h"
#include "core/stats/stats_partial.h"

namespace dl::kernels {

// Each adds `n` elements stored at `data` (any alignment) to `p` and `hist`.
void addFloat16(const void* data, std::size_t n, bool bigEndian, StatsPartial& p, Log2Histogram& hist);
void addBFloat16(const void* data, std::size_t n, bool bigEndian, StatsPartial& p, Log2Histogram& hist);
void addFloat32(const void* data, std::size_t n, bool bigEndian, StatsPartial& p, Log2Histogram& hist);
// Exact scalar path for values already widened to double (f64, integers, bool).
void addDoubles(const double* x, std::size_t n, StatsPartial& p, Log2Histogram& hist);

// True when the AVX2 path is in use. Tests switch it off to compare both paths.
bool simdEnabled();
void setSimdEnabled(bool on);  // ignored (stays off) when the CPU lacks AVX2/FMA/F16C

}  // namespace dl::kernels

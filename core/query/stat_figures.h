#pragma once
// The min / max / max|x| / mean a person is shown for a tensor. TensorStats keeps them over the
// finite values only (so one Inf does not hide the finite range); shown alone they would say a
// tensor holding +Inf peaks at 2430. Here infinities count, NaN is skipped (numpy's nanmax), and a
// tensor with no finite or infinite value (all NaN) shows NaN. The table, its sorting, the tensor
// panel and the tooltips all take their figures from here.
#include <cstdint>
#include <optional>
#include <string>

#include "core/stats/tensor_stats.h"

namespace dl {

enum class StatFigure { Min, Max, MaxAbs, Mean };

// nullopt: the dump does not tell (statistic.csv without that column, no data). NaN: all NaN.
std::optional<double> statFigure(const TensorStats& s, StatFigure f);

// Sort key order for a figure: NaN (all NaN) above +Inf, so a descending sort puts the broken
// tensors first; unknown figures are handled by the caller (they sort last in either direction).
// Three-way compare of two known figures.
int compareFigures(double a, double b);

// A NaN/Inf count of `s` as a person reads it: "3", or "at least 1" when the dump only said
// "some" (TensorStats::nonFiniteCountsAreLowerBounds): never a made-up exact count.
std::string nonFiniteCountText(const TensorStats& s, std::uint64_t count);

}  // namespace dl

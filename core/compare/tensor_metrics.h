#pragma once
// Per-tensor comparison metrics with msprobe's names and definitions (msprobe/core/compare/
// npy_compare.py): values are compared as float64 after NaN/Inf handling.
//   Cosine               dot(a,b) / (|a| |b|); 1 when both norms <= DBL_EPSILON, N/A when one is;
//                        N/A for scalars and one-element tensors.
//   MaxAbsErr            max |a - b|
//   MaxRelativeErr       max |(a - b) / b|, where b == 0 compares (a + eps) - eps against eps
//                        (eps = DBL_EPSILON), i.e. |a| / eps
//   One/Five Thousandth  fraction of elements whose relative error is < 0.001 / < 0.005
//   Err Ratio            (a "pass ratio": 1 is perfect); N/A for 0-d scalars
//   EucDist              |a - b|_2
// NaN/Inf: when the NaN positions and the Inf positions of both tensors agree they are set to
// 0 on both sides before computing; when they disagree every metric is N/A and the tensor is
// flagged. msprobe rounds Cosine for display (6 decimals, > 0.9999 shown as 1); the raw value
// is kept here. Statistics mode (no tensor data): relative differences |a - b| / |b| of max,
// min, mean and L2 norm (N/A when b is 0), NaN/Inf count disagreement flagged, and so is NaN/Inf
// present in one run (counts, or msprobe's inf/NaN Max/Min) while the other's Max/Min are finite.
#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/stats/tensor_stats.h"

namespace dl {

struct TensorMetrics {
    static constexpr double kNA = std::numeric_limits<double>::quiet_NaN();
    bool fromData = false;        // data metrics were computed from both tensors' values
    bool nanInfMismatch = false;  // NaN/Inf positions (data) or counts (statistics) disagree
    bool shapeMismatch = false;
    bool unreadable = false;  // a side's file could not be read: nothing of it to compare
    std::uint64_t elements = 0;
    double cosine = kNA, maxAbsErr = kNA, maxRelErr = kNA;
    double oneThousandthRatio = kNA, fiveThousandthRatio = kNA, eucDist = kNA;
    // Statistics differences (filled whenever both sides know the figure).
    double maxDiff = kNA, minDiff = kNA, meanDiff = kNA, l2Diff = kNA;              // a - b
    double maxRelDiff = kNA, minRelDiff = kNA, meanRelDiff = kNA, l2RelDiff = kNA;  // |a - b| / |b|
};

// Data metrics over n element pairs. `zeroDim`: the tensors are 0-d scalars (shape ()).
void computeDataMetrics(const float* a, const float* b, std::size_t n, bool zeroDim, TensorMetrics& out);

// Statistics differences and NaN/Inf count disagreement from two TensorStats.
void computeStatsMetrics(const TensorStats& a, const TensorStats& b, TensorMetrics& out);

}  // namespace dl

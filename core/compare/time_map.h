#pragma once
// A monotone piecewise-linear map between the timelines of two runs, through the times of their
// matched ops, so that locked zoom and pan show the same part of the network in both runs even
// when one run is slower, has no timestamps, or has extra ops (a Cast around the fixed op).
#include <utility>
#include <vector>

#include "core/compare/compare_overlay.h"
#include "core/timeline/timeline_data.h"

namespace dl {

class TimeMap {
public:
    // points: (time in A, time in B) of matched ops, any order. Pairs that contradict the order
    // of the others (a longest non-decreasing chain is kept) are dropped; with no usable point
    // the full ranges map linearly onto each other.
    void build(std::vector<std::pair<double, double>> points, double a0, double a1, double b0, double b1);
    double toB(double ta) const { return map(m_a, m_b, ta); }
    double toA(double tb) const { return map(m_b, m_a, tb); }
    std::size_t knots() const { return m_a.size(); }

private:
    static double map(const std::vector<double>& from, const std::vector<double>& to, double t);
    std::vector<double> m_a, m_b;  // knots, both non-decreasing, strictly increasing in m_a
};

// The map between two timelines built from the same comparison (centres of matched ops).
TimeMap timeMapBetween(const TimelineData& a, const TimelineData& b, const CompareOverlay& overlay);

}  // namespace dl

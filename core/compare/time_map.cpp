#include "core/compare/time_map.h"

#include <algorithm>

#include "core/model/no_index.h"

namespace dl {

namespace {

constexpr std::size_t kMaxKnots = 4096;  // enough for a pixel-exact lock on any screen

// Indices of a longest chain of points (sorted by a) whose b values do not decrease.
std::vector<std::size_t> longestMonotoneChain(const std::vector<std::pair<double, double>>& pts) {
    std::vector<std::size_t> tails, prev(pts.size(), SIZE_MAX);
    for (std::size_t i = 0; i < pts.size(); ++i) {
        const auto pos = std::upper_bound(tails.begin(), tails.end(), pts[i].second,
                                          [&](double v, std::size_t j) { return v < pts[j].second; });
        if (pos != tails.begin()) prev[i] = *(pos - 1);
        if (pos == tails.end())
            tails.push_back(i);
        else
            *pos = i;
    }
    std::vector<std::size_t> chain;
    for (std::size_t i = tails.empty() ? SIZE_MAX : tails.back(); i != SIZE_MAX; i = prev[i]) chain.push_back(i);
    std::reverse(chain.begin(), chain.end());
    return chain;
}

}  // namespace

void TimeMap::build(std::vector<std::pair<double, double>> points, double a0, double a1, double b0, double b1) {
    m_a.clear();
    m_b.clear();
    std::sort(points.begin(), points.end());
    const std::vector<std::size_t> chain = longestMonotoneChain(points);
    const std::size_t step = std::max<std::size_t>(1, chain.size() / kMaxKnots);
    auto add = [&](double a, double b) {
        if (!m_a.empty() && (a <= m_a.back() || b < m_b.back())) return;
        m_a.push_back(a);
        m_b.push_back(b);
    };
    add(a0, b0);
    for (std::size_t k = 0; k < chain.size(); k += step) add(points[chain[k]].first, points[chain[k]].second);
    if (!chain.empty()) add(points[chain.back()].first, points[chain.back()].second);
    add(a1, b1);
    if (m_a.size() < 2) {  // no usable points: map the ranges onto each other
        m_a = {a0, a1 > a0 ? a1 : a0 + 1};
        m_b = {b0, b1 > b0 ? b1 : b0 + 1};
    }
}

double TimeMap::map(const std::vector<double>& from, const std::vector<double>& to, double t) {
    if (from.size() < 2) return t;
    // Outside the knots: extend the nearest segment's slope.
    std::size_t i = std::upper_bound(from.begin(), from.end(), t) - from.begin();
    i = std::clamp<std::size_t>(i, 1, from.size() - 1);
    const double span = from[i] - from[i - 1];
    if (span <= 0) return to[i - 1];  // repeated knots (only m_b can repeat)
    return to[i - 1] + (t - from[i - 1]) * (to[i] - to[i - 1]) / span;
}

TimeMap timeMapBetween(const TimelineData& a, const TimelineData& b, const CompareOverlay& overlay) {
    std::vector<std::pair<double, double>> pts;
    std::size_t la = 0, ia = 0, lb = 0, ib = 0;
    for (std::uint32_t op = 0; op < overlay.partnerA.size(); ++op) {
        const std::uint32_t partner = overlay.partnerA[op];
        if (partner == kNoIndex || !a.locate(op, la, ia) || !b.locate(partner, lb, ib)) continue;
        const TimelineItem& x = a.lanes[la].items[ia];
        const TimelineItem& y = b.lanes[lb].items[ib];
        pts.emplace_back((x.start + x.end) / 2.0, (y.start + y.end) / 2.0);
    }
    TimeMap m;
    m.build(std::move(pts), double(a.t0), double(a.t1), double(b.t0), double(b.t1));
    return m;
}

}  // namespace dl

#include "core/timeline/timeline_lod.h"

#include <algorithm>
#include <cmath>

namespace dl {

void TimelineLod::build(std::span<const TimelineItem> items, std::int64_t t0, std::int64_t t1) {
    m_levels.clear();
    m_t0 = t0;
    const double span = static_cast<double>(std::max<std::int64_t>(t1 - t0, 1));
    const double target = std::max<double>(1.0, static_cast<double>(items.size()) / 2.0);
    m_width0 = std::max(span / target, 1e-9);
    if (items.empty()) return;
    // Finest level: one pass over the start-sorted items.
    std::vector<LodBucket> cur;
    for (std::uint32_t i = 0; i < items.size(); ++i) {
        const TimelineItem& it = items[i];
        const auto key = static_cast<std::int64_t>(std::floor(static_cast<double>(it.start - t0) / m_width0));
        if (cur.empty() || cur.back().key != key) cur.push_back({key, it.start, it.end, 0, i, it.state});
        LodBucket& b = cur.back();
        b.end = std::max(b.end, it.end);
        b.worst = std::max(b.worst, it.state);
        ++b.count;
    }
    m_levels.push_back(std::move(cur));
    // Coarser levels merge bucket pairs until a single bucket remains.
    while (m_levels.back().size() > 1) {
        const auto& prev = m_levels.back();
        std::vector<LodBucket> next;
        next.reserve(prev.size() / 2 + 1);
        for (const LodBucket& b : prev) {
            const std::int64_t key = b.key >> 1;  // floor division for the (non-negative) keys
            if (next.empty() || next.back().key != key) {
                next.push_back(b);
                next.back().key = key;
                continue;
            }
            LodBucket& n = next.back();
            n.start = std::min(n.start, b.start);
            n.end = std::max(n.end, b.end);
            n.count += b.count;
            n.worst = std::max(n.worst, b.worst);
        }
        m_levels.push_back(std::move(next));
    }
}

int TimelineLod::levelFor(double maxWidth) const {
    int best = -1;
    for (int l = 0; l < levels(); ++l)
        if (bucketWidth(l) <= maxWidth) best = l;
    return best;
}

void TimelineLod::query(int level, double from, double to, std::vector<LodBucket>& out) const {
    queryRelative(level, from - static_cast<double>(m_t0), to - static_cast<double>(m_t0), out);
}

void TimelineLod::queryRelative(int level, double from, double to, std::vector<LodBucket>& out) const {
    if (level < 0 || level >= levels() || !(from <= to)) return;
    const auto& v = m_levels[level];
    const double w = bucketWidth(level);
    // One bucket of slack before `from`: its items may end inside the window. Keys are clamped
    // to the range of the data (a window far outside must not overflow the conversion).
    const double maxKey = static_cast<double>(v.empty() ? 0 : v.back().key) + 1;
    const auto k0 = static_cast<std::int64_t>(std::clamp(std::floor(from / w), -1.0, maxKey)) - 1;
    const auto k1 = static_cast<std::int64_t>(std::clamp(std::floor(to / w), -1.0, maxKey));
    auto lo = std::lower_bound(v.begin(), v.end(), k0, [](const LodBucket& b, std::int64_t k) { return b.key < k; });
    for (auto it = lo; it != v.end() && it->key <= k1; ++it) out.push_back(*it);
}

std::size_t TimelineLod::memoryBytes() const {
    std::size_t n = 0;
    for (const auto& l : m_levels) n += l.capacity() * sizeof(LodBucket);
    return n;
}

}  // namespace dl

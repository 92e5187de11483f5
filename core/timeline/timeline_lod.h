#pragma once
// Level-of-detail summary of one timeline lane: a pyramid of sparse fixed-width time buckets
// (finest level ~2 items per bucket, each level doubling the width). Drawing picks the coarsest
// level whose buckets are no wider than a pixel, so a frame touches at most ~one bucket per pixel
// column per lane however many ops the lane holds.
#include <cstdint>
#include <span>
#include <vector>

#include "core/query/op_state.h"

namespace dl {

struct TimelineItem {
    std::int64_t start = 0, end = 0;  // end >= start; time base of the TimelineData
    std::uint32_t op = 0;             // index into DumpIndex::ops
    OpState state = OpState::Normal;
    // The dump wrote no end time: end is the start of the next op of its lane in the same
    // iteration (or start, for the last one); endCapped: that gap was idle time, the slice is
    // cut to a few times the lane's median gap. In what was padding (24 bytes either way).
    bool inferredEnd = false;
    bool endCapped = false;
};
static_assert(sizeof(TimelineItem) == 24);

struct LodBucket {
    std::int64_t key = 0;             // bucket number at its level: floor((start - t0) / width)
    std::int64_t start = 0, end = 0;  // min start / max end of the items it holds
    std::uint32_t count = 0;
    std::uint32_t firstItem = 0;  // first item (by start) in the lane
    OpState worst = OpState::Normal;
};

class TimelineLod {
public:
    // items must be sorted by start.
    void build(std::span<const TimelineItem> items, std::int64_t t0, std::int64_t t1);
    int levels() const { return static_cast<int>(m_levels.size()); }
    double bucketWidth(int level) const { return m_width0 * static_cast<double>(std::int64_t(1) << level); }
    const std::vector<LodBucket>& level(int l) const { return m_levels[l]; }
    // Coarsest level whose bucket width is <= maxWidth; -1 when even the finest is wider (draw raw items).
    int levelFor(double maxWidth) const;
    // Buckets of `level` that may overlap [from, to], appended to out.
    void query(int level, double from, double to, std::vector<LodBucket>& out) const;
    // The same with [from, to] relative to the t0 given to build (exact for epoch timestamps).
    void queryRelative(int level, double from, double to, std::vector<LodBucket>& out) const;
    std::size_t memoryBytes() const;

private:
    std::int64_t m_t0 = 0;
    double m_width0 = 1;
    std::vector<std::vector<LodBucket>> m_levels;  // [0] finest
};

}  // namespace dl

// Timeline slices when the dump has no end times (each op runs to the next op of its lane, idle
// gaps capped), area summaries, and the histogram CSV export.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "core/stats/log2_histogram_csv.h"
#include "core/timeline/timeline_data.h"

namespace {

// One rank, ops at the given start times (µs), no end times, one output tensor each.
dl::DumpIndex startOnlyIndex(const std::vector<std::int64_t>& starts, std::uint32_t iteration = 0) {
    dl::DumpIndex ix;
    const dl::StrId type = ix.strings.intern("Add");
    for (std::size_t k = 0; k < starts.size(); ++k) {
        dl::OpRecord o;
        o.type = o.name = type;
        o.iteration = iteration;
        o.execPos = static_cast<std::uint32_t>(k);
        o.startUs = o.endUs = starts[k];
        o.tensorCount = static_cast<std::uint32_t>(k % 3);
        ix.ops.push_back(o);
    }
    return ix;
}

dl::OpStates normalStates(std::size_t n) {
    dl::OpStates s;
    s.op.assign(n, dl::OpState::Normal);
    return s;
}

}  // namespace

TEST(TimelineSlices, RunToTheNextOpAndCapIdleGaps) {
    // Gaps of 10 µs, then one of 1000 µs (idle: capped at 4 x the median gap of 10).
    const std::vector<std::int64_t> starts = {1700000000000000, 1700000000000010, 1700000000000020,
                                              1700000000000030, 1700000000001030, 1700000000001040};
    const dl::DumpIndex ix = startOnlyIndex(starts);
    const dl::TimelineData d = dl::buildTimeline(ix, nullptr, normalStates(ix.ops.size()), {});
    ASSERT_EQ(d.lanes.size(), 1u);
    EXPECT_TRUE(d.anyInferredEnd);
    const auto& items = d.lanes[0].items;
    ASSERT_EQ(items.size(), starts.size());
    for (std::size_t k = 0; k + 1 < items.size(); ++k) {
        EXPECT_TRUE(items[k].inferredEnd);
        const std::int64_t gap = starts[k + 1] - starts[k];
        EXPECT_EQ(items[k].end - items[k].start, std::min<std::int64_t>(gap, 40)) << k;
        EXPECT_EQ(items[k].endCapped, gap > 40) << k;
    }
    EXPECT_EQ(items.back().end, items.back().start);  // nothing follows: no duration
}

TEST(TimelineSlices, OpsWithEndTimesKeepThem) {
    dl::DumpIndex ix = startOnlyIndex({100, 200});
    ix.ops[0].endUs = 150;
    ix.ops[1].endUs = 260;
    const dl::TimelineData d = dl::buildTimeline(ix, nullptr, normalStates(2), {});
    EXPECT_FALSE(d.anyInferredEnd);
    EXPECT_EQ(d.lanes[0].items[0].end, 150);
    EXPECT_EQ(d.lanes[0].items[1].end, 260);
}

TEST(TimelineSlices, AreaSummaryCountsOpsTensorsAndStates) {
    const dl::DumpIndex ix = startOnlyIndex({1000, 1010, 1020, 1030, 1040, 1050});
    dl::OpStates st = normalStates(ix.ops.size());
    st.op[2] = dl::OpState::InfNan;
    const dl::TimelineData d = dl::buildTimeline(ix, nullptr, st, {});
    // [15, 32] relative to t0 = 1000 overlaps the slices of ops 1 (10-20), 2 (20-30) and 3 (30-40).
    const dl::TimelineAreaSummary s = d.summarizeArea(ix, 0, 0, 15, 32);
    EXPECT_EQ(s.ops, 3u);
    EXPECT_EQ(s.tensors, ix.ops[1].tensorCount + ix.ops[2].tensorCount + ix.ops[3].tensorCount);
    EXPECT_EQ(s.states[static_cast<std::size_t>(dl::OpState::InfNan)], 1u);
    EXPECT_EQ(s.states[static_cast<std::size_t>(dl::OpState::Normal)], 2u);
    EXPECT_EQ(s.firstStart, 1010);
    EXPECT_EQ(s.lastEnd, 1040);
    EXPECT_EQ(d.summarizeArea(ix, 0, 0, 32, 15).ops, 3u);  // either direction
    // The details panel lists the same ops, in start order, capped.
    EXPECT_EQ(d.opsInArea(0, 0, 15, 32, 100), (std::vector<std::uint32_t>{1, 2, 3}));
    EXPECT_EQ(d.opsInArea(0, 0, 32, 15, 2), (std::vector<std::uint32_t>{1, 2}));
}

TEST(Log2HistogramCsv, OneRowPerNonEmptyBinThenSpecials) {
    dl::Log2Histogram h;
    h.exp[dl::Log2Histogram::binOf(0)] = 5;  // 1 <= |x| < 2
    h.exp[dl::Log2Histogram::binOf(-3)] = 2;
    h.nan = 1;
    h.posInf = 3;
    const std::string csv = dl::log2HistogramCsv(h);
    std::istringstream in(csv);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    ASSERT_EQ(lines.size(), 1u + 2u + 4u);
    EXPECT_EQ(lines[0], "bin,abs_from,abs_below,count");
    EXPECT_EQ(lines[1], "2^-3,0.125,0.25,2");
    EXPECT_EQ(lines[2], "2^0,1,2,5");
    EXPECT_EQ(lines[4], "nan,,,1");
    EXPECT_EQ(lines[5], "+inf,,,3");
}

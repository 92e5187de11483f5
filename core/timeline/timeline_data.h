#pragma once
// What the timeline draws: one lane per rank (optionally per rank and stream), grouped by pipeline
// stage, each holding its ops as start-sorted items with a level-of-detail pyramid, plus the
// overflow chain as arrows between ops. Built once per (iteration, alignment) choice.
#include <cstdint>
#include <optional>
#include <stop_token>
#include <vector>

#include "core/analysis/analysis_result.h"
#include "core/index/dump_index.h"
#include "core/query/op_state.h"
#include "core/timeline/timeline_lod.h"
#include "core/util/progress.h"

namespace dl {

enum class TimeBase : std::uint8_t {
    Timestamps,      // microseconds (clock-aligned when asked)
    ExecutionOrder,  // op position on its rank: most ops lack timestamps
};

struct TimelineLane {
    std::uint32_t rank = 0;
    int stage = -1;
    std::optional<std::uint32_t> stream;   // set when lanes are split per stream
    std::vector<TimelineItem> items;        // sorted by start
    std::int64_t maxDuration = 0;           // longest item, for hit tests and range queries
    TimelineLod lod;
};

struct TimelineArrow {
    std::uint32_t fromOp = 0, toOp = 0;
    ChainRole fromRole = ChainRole::Send, toRole = ChainRole::Receive;
    ChainVia via = ChainVia::SameRank;   // a weight update crosses into the next iteration
};

struct TimelineOptions {
    std::optional<std::uint32_t> iteration;  // empty: every iteration
    bool alignClocks = true;                 // subtract AnalysisResult::clockOffsetUs per rank
    bool perStream = false;
    std::stop_token stop;                    // stopped: an empty TimelineData with `cancelled` set
    WorkCallback progress;                   // ops placed of all ops, then once when the lanes are built
};

struct TimelineData {
    bool cancelled = false;                  // stopped before the end: nothing else is set
    TimeBase base = TimeBase::Timestamps;
    std::int64_t t0 = 0, t1 = 1;             // range of all items, t1 > t0
    std::vector<TimelineLane> lanes;
    std::vector<TimelineArrow> arrows;       // overflow-chain hops (step it came from -> step), both on the timeline
    std::size_t opsShown = 0;
    std::size_t opsWithoutTime = 0;          // left out in Timestamps mode

    // Lane and item of an op; false when the op is not on this timeline.
    bool locate(std::uint32_t op, std::size_t& lane, std::size_t& item) const;
    // The most severe item of `lane` within `slack` of time t; null when none.
    const TimelineItem* itemAt(std::size_t lane, double t, double slack) const;
    // The same with t relative to t0 (exact for epoch-microsecond timestamps).
    const TimelineItem* itemAtRelative(std::size_t lane, double t, double slack) const;
    std::size_t memoryBytes() const;

    std::vector<std::uint64_t> where;        // per op: lane << 32 | item, or ~0 when not shown
};

TimelineData buildTimeline(const DumpIndex& index, const AnalysisResult* analysis, const OpStates& states,
                           const TimelineOptions& options);

}  // namespace dl

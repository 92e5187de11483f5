#pragma once
// What the timeline draws: one lane per rank (optionally per rank and stream), grouped by pipeline
// stage, each holding its ops as start-sorted items with a level-of-detail pyramid, plus the
// overflow chain as arrows between ops. Built once per (iteration, alignment) choice.
#include <array>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <vector>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"
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
    std::optional<std::uint32_t> stream;  // set when lanes are split per stream
    // The separate runs whose rank of this number the lane holds (core/analysis/separate_runs.h):
    // 1, or more when the folder holds several runs (the label says so).
    std::uint32_t runs = 1;
    std::vector<TimelineItem> items;  // sorted by start
    std::int64_t maxDuration = 0;     // longest item, for hit tests and range queries
    TimelineLod lod;
};

struct TimelineArrow {
    std::uint32_t fromOp = 0, toOp = 0;
    ChainRole fromRole = ChainRole::Send, toRole = ChainRole::Receive;
    ChainVia via = ChainVia::SameRank;  // a weight update crosses into the next iteration
};

struct TimelineOptions {
    std::optional<std::uint32_t> iteration;  // empty: every iteration
    bool alignClocks = true;                 // subtract AnalysisResult::clockOffsetUs per rank
    bool perStream = false;
    std::stop_token stop;   // stopped: an empty TimelineData with `cancelled` set
    WorkCallback progress;  // ops placed of all ops, then once when the lanes are built
};

// A flow of the selected op: its Send/Receive partner or a member of its collective.
struct TimelineFlow {
    std::uint32_t fromOp = 0, toOp = 0;  // a pair runs Send -> Receive; a collective from the selected op
    bool collective = false;
};

// What an area of the timeline (a time window over some lanes) holds.
struct TimelineAreaSummary {
    std::size_t ops = 0, tensors = 0;
    std::int64_t firstStart = 0, lastEnd = 0;  // of the ops inside (time base of the TimelineData)
    std::array<std::size_t, kOpStateCount> states{};
};

struct TimelineData {
    bool cancelled = false;  // stopped before the end: nothing else is set
    TimeBase base = TimeBase::Timestamps;
    std::int64_t t0 = 0, t1 = 1;  // range of all items, t1 > t0
    std::vector<TimelineLane> lanes;
    std::vector<TimelineArrow> arrows;  // overflow-chain hops (step it came from -> step), both on the timeline
    std::size_t opsShown = 0;
    std::size_t opsWithoutTime = 0;  // left out in Timestamps mode

    // Lane and item of an op; false when the op is not on this timeline.
    bool locate(std::uint32_t op, std::size_t& lane, std::size_t& item) const;
    // The most severe item of `lane` within `slack` of time t; null when none.
    const TimelineItem* itemAt(std::size_t lane, double t, double slack) const;
    // The same with t relative to t0 (exact for epoch-microsecond timestamps).
    const TimelineItem* itemAtRelative(std::size_t lane, double t, double slack) const;
    std::size_t memoryBytes() const;
    // Send/Receive partner and collective-group members of `op` that are on this timeline.
    std::vector<TimelineFlow> flowsFor(std::uint32_t op) const;
    // Ops of lanes [laneFrom, laneTo] overlapping [from, to] (relative to t0), with their tensors
    // and states counted (`index` is the one the timeline was built from).
    TimelineAreaSummary summarizeArea(const DumpIndex& index, std::size_t laneFrom, std::size_t laneTo, double from,
                                      double to) const;
    // The ops of that area, lane by lane in start order, at most `limit` of them (the details panel).
    std::vector<std::uint32_t> opsInArea(std::size_t laneFrom, std::size_t laneTo, double from, double to,
                                         std::size_t limit) const;
    bool anyInferredEnd = false;  // some ends were inferred: the dump wrote start times only

    std::vector<std::uint64_t> where;                    // per op: lane << 32 | item, or ~0 when not shown
    std::vector<std::int32_t> commPartner;               // per op: its Send/Receive partner, -1 none
    std::vector<bool> commIsReceive;                     // per op: the Receive of its pair (flows run Send -> Receive)
    std::vector<std::int32_t> commGroup;                 // per op: index into commGroups, -1 none
    std::vector<std::vector<std::uint32_t>> commGroups;  // collective instances: member ops
};

TimelineData buildTimeline(const DumpIndex& index, const AnalysisResult* analysis, const OpStates& states,
                           const TimelineOptions& options);

}  // namespace dl

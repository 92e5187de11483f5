#include "core/timeline/timeline_data.h"

#include "core/analysis/separate_runs.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/analysis/comm_matcher.h"
#include "core/util/parallel_for.h"

namespace dl {

namespace {

constexpr std::uint64_t kNotShown = ~std::uint64_t(0);

bool inIteration(const OpRecord& o, const TimelineOptions& opt) {
    return !opt.iteration || o.iteration == *opt.iteration;
}

// Timestamps only when (nearly) every op has one; otherwise the execution order is the honest axis.
TimeBase chooseBase(const DumpIndex& index, const TimelineOptions& opt) {
    std::size_t with = 0, total = 0;
    for (const OpRecord& o : index.ops) {
        if (!inIteration(o, opt)) continue;
        ++total;
        with += o.startUs != 0;
    }
    return total > 0 && with * 10 >= total * 9 ? TimeBase::Timestamps : TimeBase::ExecutionOrder;
}

using LaneKey = std::tuple<int, std::uint32_t, std::uint32_t>;  // (stage sort key, rank, stream)

// Ops without an end time become slices up to the next op of their lane in the same iteration
// (the rank's, or the stream's with lanes per stream): the lane then shows one op at a time, and
// an op had handed over to the next by then at the latest. A gap far above the lane's usual one
// (a pipeline bubble, a wait for a peer) is idle time, not the op: such a slice is capped at
// kIdleFactor times the lane's median gap and marked.
constexpr std::int64_t kIdleFactor = 4;

void inferEnds(const DumpIndex& index, std::vector<TimelineItem>& items) {
    const auto follows = [&](std::size_t k) {
        return k + 1 < items.size() && items[k].inferredEnd &&
            index.ops[items[k].op].iteration == index.ops[items[k + 1].op].iteration;
    };
    std::vector<std::int64_t> gaps;
    for (std::size_t k = 0; k < items.size(); ++k)
        if (follows(k)) gaps.push_back(items[k + 1].start - items[k].start);
    if (gaps.empty()) return;
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
    const std::int64_t cap = std::max<std::int64_t>(1, kIdleFactor * gaps[gaps.size() / 2]);
    for (std::size_t k = 0; k < items.size(); ++k) {
        if (!follows(k)) continue;
        const std::int64_t gap = std::max<std::int64_t>(0, items[k + 1].start - items[k].start);
        items[k].endCapped = gap > cap;
        items[k].end = items[k].start + std::min(gap, cap);
    }
}

}  // namespace

TimelineData buildTimeline(const DumpIndex& index, const AnalysisResult* analysis, const OpStates& states,
                           const TimelineOptions& opt) {
    const auto cancelled = [] {
        TimelineData c;
        c.cancelled = true;
        return c;
    };
    TimelineData d;
    d.base = chooseBase(index, opt);
    d.where.assign(index.ops.size(), kNotShown);
    std::map<LaneKey, std::size_t> laneOf;
    // Rank -> the roots of the runs holding it: more than one when the folder holds separate runs.
    std::map<std::uint32_t, std::set<std::string>> runsOfRank;
    for (const RankInfo& r : index.ranks) runsOfRank[r.rank].insert(runRootOf(r.folder));
    std::map<std::uint32_t, std::int64_t> seqOfRank;  // execution-order position per rank
    for (std::uint32_t i = 0; i < index.ops.size(); ++i) {
        if (i % kWorkStride == 0 && i) {
            if (opt.progress) opt.progress(i, index.ops.size());
            if (opt.stop.stop_requested()) return cancelled();
        }
        const OpRecord& o = index.ops[i];
        if (!inIteration(o, opt)) continue;
        TimelineItem it{0, 0, i, i < states.op.size() ? states.op[i] : OpState::Normal};
        if (d.base == TimeBase::Timestamps) {
            if (o.startUs == 0) {
                ++d.opsWithoutTime;
                continue;
            }
            std::int64_t off = 0;
            if (opt.alignClocks && analysis) {
                auto c = analysis->clockOffsetUs.find(o.rank);
                if (c != analysis->clockOffsetUs.end()) off = c->second;
            }
            it.start = o.startUs - off;
            it.end = std::max(o.endUs, o.startUs) - off;
            it.inferredEnd = o.endUs <= o.startUs;
            d.anyInferredEnd |= it.inferredEnd;
        } else {
            // Ops are sorted by (rank, iteration, graph, execPos): a running count is the order.
            it.start = seqOfRank[o.rank]++;
            it.end = it.start + 1;
        }
        const int stage = analysis ? analysis->stages.stageOf(o.rank) : -1;
        const LaneKey key{stage < 0 ? 1 << 30 : stage, o.rank, opt.perStream ? o.streamId : 0};
        auto [pos, added] = laneOf.try_emplace(key, d.lanes.size());
        if (added) {
            TimelineLane lane;
            lane.rank = o.rank;
            lane.stage = stage;
            if (auto r = runsOfRank.find(o.rank); r != runsOfRank.end()) lane.runs = std::uint32_t(r->second.size());
            if (opt.perStream) lane.stream = o.streamId;
            d.lanes.push_back(std::move(lane));
        }
        d.lanes[pos->second].items.push_back(it);
    }
    // Lanes in (stage, rank, stream) order.
    std::vector<TimelineLane> ordered;
    for (auto& [key, idx] : laneOf) ordered.push_back(std::move(d.lanes[idx]));
    d.lanes = std::move(ordered);

    bool any = false;
    for (const auto& l : d.lanes)
        for (const auto& it : l.items) {
            d.t0 = any ? std::min(d.t0, it.start) : it.start;
            d.t1 = any ? std::max(d.t1, it.end) : it.end;
            any = true;
        }
    if (!(d.t1 > d.t0)) d.t1 = d.t0 + 1;  // inferred ends never pass the last start: t1 holds
    if (opt.progress) opt.progress(index.ops.size(), index.ops.size());
    if (opt.stop.stop_requested()) return cancelled();
    std::atomic<bool> skipped{false};
    // Each lane is sorted and given its LOD by one worker (parallelFor states the fork and the
    // join to TSan: without them it reports the lanes moved in above as raced by the workers).
    parallelFor(std::size_t(0), d.lanes.size(), [&](std::size_t li) {
        if (opt.stop.stop_requested()) {  // the lane is left unsorted: the result is dropped below
            skipped = true;
            return;
        }
        TimelineLane& l = d.lanes[li];
        std::stable_sort(l.items.begin(), l.items.end(),
                         [](const TimelineItem& a, const TimelineItem& b) { return a.start < b.start; });
        if (d.anyInferredEnd) inferEnds(index, l.items);
        for (std::size_t k = 0; k < l.items.size(); ++k) {
            l.maxDuration = std::max(l.maxDuration, l.items[k].end - l.items[k].start);
            d.where[l.items[k].op] = (std::uint64_t(li) << 32) | k;
        }
        l.lod.build(l.items, d.t0, d.t1);
    });
    if (skipped) return cancelled();
    for (const auto& l : d.lanes) d.opsShown += l.items.size();
    if (analysis) {
        // One arrow per hop: from the step each step came from, so arrows run forward in time.
        for (const ChainStep& b : analysis->chain) {
            if (b.causedBy < 0 || std::size_t(b.causedBy) >= analysis->chain.size()) continue;
            const ChainStep& a = analysis->chain[std::size_t(b.causedBy)];
            if (a.at.op == b.at.op) continue;
            if (a.at.op >= d.where.size() || b.at.op >= d.where.size()) continue;
            if (d.where[a.at.op] == kNotShown || d.where[b.at.op] == kNotShown) continue;
            d.arrows.push_back({a.at.op, b.at.op, a.role, b.role, b.via});
        }
        // Flows of any op (drawn for the selected one): Send/Receive pairs and collective groups.
        const CommMatch match = matchCommunication(index, findCommOps(index), analysis->stages);
        d.commPartner = match.partner;
        d.commIsReceive.assign(index.ops.size(), false);
        for (const CommPair& p : match.pairs)
            if (p.recv < d.commIsReceive.size()) d.commIsReceive[p.recv] = true;
        d.commGroup = match.group;
        for (const CollectiveGroup& g : match.groups) d.commGroups.push_back(g.ops);
    }
    return d;
}

std::vector<TimelineFlow> TimelineData::flowsFor(std::uint32_t op) const {
    std::vector<TimelineFlow> out;
    std::size_t lane = 0, item = 0;
    if (!locate(op, lane, item)) return out;
    if (op < commPartner.size() && commPartner[op] >= 0) {
        const auto other = static_cast<std::uint32_t>(commPartner[op]);
        if (locate(other, lane, item)) {
            const bool opIsSend = !(op < commIsReceive.size() && commIsReceive[op]);
            out.push_back(opIsSend ? TimelineFlow{op, other, false} : TimelineFlow{other, op, false});
        }
    }
    if (op < commGroup.size() && commGroup[op] >= 0)
        for (std::uint32_t m : commGroups[static_cast<std::size_t>(commGroup[op])])
            if (m != op && locate(m, lane, item)) out.push_back({op, m, true});
    return out;
}

TimelineAreaSummary TimelineData::summarizeArea(const DumpIndex& index, std::size_t laneFrom, std::size_t laneTo,
                                                double from, double to) const {
    TimelineAreaSummary s;
    if (from > to) std::swap(from, to);
    const auto rel = [this](std::int64_t v) { return static_cast<double>(v - t0); };
    bool any = false;
    for (std::size_t li = laneFrom; li <= laneTo && li < lanes.size(); ++li) {
        const TimelineLane& l = lanes[li];
        auto it = std::lower_bound(l.items.begin(), l.items.end(), from - static_cast<double>(l.maxDuration),
                                   [&](const TimelineItem& x, double v) { return rel(x.start) < v; });
        for (; it != l.items.end() && rel(it->start) <= to; ++it) {
            if (rel(it->end) < from) continue;
            ++s.ops;
            s.tensors += it->op < index.ops.size() ? index.ops[it->op].tensorCount : 0;
            ++s.states[static_cast<std::size_t>(it->state)];
            s.firstStart = any ? std::min(s.firstStart, it->start) : it->start;
            s.lastEnd = any ? std::max(s.lastEnd, it->end) : it->end;
            any = true;
        }
    }
    return s;
}

std::vector<std::uint32_t> TimelineData::opsInArea(std::size_t laneFrom, std::size_t laneTo, double from, double to,
                                                   std::size_t limit) const {
    std::vector<std::uint32_t> out;
    if (from > to) std::swap(from, to);
    const auto rel = [this](std::int64_t v) { return static_cast<double>(v - t0); };
    for (std::size_t li = laneFrom; li <= laneTo && li < lanes.size(); ++li) {
        const TimelineLane& l = lanes[li];
        auto it = std::lower_bound(l.items.begin(), l.items.end(), from - static_cast<double>(l.maxDuration),
                                   [&](const TimelineItem& x, double v) { return rel(x.start) < v; });
        for (; it != l.items.end() && rel(it->start) <= to && out.size() < limit; ++it)
            if (rel(it->end) >= from) out.push_back(it->op);
    }
    return out;
}

bool TimelineData::locate(std::uint32_t op, std::size_t& lane, std::size_t& item) const {
    if (op >= where.size() || where[op] == kNotShown) return false;
    lane = static_cast<std::size_t>(where[op] >> 32);
    item = static_cast<std::size_t>(where[op] & 0xffffffffu);
    return true;
}

const TimelineItem* TimelineData::itemAt(std::size_t laneIdx, double t, double slack) const {
    return itemAtRelative(laneIdx, t - static_cast<double>(t0), slack);
}

const TimelineItem* TimelineData::itemAtRelative(std::size_t laneIdx, double t, double slack) const {
    if (laneIdx >= lanes.size() || !std::isfinite(t) || !std::isfinite(slack)) return nullptr;
    const TimelineLane& l = lanes[laneIdx];
    const auto rel = [this](std::int64_t v) { return static_cast<double>(v - t0); };
    const double lo = t - slack - static_cast<double>(l.maxDuration);
    auto it = std::lower_bound(l.items.begin(), l.items.end(), lo,
                               [&](const TimelineItem& x, double v) { return rel(x.start) < v; });
    const TimelineItem* best = nullptr;
    double bestDist = 0;
    // Bounded scan: in a zoomed-out view thousands of ops share a pixel; prefer the most severe.
    for (int n = 0; it != l.items.end() && rel(it->start) <= t + slack && n < 8192; ++it, ++n) {
        const double s = rel(it->start), e = rel(it->end);
        if (e < t - slack) continue;
        const double dist = t < s ? s - t : (t > e ? t - e : 0);
        if (!best || it->state > best->state || (it->state == best->state && dist < bestDist)) {
            best = &*it;
            bestDist = dist;
        }
    }
    return best;
}

std::size_t TimelineData::memoryBytes() const {
    std::size_t n = where.capacity() * sizeof(std::uint64_t);
    for (const auto& l : lanes) n += l.items.capacity() * sizeof(TimelineItem) + l.lod.memoryBytes();
    n += (commPartner.capacity() + commGroup.capacity()) * sizeof(std::int32_t) + commIsReceive.capacity() / 8;
    for (const auto& g : commGroups) n += g.capacity() * sizeof(std::uint32_t);
    return n;
}

}  // namespace dl

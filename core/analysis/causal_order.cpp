#include "core/analysis/causal_order.h"

#include <algorithm>
#include <limits>
#include <map>
#include <queue>
#include <set>

namespace dl {

void estimateClockOffsets(AnalysisContext& ctx, std::vector<std::string>& notes) {
    // bound[(a,b)] = min(recv_b - send_a): off_b - off_a can be at most this.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t> bound;
    std::set<std::uint32_t> ranks;
    for (const OpRecord& o : ctx.index.ops) ranks.insert(o.rank);
    std::size_t used = 0;
    for (const CommPair& p : ctx.match.pairs) {
        const std::int64_t ts = ctx.rawTime(p.send);
        const std::int64_t tr = ctx.index.ops[p.recv].endUs ? ctx.index.ops[p.recv].endUs : ctx.rawTime(p.recv);
        const std::uint32_t a = ctx.index.ops[p.send].rank, b = ctx.index.ops[p.recv].rank;
        if (!ts || !tr || a == b) continue;
        auto [it, fresh] = bound.try_emplace({a, b}, tr - ts);
        if (!fresh) it->second = std::min(it->second, tr - ts);
        ++used;
    }
    // A collective ends on every member after it started on every other member.
    for (const CollectiveGroup& g : ctx.match.groups) {
        if (g.ops.size() > 64) continue;  // a pair per member pair: large groups add little
        for (std::uint32_t a : g.ops)
            for (std::uint32_t b : g.ops) {
                const std::uint32_t ra = ctx.index.ops[a].rank, rb = ctx.index.ops[b].rank;
                const std::int64_t ts = ctx.rawTime(a);
                const std::int64_t te = ctx.index.ops[b].endUs ? ctx.index.ops[b].endUs : ctx.rawTime(b);
                if (!ts || !te || ra == rb) continue;
                auto [it, fresh] = bound.try_emplace({ra, rb}, te - ts);
                if (!fresh) it->second = std::min(it->second, te - ts);
                ++used;
            }
    }
    std::map<std::uint32_t, std::vector<std::pair<std::uint32_t, std::int64_t>>> edges;  // a -> (b, off_b - off_a)
    bool inconsistent = false;
    for (const auto& [ab, upper] : bound) {
        const auto [a, b] = ab;
        if (a > b && bound.count({b, a})) continue;  // handled from the other side
        auto back = bound.find({b, a});
        std::int64_t d;
        if (back != bound.end()) {
            const std::int64_t lower = -back->second;
            if (lower > upper) inconsistent = true;
            d = (lower + upper) / 2;  // both directions seen: the middle of the feasible window
        } else {
            d = std::min<std::int64_t>(0, upper);  // one direction: correct only what causality forces
        }
        edges[a].push_back({b, d});
        edges[b].push_back({a, -d});
    }
    for (std::uint32_t root : ranks) {
        if (ctx.clockOffsetUs.count(root)) continue;
        ctx.clockOffsetUs[root] = 0;
        ctx.clockComponent[root] = root;
        std::queue<std::uint32_t> q;
        q.push(root);
        while (!q.empty()) {
            const std::uint32_t a = q.front(); q.pop();
            for (auto [b, d] : edges[a])
                if (ctx.clockOffsetUs.emplace(b, ctx.clockOffsetUs[a] + d).second) {
                    ctx.clockComponent[b] = root;
                    q.push(b);
                }
        }
    }
    ctx.clocksAligned = used > 0;
    if (used == 0) {
        if (ranks.size() > 1) notes.push_back("no timed Send/Receive pairs: clocks of different ranks are not compared "
                                              "by causality, cross-rank order is weak evidence");
        return;
    }
    std::string s = "clock offsets estimated from " + std::to_string(used) + " Send/Receive and collective constraints:";
    for (const auto& [r, off] : ctx.clockOffsetUs) s += " rank " + std::to_string(r) + " " + std::to_string(off) + " us;";
    notes.push_back(s);
    if (inconsistent) notes.push_back("Send/Receive timestamps contradict each other for some rank pairs: pairing or "
                                      "clock estimate is uncertain");
}

bool happensBefore(const AnalysisContext& ctx, std::uint32_t a, std::uint32_t b) {
    const OpRecord &oa = ctx.index.ops[a], &ob = ctx.index.ops[b];
    if (oa.iteration != ob.iteration) return oa.iteration < ob.iteration;
    if (oa.rank == ob.rank) return a < b;
    std::map<std::uint32_t, std::uint32_t> reach{{oa.rank, a}};  // rank -> first op index reached
    auto relax = [&](std::uint32_t target, bool& changed) {
        const std::uint32_t r = ctx.index.ops[target].rank;
        auto it = reach.find(r);
        if (it == reach.end() || target < it->second) { reach[r] = target; changed = true; }
    };
    for (std::size_t round = 0, limit = ctx.comm.size() + 1; round < limit; ++round) {
        bool changed = false;
        for (const CommOp& c : ctx.comm) {
            const OpRecord& o = ctx.index.ops[c.op];
            if (o.iteration != oa.iteration) continue;
            auto it = reach.find(o.rank);
            if (it == reach.end() || c.op < it->second) continue;
            if (c.kind == CommKind::Send && ctx.match.partner[c.op] >= 0) relax(std::uint32_t(ctx.match.partner[c.op]), changed);
            if (isCollective(c.kind) && ctx.match.group[c.op] >= 0)
                for (std::uint32_t m : ctx.match.groups[std::size_t(ctx.match.group[c.op])].ops) relax(m, changed);
        }
        if (!changed) break;
    }
    auto it = reach.find(ob.rank);
    return it != reach.end() && it->second <= b;
}

bool firstOf(const AnalysisContext& ctx, std::uint32_t a, std::uint32_t b, OrderEvidence& evidence) {
    const OpRecord &oa = ctx.index.ops[a], &ob = ctx.index.ops[b];
    evidence = OrderEvidence::Causal;
    if (oa.iteration != ob.iteration) return oa.iteration < ob.iteration;
    if (oa.rank == ob.rank) return a < b;
    if (happensBefore(ctx, a, b)) return true;
    if (happensBefore(ctx, b, a)) return false;
    const std::int64_t ta = ctx.correctedTime(a), tb = ctx.correctedTime(b);
    if (ta && tb && ctx.rawTime(a) && ctx.rawTime(b)) {
        evidence = OrderEvidence::Clock;
        return ta != tb ? ta < tb : oa.rank < ob.rank;
    }
    // Pipeline schedule: forward runs from the first stage, backward from the last.
    evidence = OrderEvidence::Heuristic;
    const int sa = ctx.stages.stageOf(oa.rank), sb = ctx.stages.stageOf(ob.rank);
    if (sa >= 0 && sb >= 0 && sa != sb) {
        const bool backward = isBackwardName(ctx.index.strings.view(oa.name)) || isBackwardName(ctx.index.strings.view(oa.scope));
        return backward ? sa > sb : sa < sb;
    }
    return oa.rank < ob.rank;
}

}  // namespace dl

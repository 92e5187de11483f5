#include "core/analysis/chain_builder.h"

#include <algorithm>
#include <deque>
#include <set>

#include "core/analysis/causal_order.h"

namespace dl {

namespace {

struct Builder {
    const AnalysisContext& ctx;
    std::vector<ChainStep> steps;
    std::set<std::uint32_t> reachedRanks;

    std::pair<std::uint32_t, std::uint32_t> rangeOf(std::uint32_t rank, std::uint32_t iter) const {
        auto it = ctx.range.find({rank, iter});
        return it == ctx.range.end() ? std::pair<std::uint32_t, std::uint32_t>{0, 0} : it->second;
    }

    void add(ChainRole role, std::uint32_t op, std::string note) {
        ChainStep s;
        s.role = role;
        s.at = ctx.point(op);
        s.note = std::move(note);
        steps.push_back(std::move(s));
    }

    // First anomalous compute op on `rank` at or after `from` in `iter` (comm ops are hops, not steps).
    std::uint32_t firstBadAfter(std::uint32_t rank, std::uint32_t iter, std::uint32_t from) const {
        const auto [b, e] = rangeOf(rank, iter);
        for (std::uint32_t i = std::max(b, from); i < e; ++i)
            if (ctx.ops[i].anomalous() && ctx.ops[i].comm == CommKind::None) return i;
        return kNoIndex;
    }

    std::string name(std::uint32_t op) const { return ctx.index.strings.str(ctx.index.ops[op].name); }

    // Follows bad data out of the ranks reached so far, hop by hop, within `iter`.
    void walkIteration(std::uint32_t iter, std::deque<std::pair<std::uint32_t, std::uint32_t>> frontier, std::size_t maxSteps) {
        while (!frontier.empty() && steps.size() < maxSteps) {
            const auto [rank, from] = frontier.front();
            frontier.pop_front();
            const auto [b, e] = rangeOf(rank, iter);
            for (std::uint32_t i = std::max(b, from); i < e && steps.size() < maxSteps; ++i) {
                const CommKind k = ctx.ops[i].comm;
                if (k == CommKind::Send && ctx.carriesBad(i)) {
                    const std::int32_t p = ctx.match.partner[i];
                    if (p < 0) { add(ChainRole::Send, i, "bad data sent; its Receive is not in the dump"); continue; }
                    const std::uint32_t peer = ctx.index.ops[std::size_t(p)].rank;
                    if (reachedRanks.count(peer)) continue;
                    add(ChainRole::Send, i, "to rank " + std::to_string(peer));
                    add(ChainRole::Receive, std::uint32_t(p), "from rank " + std::to_string(rank) + " (" + name(i) + ")");
                    arrive(peer, iter, std::uint32_t(p), frontier);
                } else if (isCollective(k) && (ctx.ops[i].inputBad || ctx.ops[i].outputBad) && ctx.match.group[i] >= 0) {
                    bool any = false;
                    for (std::uint32_t m : ctx.match.groups[std::size_t(ctx.match.group[i])].ops) {
                        const std::uint32_t peer = ctx.index.ops[m].rank;
                        if (reachedRanks.count(peer) || !ctx.ops[m].outputBad) continue;
                        if (!any) add(ChainRole::Send, i, std::string(commKindName(k)) + " carries the anomaly to its group");
                        any = true;
                        add(ChainRole::Receive, m, std::string(commKindName(k)) + " from rank " + std::to_string(rank));
                        arrive(peer, iter, m, frontier);
                    }
                }
            }
        }
    }

    void arrive(std::uint32_t rank, std::uint32_t iter, std::uint32_t at, std::deque<std::pair<std::uint32_t, std::uint32_t>>& frontier) {
        reachedRanks.insert(rank);
        const std::uint32_t next = firstBadAfter(rank, iter, at + 1);
        if (next != kNoIndex) add(ChainRole::Propagated, next, "first anomaly on rank " + std::to_string(rank) + " after the hop");
        frontier.emplace_back(rank, at + 1);
    }

    // Stages (ranks when unknown) untouched in the first bad iteration: their first anomaly later.
    void laterIterations(const OverflowPoint& origin, std::size_t maxSteps) {
        std::set<std::uint32_t> iters;
        for (const auto& [key, r] : ctx.range) if (key.second > origin.iteration) iters.insert(key.second);
        std::set<int> reachedStages;
        for (std::uint32_t r : reachedRanks) reachedStages.insert(ctx.stages.stageOf(r));
        for (std::uint32_t iter : iters) {
            std::map<int, std::uint32_t> firstPerUnit;  // stage (or -1-rank) -> op
            for (const auto& [key, r] : ctx.range) {
                if (key.second != iter || reachedRanks.count(key.first)) continue;
                const int stage = ctx.stages.stageOf(key.first);
                if (stage >= 0 && reachedStages.count(stage)) continue;
                std::uint32_t op = kNoIndex;
                for (std::uint32_t i = r.first; i < r.second; ++i) if (ctx.ops[i].anomalous()) { op = i; break; }
                if (op == kNoIndex) continue;
                const int unit = stage >= 0 ? stage : -1 - int(key.first);
                OrderEvidence ev;
                auto it = firstPerUnit.find(unit);
                if (it == firstPerUnit.end() || firstOf(ctx, op, it->second, ev)) firstPerUnit[unit] = op;
            }
            for (const auto& [unit, op] : firstPerUnit) {
                if (steps.size() >= maxSteps) return;
                const bool recv = ctx.ops[op].comm == CommKind::Receive;
                add(recv ? ChainRole::Receive : ChainRole::Propagated, op,
                    "iteration " + std::to_string(iter) + ": first anomaly of " +
                        (unit >= 0 ? "stage " + std::to_string(unit) : "rank " + std::to_string(-1 - unit)) +
                        (recv ? "" : ", reached through the weights updated after iteration " + std::to_string(origin.iteration)));
                if (unit >= 0) reachedStages.insert(unit);
                for (const auto& [key, r] : ctx.range)
                    if (key.second == iter && ctx.stages.stageOf(key.first) == unit && unit >= 0) reachedRanks.insert(key.first);
                if (unit < 0) reachedRanks.insert(std::uint32_t(-1 - unit));
            }
        }
    }

    // Steps of tensor-parallel peers (same role, stage, iteration and op name) become one step.
    void mergePeers() {
        std::vector<ChainStep> merged;
        for (ChainStep& s : steps) {
            auto same = [&](const ChainStep& m) {
                return m.role == s.role && m.at.stage >= 0 && m.at.stage == s.at.stage && m.at.iteration == s.at.iteration &&
                       ctx.index.ops[m.at.op].name == ctx.index.ops[s.at.op].name && m.at.rank != s.at.rank;
            };
            auto it = std::find_if(merged.begin(), merged.end(), same);
            if (it == merged.end()) { merged.push_back(std::move(s)); continue; }
            if (std::find(it->at.peerRanks.begin(), it->at.peerRanks.end(), s.at.rank) == it->at.peerRanks.end())
                it->at.peerRanks.push_back(s.at.rank);
        }
        steps = std::move(merged);
    }
};

}  // namespace

std::vector<std::uint32_t> tensorParallelPeers(const AnalysisContext& ctx, std::uint32_t op) {
    std::vector<std::uint32_t> peers;
    const OpRecord& o = ctx.index.ops[op];
    const int stage = ctx.stages.stageOf(o.rank);
    for (const auto& [key, r] : ctx.range) {
        if (key.second != o.iteration || key.first == o.rank) continue;
        if (stage >= 0 && ctx.stages.stageOf(key.first) != stage) continue;
        for (std::uint32_t i = r.first; i < r.second; ++i) {
            const OpRecord& p = ctx.index.ops[i];
            if (p.name == o.name && p.type == o.type && ctx.ops[i].anomalous() && !ctx.ops[i].inputBad) {
                peers.push_back(key.first);
                break;
            }
        }
    }
    return peers;
}

std::vector<ChainStep> buildChain(const AnalysisContext& ctx, const OverflowPoint& origin, std::size_t maxSteps) {
    Builder b{ctx, {}, {}};
    ChainStep first;
    // A Receive only stands first when its Send is not in the dump: it inherited, never originated.
    const bool inherited = ctx.ops[origin.op].comm == CommKind::Receive || ctx.ops[origin.op].inputBad;
    first.role = ctx.ops[origin.op].comm == CommKind::Receive ? ChainRole::Receive
                 : inherited                                  ? ChainRole::Propagated
                                                              : ChainRole::Origin;
    first.at = origin;
    first.note = inherited ? "earliest anomaly; its source is not in the dump" : "inputs within range, output out of range";
    b.steps.push_back(first);
    std::deque<std::pair<std::uint32_t, std::uint32_t>> frontier{{origin.rank, origin.op}};
    b.reachedRanks.insert(origin.rank);
    for (std::uint32_t peer : origin.peerRanks) {
        b.reachedRanks.insert(peer);
        const auto [beg, end] = b.rangeOf(peer, origin.iteration);
        frontier.emplace_back(peer, beg);
        (void)end;
    }
    b.walkIteration(origin.iteration, frontier, maxSteps);
    b.laterIterations(origin, maxSteps);
    b.mergePeers();
    return b.steps;
}

}  // namespace dl

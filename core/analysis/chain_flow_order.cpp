// The chain's order: happens-before positions without timestamps, the pipeline's data flow where
// no message links ranks, merging tensor-parallel peers into one step, and the final listing
// (happens-before first, then time).
#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <tuple>

#include "core/analysis/chain_builder.h"
#include "core/analysis/chain_walk.h"

namespace dl {

namespace chain_detail {

// Two slots per stage: the ranks that carried the damage into the iteration first, then the
// ones it reached there (a TP peer after the lane whose weights went bad).
int Walk::flowOf(std::uint32_t rank, std::uint32_t it) const {
    if (!flow) return 0;
    auto p = flowPosOf.find(it);
    const int stage = ctx.stages.stageOf(rank);
    if (p == flowPosOf.end() || stage < 0 || std::size_t(stage) >= p->second.size()) return 0;
    auto s = seededOf.find(it);
    return 2 * p->second[std::size_t(stage)] + (s != seededOf.end() && s->second.count(rank) ? 0 : 1);
}

// Where the damage goes in iteration `it` when no message shows it: after the weights of stage S
// went bad, the forward is bad from S to the last stage and its backward brings bad gradients
// back down to stage 0 (S..last, S-1..0). In the origin's own iteration a backward origin's
// gradient only goes down (S..0; later stages cannot be reached through the pipeline, listed last).
void Walk::planFlow(std::uint32_t it, int fromStage, bool backwardOnly) {
    const int n = ctx.stages.stageCount;
    std::vector<int> seq;
    if (backwardOnly) {
        for (int s = fromStage; s >= 0; --s) seq.push_back(s);
        for (int s = fromStage + 1; s < n; ++s) seq.push_back(s);
    } else {
        for (int s = fromStage; s < n; ++s) seq.push_back(s);
        for (int s = fromStage - 1; s >= 0; --s) seq.push_back(s);
    }
    std::vector<int>& pos = flowPosOf[it];
    pos.assign(std::size_t(n), 0);
    for (std::size_t k = 0; k < seq.size(); ++k) pos[std::size_t(seq[k])] = int(k);
    seededOf[it] = reached;
}

// The listed step latest in time at or before `k` (the step a clock-only one follows). Placed
// by data flow: the latest step of an earlier place in the flow, so TP peers share it.
int Walk::latestBefore(const Key& k) const {
    int best = 0;
    for (std::size_t i = 1; i < keys.size(); ++i) {
        const bool before =
            flow ? std::tie(keys[i].iteration, keys[i].flow) < std::tie(k.iteration, k.flow) : !(k < keys[i]);
        if (before && keys[best] < keys[i]) best = int(i);
    }
    return best;
}

std::string Walk::clockOnlyNote(const Candidate& c, int parent) const {
    const std::string head = "first anomaly of rank " + std::to_string(c.dstRank) + "; ";
    const ChainStep& from = nodes[std::size_t(parent)];
    if (flow && !linked(c.dstRank, from.at.rank)) {
        const int to = ctx.stages.stageOf(c.dstRank);
        std::string n = head + "no message in the dump links rank " + std::to_string(c.dstRank) + " and rank " +
            std::to_string(from.at.rank) + "; placed by the pipeline's data flow (" +
            (from.at.stage == to ? "stage " + std::to_string(to) + ", after the rank that carried the damage into it"
                                 : "stage " + std::to_string(from.at.stage) + " -> stage " + std::to_string(to)) +
            ")";
        const std::int64_t a = ctx.rawTime(c.dstOp), b = ctx.rawTime(from.at.op);
        if (timed && a && b)
            n += "; raw clocks differ by " + std::to_string(a - b) + " us and are not comparable across machines";
        else if (!timed)
            n += "; no timestamps";
        return n;
    }
    return head + "no Send/Receive or collective link from a rank reached earlier is in the dump, placed by " +
        (!timed                  ? "execution order"
             : ctx.clocksAligned ? "its clock-aligned time"
                                 : "its raw timestamp (clocks not aligned)");
}

// Ranks reached by one hop, and tensor-parallel peers (same role, via, stage, iteration and
// op name, reached from equivalent steps), become one step with peerRanks.
void Walk::mergePeers() {
    std::vector<int> to(nodes.size(), -1);
    std::vector<ChainStep> merged;
    std::vector<Key> mkeys;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        ChainStep& s = nodes[i];
        const int parent = s.causedBy < 0 ? -1 : to[std::size_t(s.causedBy)];
        int into = -1;
        for (std::size_t m = 0; m < merged.size() && i > 0; ++m) {
            const ChainStep& t = merged[m];
            if (m == 0 || t.role != s.role || t.via != s.via || t.at.iteration != s.at.iteration ||
                t.at.rank == s.at.rank || ctx.index.ops[t.at.op].type != ctx.index.ops[s.at.op].type)
                continue;
            // Reached by one hop (members of one collective, and what follows on them) ...
            if (t.causedBy == parent && parent >= 0) {
                into = int(m);
                break;
            }
            // ... or one collective call reached its members from different bad inputs (a
            // global-norm AllReduce fed by several ranks): still one step.
            if (s.via == ChainVia::Collective && ctx.match.group[s.at.op] >= 0 &&
                ctx.match.group[s.at.op] == ctx.match.group[t.at.op]) {
                into = int(m);
                break;
            }
            // ... or tensor-parallel peers: the same op of one stage, from equivalent steps.
            if (t.at.stage < 0 || t.at.stage != s.at.stage ||
                ctx.index.ops[t.at.op].name != ctx.index.ops[s.at.op].name)
                continue;
            const bool sameParent = t.causedBy >= 0 && parent >= 0 &&
                merged[std::size_t(t.causedBy)].at.stage == merged[std::size_t(parent)].at.stage &&
                merged[std::size_t(t.causedBy)].at.iteration == merged[std::size_t(parent)].at.iteration;
            if (sameParent) {
                into = int(m);
                break;
            }
        }
        if (into < 0) {
            s.causedBy = parent;
            to[i] = int(merged.size());
            merged.push_back(std::move(s));
            mkeys.push_back(keys[i]);
            continue;
        }
        to[i] = into;
        ChainStep& t = merged[std::size_t(into)];
        if (s.at.rank != t.at.rank &&
            std::find(t.at.peerRanks.begin(), t.at.peerRanks.end(), s.at.rank) == t.at.peerRanks.end())
            t.at.peerRanks.push_back(s.at.rank);
        for (std::uint32_t p : s.at.peerRanks)
            if (p != t.at.rank && std::find(t.at.peerRanks.begin(), t.at.peerRanks.end(), p) == t.at.peerRanks.end())
                t.at.peerRanks.push_back(p);
    }
    for (ChainStep& s : merged) std::sort(s.at.peerRanks.begin(), s.at.peerRanks.end());
    nodes = std::move(merged);
    keys = std::move(mkeys);
}

// Happens-before first (a step after the step it came from), then time: Kahn's algorithm
// taking the earliest ready step.
std::vector<ChainStep> Walk::causalOrder(std::size_t maxSteps) {
    std::vector<std::vector<int>> children(nodes.size());
    using Ready = std::pair<Key, int>;
    std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].causedBy >= 0)
            children[std::size_t(nodes[i].causedBy)].push_back(int(i));
        else
            ready.push({keys[i], int(i)});
    }
    std::vector<int> newIndex(nodes.size(), -1);
    std::vector<ChainStep> out;
    while (!ready.empty() && out.size() < maxSteps) {
        const int i = ready.top().second;
        ready.pop();
        newIndex[std::size_t(i)] = int(out.size());
        out.push_back(nodes[std::size_t(i)]);
        for (int c : children[std::size_t(i)]) ready.push({keys[std::size_t(c)], c});
    }
    for (ChainStep& s : out) s.causedBy = s.causedBy < 0 ? -1 : newIndex[std::size_t(s.causedBy)];
    return out;
}

// Happens-before positions without timestamps: program order on each rank, a Receive after its
// Send, a collective after every member reached it (a Lamport clock per iteration).
std::vector<std::uint64_t> happensBeforeOrder(const AnalysisContext& ctx) {
    const std::size_t n = ctx.index.ops.size();
    std::vector<std::uint64_t> L(n, 0);
    std::vector<char> done(n, 0);
    std::map<std::uint32_t, std::vector<std::pair<std::uint32_t, std::uint32_t>>> byIter;  // iter -> ranges
    for (const auto& [key, r] : ctx.range) byIter[key.second].push_back(r);
    for (auto& entry : byIter) {
        auto& ranges = entry.second;  // a plain reference: clang 14 cannot capture a structured binding
        std::vector<std::uint32_t> cur(ranges.size());
        std::map<std::uint32_t, std::size_t> slotOfRank;
        for (std::size_t k = 0; k < ranges.size(); ++k) {
            cur[k] = ranges[k].first;
            slotOfRank[ctx.index.ops[ranges[k].first].rank] = k;
        }
        auto pre = [&](std::size_t k, std::uint32_t i) { return (i == ranges[k].first ? 0 : L[i - 1]) + 1; };
        for (bool left = true; left;) {
            bool progress = false;
            left = false;
            for (std::size_t k = 0; k < ranges.size(); ++k) {
                while (cur[k] < ranges[k].second) {
                    const std::uint32_t i = cur[k];
                    std::uint64_t v = pre(k, i);
                    bool blocked = false;
                    const std::int32_t p = ctx.match.partner[i];
                    if (ctx.ops[i].comm == CommKind::Receive && p >= 0) {
                        if (!done[std::size_t(p)])
                            blocked = true;
                        else
                            v = std::max(v, L[std::size_t(p)] + 1);
                    } else if (isCollective(ctx.ops[i].comm) && ctx.match.group[i] >= 0) {
                        for (std::uint32_t m : ctx.match.groups[std::size_t(ctx.match.group[i])].ops) {
                            auto s = slotOfRank.find(ctx.index.ops[m].rank);
                            if (s == slotOfRank.end() || m < ranges[s->second].first || m >= ranges[s->second].second)
                                continue;
                            if (cur[s->second] < m) {
                                blocked = true;
                                break;
                            }
                            v = std::max(v, pre(s->second, m));
                        }
                    }
                    if (blocked) break;
                    L[i] = v;
                    done[i] = 1;
                    ++cur[k];
                    progress = true;
                }
                left |= cur[k] < ranges[k].second;
            }
            if (left && !progress) {
                // Pairing that no real schedule allows (a cycle): release the lowest blocked op.
                std::size_t k = 0;
                for (std::size_t q = 1; q < ranges.size(); ++q)
                    if (cur[q] < ranges[q].second && (cur[k] >= ranges[k].second || cur[q] < cur[k])) k = q;
                L[cur[k]] = pre(k, cur[k]);
                done[cur[k]] = 1;
                ++cur[k];
            }
        }
    }
    return L;
}

// Ranks joined by a matched Send/Receive pair or a collective group: rank -> lowest rank of its component.
const std::map<std::uint32_t, std::uint32_t>& linkComponents(const AnalysisContext& ctx) {
    if (ctx.linkRoots) return *ctx.linkRoots;
    std::map<std::uint32_t, std::uint32_t> up;
    for (const auto& [key, r] : ctx.range) up.emplace(key.first, key.first);
    std::function<std::uint32_t(std::uint32_t)> root = [&](std::uint32_t r) {
        auto it = up.try_emplace(r, r).first;
        return it->second == r ? r : (it->second = root(it->second));
    };
    std::uint32_t lastA = ~0u, lastB = ~0u;  // joined already: a join repeated is a no-op (pairs come in runs)
    auto join = [&](std::uint32_t a, std::uint32_t b) {
        if (a == lastA && b == lastB) return;
        lastA = a;
        lastB = b;
        a = root(a);
        b = root(b);
        if (a != b) up[std::max(a, b)] = std::min(a, b);
    };
    for (const CommPair& p : ctx.match.pairs) join(ctx.index.ops[p.send].rank, ctx.index.ops[p.recv].rank);
    for (const CollectiveGroup& g : ctx.match.groups)
        for (std::uint32_t m : g.ops) join(ctx.index.ops[g.ops.front()].rank, ctx.index.ops[m].rank);
    std::map<std::uint32_t, std::uint32_t> out;
    for (const auto& [r, u] : up) out[r] = root(r);
    return *(ctx.linkRoots = std::move(out));
}

}  // namespace chain_detail

using chain_detail::linkComponents;

bool chainOrderedByFlow(const AnalysisContext& ctx) {
    if (ctx.stages.stageCount < 2) return false;
    std::set<std::uint32_t> components;
    for (const auto& [rank, root] : linkComponents(ctx)) {
        if (ctx.stages.stageOf(rank) < 0) return false;  // a rank the data flow cannot place
        components.insert(root);
    }
    return components.size() > 1;
}

bool chainOrderedByClock(const AnalysisContext& ctx) {
    for (std::uint32_t i = 0; i < ctx.index.ops.size(); ++i)
        if (!ctx.rawTime(i)) return false;
    return !ctx.index.ops.empty();
}

}  // namespace dl

// The hop search: from every rank the chain reached, the Send/Receive and collective hops that
// carry bad data on, taken earliest arrival first within an iteration; and, for a Send that is
// listed, the latest bad data that arrived on its rank before it.
#include <algorithm>

#include "core/analysis/chain_walk.h"

namespace dl::chain_detail {

// Queues every hop out of `rank` from op `from` on to ranks not reached yet.
void Walk::scanFrom(std::uint32_t rank, std::uint32_t from) {
    const auto [b, e] = rangeOf(rank, iter);
    for (std::uint32_t i = std::max(b, from); i < e; ++i) {
        const CommKind k = ctx.ops[i].comm;
        if (k == CommKind::Send && ctx.carriesBad(i)) {
            const std::int32_t p = ctx.match.partner[i];
            if (p < 0) {
                queue.push({keyOf(i, false), CandKind::Dangling, rank, i, rank, i});
                continue;
            }
            const std::uint32_t peer = ctx.index.ops[std::size_t(p)].rank;
            if (!reached.count(peer))
                queue.push(
                    {keyOf(std::uint32_t(p), true), CandKind::SendReceive, rank, i, peer, std::uint32_t(p), tagFor(i)});
        } else if (isCollective(k) && collectiveCarries(i) && ctx.match.group[i] >= 0) {
            for (std::uint32_t m : ctx.match.groups[std::size_t(ctx.match.group[i])].ops) {
                const std::uint32_t peer = ctx.index.ops[m].rank;
                if (peer != rank && !reached.count(peer) && ctx.ops[m].outputBad)
                    queue.push({keyOf(m, true, 1), CandKind::Collective, rank, i, peer, m});
            }
        }
    }
}

// The rank's bad data arrived at `node` (op `at`): its first bad compute op after it, and its hops.
void Walk::arrive(std::uint32_t rank, int node, std::uint32_t at) {
    reached.insert(rank);
    const std::uint32_t next = firstBadCompute(rank, iter, at + 1);
    if (next != kNoIndex && !full())
        add(ChainRole::Propagated, next, node, ChainVia::SameRank,
            "first anomaly on rank " + std::to_string(rank) + " after the hop", false);
    scanFrom(rank, at + 1);
}

// The latest bad data to arrive on `rank` in [from, op) from another rank the chain reached: a
// Receive of a bad Send, or a collective that came out bad though this rank put nothing bad
// in. A rank reached early (the forward) sends bad gradients later because they came back
// from downstream, not because of its first anomaly. Returns (op, source op) or kNoIndex.
std::pair<std::uint32_t, std::uint32_t> Walk::arrivalBefore(std::uint32_t rank, std::uint32_t from,
                                                            std::uint32_t op) const {
    const auto [b, e] = rangeOf(rank, iter);
    for (std::uint32_t i = std::min(op, e); i-- > std::max(b, from);) {
        const OpFindings& f = ctx.ops[i];
        if (!f.outputBad || nodeOfOp.count(i)) continue;
        if (f.comm == CommKind::Receive && ctx.match.partner[i] >= 0) {
            const auto p = std::uint32_t(ctx.match.partner[i]);
            if (reached.count(ctx.index.ops[p].rank) && ctx.index.ops[p].iteration == iter && ctx.carriesBad(p))
                return {i, p};
        } else if (isCollective(f.comm) && !f.inputBad && ctx.match.group[i] >= 0) {
            for (std::uint32_t m : ctx.match.groups[std::size_t(ctx.match.group[i])].ops)
                if (ctx.index.ops[m].rank != rank && reached.count(ctx.index.ops[m].rank) && collectiveCarries(m))
                    return {i, m};
        }
    }
    return {kNoIndex, kNoIndex};
}

// The latest listed step on `rank` at or before `op` in this iteration (its seed when none
// yet), or bad data that arrived there after it (listed with its own hop).
int Walk::latestOn(std::uint32_t rank, std::uint32_t op) {
    int best = -1;
    std::uint32_t bestOp = 0;
    for (const auto& [o, n] : onRank[rank])
        if (o <= op && (best < 0 || o >= bestOp)) {
            best = n;
            bestOp = o;
        }
    if (depth < 64 && !full()) {
        const auto [arrival, src] = arrivalBefore(rank, best >= 0 ? bestOp + 1 : 0, op);
        if (arrival != kNoIndex) {
            ++depth;
            const int n = listArrival(rank, arrival, src);
            --depth;
            if (n >= 0) return n;
        }
    }
    if (best >= 0) return best;
    const int seed = materializeSeed(rank);
    if (seed >= 0) return seed;
    return lastNodeOn.count(rank) ? lastNodeOn[rank] : 0;
}

// Lists bad data arriving on `rank` at op `at` from op `src` of a rank reached earlier.
int Walk::listArrival(std::uint32_t rank, std::uint32_t at, std::uint32_t src) {
    const std::uint32_t srcRank = ctx.index.ops[src].rank;
    if (ctx.ops[at].comm == CommKind::Receive) {
        const int send = sourceNode(srcRank, src, "to rank " + std::to_string(rank));
        if (full()) return -1;
        const int tag = tagFor(src);
        const int node = add(ChainRole::Receive, at, send, ChainVia::SendReceive,
                             "bad data from rank " + std::to_string(srcRank) + ", reached earlier (" + name(src) +
                                 (tag >= 0 ? ", sr_tag " + std::to_string(tag) : "") + ")",
                             true);
        nodes[std::size_t(node)].linkOp = src;
        nodes[std::size_t(node)].tag = tag;
        return node;
    }
    const std::string kind = commKindName(ctx.ops[src].comm);
    const int from = sourceNode(srcRank, src, kind + " carries the anomaly to its group");
    if (full()) return -1;
    const int node = add(ChainRole::Receive, at, from, ChainVia::Collective,
                         kind + " from rank " + std::to_string(srcRank) + " (" + name(src) + ")", true);
    nodes[std::size_t(node)].linkOp = src;
    nodes[std::size_t(node)].groupRanks = groupRanksOf(src);
    return node;
}

std::vector<std::uint32_t> Walk::groupRanksOf(std::uint32_t op) const {
    std::vector<std::uint32_t> group;
    for (std::uint32_t m : ctx.match.groups[std::size_t(ctx.match.group[op])].ops)
        group.push_back(ctx.index.ops[m].rank);
    std::sort(group.begin(), group.end());
    group.erase(std::unique(group.begin(), group.end()), group.end());
    return group;
}

int Walk::sourceNode(std::uint32_t srcRank, std::uint32_t srcOp, std::string note) {
    auto f = nodeOfOp.find(srcOp);
    if (f != nodeOfOp.end()) return f->second;
    const int parent = latestOn(srcRank, srcOp);
    return add(ChainRole::Send, srcOp, parent, ChainVia::SameRank, std::move(note), false);
}

void Walk::pop(const Candidate& c) {
    if (c.kind != CandKind::Dangling && reached.count(c.dstRank)) return;
    int node = -1;
    switch (c.kind) {
        case CandKind::SendReceive: {
            const int send = sourceNode(c.srcRank, c.srcOp, "to rank " + std::to_string(c.dstRank));
            if (full()) return;
            const int tag = c.tag;
            node = add(ChainRole::Receive, c.dstOp, send, ChainVia::SendReceive,
                       "from rank " + std::to_string(c.srcRank) + " (" + name(c.srcOp) +
                           (tag >= 0 ? ", sr_tag " + std::to_string(tag) : "") + ")",
                       true);
            nodes[std::size_t(node)].linkOp = c.srcOp;
            nodes[std::size_t(node)].tag = tag;
            break;
        }
        case CandKind::Collective: {
            const std::string kind = commKindName(ctx.ops[c.srcOp].comm);
            const int src = sourceNode(c.srcRank, c.srcOp, kind + " carries the anomaly to its group");
            if (full()) return;
            std::vector<std::uint32_t> group = groupRanksOf(c.srcOp);
            node = add(ChainRole::Receive, c.dstOp, src, ChainVia::Collective,
                       kind + " from rank " + std::to_string(c.srcRank) + " (" + name(c.srcOp) + ", group of " +
                           std::to_string(group.size()) + " ranks)",
                       true);
            nodes[std::size_t(node)].linkOp = c.srcOp;
            nodes[std::size_t(node)].groupRanks = std::move(group);
            break;
        }
        case CandKind::Dangling:
            if (nodeOfOp.count(c.srcOp) || pendingSeed.count(c.srcRank) || full()) return;
            sourceNode(c.srcRank, c.srcOp, "bad data sent; its Receive is not in the dump");
            return;
        case CandKind::ClockOnly: {
            const bool recv = ctx.ops[c.dstOp].comm == CommKind::Receive;
            const int parent = latestBefore(c.key);
            node = add(recv ? ChainRole::Receive : ChainRole::Propagated, c.dstOp, parent, ChainVia::ClockOnly,
                       clockOnlyNote(c, parent), true);
            break;
        }
    }
    arrive(c.dstRank, node, c.dstOp);
}

// Spreads the anomaly through iteration `it` from the ranks already reached.
void Walk::spread(std::uint32_t it, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& scans) {
    for (const auto& [rank, from] : scans) scanFrom(rank, from);
    for (const auto& [key, r] : ctx.range) {
        if (key.second != it || reached.count(key.first)) continue;
        const std::uint32_t bad = firstBad(key.first, it);
        if (bad != kNoIndex) queue.push({keyOf(bad, true, 3), CandKind::ClockOnly, key.first, bad, key.first, bad});
    }
    while (!queue.empty() && !full()) {
        const Candidate c = queue.top();
        queue.pop();
        pop(c);
    }
    while (!queue.empty()) queue.pop();
}

}  // namespace dl::chain_detail

#include "core/analysis/chain_builder.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <string_view>
#include <tuple>

#include "core/analysis/causal_order.h"

namespace dl {

namespace {

// Optimizer kernels that write a gradient into the weights (MindSpore, CANN and msprobe names).
bool isOptimizerType(std::string_view t) {
    static constexpr std::string_view kNames[] = {"ApplyMomentum", "ApplyAdam", "Adam", "AdamWeightDecay", "AdamW",
                                                  "FusedAdam", "FusedAdamWeightDecay", "ApplyAdagrad", "ApplyRMSProp",
                                                  "ApplyFtrl", "SGD", "Lamb", "LambApplyOptimizerAssign", "ApplyAdaMax",
                                                  "ApplyProximalAdagrad", "ApplyCenteredRMSProp", "FusedSgd", "ApplyLars"};
    for (std::string_view n : kNames)
        if (t == n || (t.size() > n.size() && t.substr(0, n.size()) == n && t[n.size()] == 'V')) return true;  // ...V2
    return t.find("Optimizer.step") != std::string_view::npos;
}

// Order of chain steps: iteration, then (only when no message links the ranks) the place of the
// rank's stage in the pipeline's data flow, then time on the reference clock (or happens-before
// position without timestamps); at equal times a hop wins over a clock-only placement.
struct Key {
    std::uint32_t iteration = 0;
    int flow = 0;
    std::int64_t time = 0;
    int kind = 0;
    std::uint32_t rank = 0, op = 0;
    bool operator<(const Key& o) const {
        return std::tie(iteration, flow, time, kind, rank, op) < std::tie(o.iteration, o.flow, o.time, o.kind, o.rank, o.op);
    }
    bool operator>(const Key& o) const { return o < *this; }
};

enum class CandKind { SendReceive = 0, Collective = 1, Dangling = 2, ClockOnly = 3 };

struct Candidate {
    Key key;
    CandKind kind = CandKind::ClockOnly;
    std::uint32_t srcRank = 0, srcOp = kNoIndex, dstRank = 0, dstOp = kNoIndex;
    int tag = -1;  // sr_tag of a Send/Receive hop
    bool operator>(const Candidate& o) const { return key > o.key; }
};

struct Builder {
    const AnalysisContext& ctx;
    std::size_t maxNodes;
    bool timed = true;                       // every op has a timestamp: order by the aligned clock
    std::vector<std::uint64_t> order;        // happens-before position per op (only when !timed)
    // Data-flow placement (no message links some ranks): per iteration, the place of each stage in
    // the order the damage travels, and the ranks that held it when the iteration began.
    bool flow = false;
    std::map<std::uint32_t, std::vector<int>> flowPosOf;          // iteration -> [stage] -> place
    std::map<std::uint32_t, std::set<std::uint32_t>> seededOf;    // iteration -> ranks bad at its start
    std::map<std::uint32_t, std::uint32_t> linkRoot, clockRoot;   // rank -> its message / clock component
    std::uint32_t referenceRank = 0;
    std::vector<ChainStep> nodes;            // in creation order; causedBy indexes nodes
    std::vector<Key> keys;
    std::set<std::uint32_t> reached;         // ranks the chain has reached
    std::map<std::uint32_t, int> lastNodeOn;  // rank -> its latest node (any iteration)
    std::uint32_t originRank = 0;
    int depth = 0;                           // nesting of listArrival (a bound against odd pairings)
    std::map<std::uint32_t, int> tagOf;      // Send op -> its sr_tag, where written
    int tagFor(std::uint32_t send) const {
        auto t = tagOf.find(send);
        return t == tagOf.end() ? -1 : t->second;
    }

    // Per iteration being spread.
    std::uint32_t iter = 0;
    std::map<std::uint32_t, std::vector<std::pair<std::uint32_t, int>>> onRank;  // rank -> (op, node)
    std::map<std::uint32_t, std::uint32_t> pendingSeed;  // rank -> its first anomaly of iter, not yet listed
    std::map<std::uint32_t, int> nodeOfOp;
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;

    std::pair<std::uint32_t, std::uint32_t> rangeOf(std::uint32_t rank, std::uint32_t it) const {
        auto f = ctx.range.find({rank, it});
        return f == ctx.range.end() ? std::pair<std::uint32_t, std::uint32_t>{0, 0} : f->second;
    }
    std::string name(std::uint32_t op) const { return ctx.index.strings.str(ctx.index.ops[op].name); }
    std::string type(std::uint32_t op) const { return ctx.index.strings.str(ctx.index.ops[op].type); }

    // Time the op's bad data is there: a Receive's or collective's output at its end.
    std::int64_t alignedTime(std::uint32_t op, bool arriving) const {
        const OpRecord& o = ctx.index.ops[op];
        std::int64_t t = ctx.rawTime(op);
        if (arriving && o.endUs) t = std::max(t, o.endUs);
        auto off = ctx.clockOffsetUs.find(o.rank);
        return t && off != ctx.clockOffsetUs.end() ? t - off->second : t;
    }
    // Two slots per stage: the ranks that carried the damage into the iteration first, then the
    // ones it reached there (a TP peer after the lane whose weights went bad).
    int flowOf(std::uint32_t rank, std::uint32_t it) const {
        if (!flow) return 0;
        auto p = flowPosOf.find(it);
        const int stage = ctx.stages.stageOf(rank);
        if (p == flowPosOf.end() || stage < 0 || std::size_t(stage) >= p->second.size()) return 0;
        auto s = seededOf.find(it);
        return 2 * p->second[std::size_t(stage)] + (s != seededOf.end() && s->second.count(rank) ? 0 : 1);
    }
    Key keyOf(std::uint32_t op, bool arriving, int kind = 0) const {
        const OpRecord& o = ctx.index.ops[op];
        return {o.iteration, flowOf(o.rank, o.iteration), timed ? alignedTime(op, arriving) : std::int64_t(order[op]), kind, o.rank, op};
    }
    // Where the damage goes in iteration `it` when no message shows it: after the weights of stage S
    // went bad, the forward is bad from S to the last stage and its backward brings bad gradients
    // back down to stage 0 (S..last, S-1..0). In the origin's own iteration a backward origin's
    // gradient only goes down (S..0; later stages cannot be reached through the pipeline, listed last).
    void planFlow(std::uint32_t it, int fromStage, bool backwardOnly) {
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
    bool clockAlignedRank(std::uint32_t rank) const {
        auto a = clockRoot.find(rank), b = clockRoot.find(referenceRank);
        return a != clockRoot.end() && b != clockRoot.end() && a->second == b->second;
    }
    bool linked(std::uint32_t a, std::uint32_t b) const {
        auto x = linkRoot.find(a), y = linkRoot.find(b);
        return a == b || (x != linkRoot.end() && y != linkRoot.end() && x->second == y->second);
    }

    int add(ChainRole role, std::uint32_t op, int parent, ChainVia via, std::string note, bool arriving) {
        ChainStep s;
        s.role = role;
        s.at = ctx.point(op);
        s.note = std::move(note);
        s.causedBy = parent;
        s.via = via;
        s.alignedUs = timed ? alignedTime(op, arriving) : 0;
        s.clockAligned = timed && clockAlignedRank(ctx.index.ops[op].rank);
        s.orderKey = timed ? 0 : order[op];
        nodes.push_back(std::move(s));
        keys.push_back(keyOf(op, arriving));
        const int id = int(nodes.size()) - 1;
        lastNodeOn[ctx.index.ops[op].rank] = id;
        if (ctx.index.ops[op].iteration == iter) onRank[ctx.index.ops[op].rank].push_back({op, id});
        nodeOfOp[op] = id;
        return id;
    }
    bool full() const { return nodes.size() >= maxNodes; }

    // First anomalous compute op on `rank` at or after `from` in iteration `it` (comm ops are hops).
    std::uint32_t firstBadCompute(std::uint32_t rank, std::uint32_t it, std::uint32_t from) const {
        const auto [b, e] = rangeOf(rank, it);
        for (std::uint32_t i = std::max(b, from); i < e; ++i)
            if (ctx.ops[i].anomalous() && ctx.ops[i].comm == CommKind::None) return i;
        return kNoIndex;
    }
    std::uint32_t firstBad(std::uint32_t rank, std::uint32_t it) const {
        const auto [b, e] = rangeOf(rank, it);
        for (std::uint32_t i = b; i < e; ++i)
            if (ctx.ops[i].anomalous() || ctx.ops[i].inputBad) return i;
        return kNoIndex;
    }
    // A collective passes on bad data its own rank put in (or, inputs not dumped, came out bad).
    bool collectiveCarries(std::uint32_t i) const {
        const OpFindings& s = ctx.ops[i];
        return s.inputBad || (s.outputBad && !s.inputsDumped);
    }

    // Queues every hop out of `rank` from op `from` on to ranks not reached yet.
    void scanFrom(std::uint32_t rank, std::uint32_t from) {
        const auto [b, e] = rangeOf(rank, iter);
        for (std::uint32_t i = std::max(b, from); i < e; ++i) {
            const CommKind k = ctx.ops[i].comm;
            if (k == CommKind::Send && ctx.carriesBad(i)) {
                const std::int32_t p = ctx.match.partner[i];
                if (p < 0) { queue.push({keyOf(i, false), CandKind::Dangling, rank, i, rank, i}); continue; }
                const std::uint32_t peer = ctx.index.ops[std::size_t(p)].rank;
                if (!reached.count(peer))
                    queue.push({keyOf(std::uint32_t(p), true), CandKind::SendReceive, rank, i, peer, std::uint32_t(p), tagFor(i)});
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
    void arrive(std::uint32_t rank, int node, std::uint32_t at) {
        reached.insert(rank);
        const std::uint32_t next = firstBadCompute(rank, iter, at + 1);
        if (next != kNoIndex && !full())
            add(ChainRole::Propagated, next, node, ChainVia::SameRank, "first anomaly on rank " + std::to_string(rank) + " after the hop", false);
        scanFrom(rank, at + 1);
    }

    // A rank reached in an earlier iteration starts this one with bad weights: the optimizer that
    // wrote them, then its first anomaly here. Listed only when the spread goes through it.
    int materializeSeed(std::uint32_t rank) {
        auto it = pendingSeed.find(rank);
        if (it == pendingSeed.end()) return -1;
        const std::uint32_t seedOp = it->second;
        pendingSeed.erase(it);
        int parent = lastNodeOn.count(rank) ? lastNodeOn[rank] : 0;
        const std::uint32_t prevIter = nodes[std::size_t(parent)].at.iteration;
        const std::uint32_t after = nodes[std::size_t(parent)].at.op;
        std::uint32_t optimizer = kNoIndex;
        const auto [b, e] = rangeOf(rank, prevIter);
        for (std::uint32_t i = std::max(b, after); i < e && optimizer == kNoIndex; ++i)
            if (isOptimizerType(ctx.index.strings.view(ctx.index.ops[i].type)) && (ctx.ops[i].inputBad || ctx.ops[i].outputBad))
                optimizer = i;
        std::string how;
        if (optimizer != kNoIndex) {
            parent = add(ChainRole::Propagated, optimizer, parent, ChainVia::SameRank,
                         type(optimizer) + " applies the bad gradient to the weights after iteration " + std::to_string(prevIter), false);
            how = "the weights updated by " + name(optimizer) + " after iteration " + std::to_string(prevIter);
        } else {
            how = "the weights updated after iteration " + std::to_string(prevIter) + "; the optimizer is not in the dump";
        }
        const int seed = add(ChainRole::Propagated, seedOp, parent, ChainVia::WeightUpdate,
                             "iteration " + std::to_string(iter) + ": first anomaly of rank " + std::to_string(rank) +
                                 ", reached through " + how, false);
        nodes[std::size_t(seed)].linkOp = optimizer;
        return seed;
    }

    // The latest bad data to arrive on `rank` in [from, op) from another rank the chain reached: a
    // Receive of a bad Send, or a collective that came out bad though this rank put nothing bad
    // in. A rank reached early (the forward) sends bad gradients later because they came back
    // from downstream, not because of its first anomaly. Returns (op, source op) or kNoIndex.
    std::pair<std::uint32_t, std::uint32_t> arrivalBefore(std::uint32_t rank, std::uint32_t from, std::uint32_t op) const {
        const auto [b, e] = rangeOf(rank, iter);
        for (std::uint32_t i = std::min(op, e); i-- > std::max(b, from);) {
            const OpFindings& f = ctx.ops[i];
            if (!f.outputBad || nodeOfOp.count(i)) continue;
            if (f.comm == CommKind::Receive && ctx.match.partner[i] >= 0) {
                const auto p = std::uint32_t(ctx.match.partner[i]);
                if (reached.count(ctx.index.ops[p].rank) && ctx.index.ops[p].iteration == iter && ctx.carriesBad(p)) return {i, p};
            } else if (isCollective(f.comm) && !f.inputBad && ctx.match.group[i] >= 0) {
                for (std::uint32_t m : ctx.match.groups[std::size_t(ctx.match.group[i])].ops)
                    if (ctx.index.ops[m].rank != rank && reached.count(ctx.index.ops[m].rank) && collectiveCarries(m)) return {i, m};
            }
        }
        return {kNoIndex, kNoIndex};
    }

    // The latest listed step on `rank` at or before `op` in this iteration (its seed when none
    // yet), or bad data that arrived there after it (listed with its own hop).
    int latestOn(std::uint32_t rank, std::uint32_t op) {
        int best = -1;
        std::uint32_t bestOp = 0;
        for (const auto& [o, n] : onRank[rank])
            if (o <= op && (best < 0 || o >= bestOp)) { best = n; bestOp = o; }
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
    int listArrival(std::uint32_t rank, std::uint32_t at, std::uint32_t src) {
        const std::uint32_t srcRank = ctx.index.ops[src].rank;
        if (ctx.ops[at].comm == CommKind::Receive) {
            const int send = sourceNode(srcRank, src, "to rank " + std::to_string(rank));
            if (full()) return -1;
            const int tag = tagFor(src);
            const int node = add(ChainRole::Receive, at, send, ChainVia::SendReceive,
                                 "bad data from rank " + std::to_string(srcRank) + ", reached earlier (" + name(src) +
                                     (tag >= 0 ? ", sr_tag " + std::to_string(tag) : "") + ")", true);
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

    std::vector<std::uint32_t> groupRanksOf(std::uint32_t op) const {
        std::vector<std::uint32_t> group;
        for (std::uint32_t m : ctx.match.groups[std::size_t(ctx.match.group[op])].ops) group.push_back(ctx.index.ops[m].rank);
        std::sort(group.begin(), group.end());
        group.erase(std::unique(group.begin(), group.end()), group.end());
        return group;
    }

    int sourceNode(std::uint32_t srcRank, std::uint32_t srcOp, std::string note) {
        auto f = nodeOfOp.find(srcOp);
        if (f != nodeOfOp.end()) return f->second;
        const int parent = latestOn(srcRank, srcOp);
        return add(ChainRole::Send, srcOp, parent, ChainVia::SameRank, std::move(note), false);
    }

    void pop(const Candidate& c) {
        if (c.kind != CandKind::Dangling && reached.count(c.dstRank)) return;
        int node = -1;
        switch (c.kind) {
        case CandKind::SendReceive: {
            const int send = sourceNode(c.srcRank, c.srcOp, "to rank " + std::to_string(c.dstRank));
            if (full()) return;
            const int tag = c.tag;
            node = add(ChainRole::Receive, c.dstOp, send, ChainVia::SendReceive,
                       "from rank " + std::to_string(c.srcRank) + " (" + name(c.srcOp) + (tag >= 0 ? ", sr_tag " + std::to_string(tag) : "") + ")", true);
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
                       kind + " from rank " + std::to_string(c.srcRank) + " (" + name(c.srcOp) + ", group of " + std::to_string(group.size()) + " ranks)", true);
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

    // The listed step latest in time at or before `k` (the step a clock-only one follows). Placed
    // by data flow: the latest step of an earlier place in the flow, so TP peers share it.
    int latestBefore(const Key& k) const {
        int best = 0;
        for (std::size_t i = 1; i < keys.size(); ++i) {
            const bool before = flow ? std::tie(keys[i].iteration, keys[i].flow) < std::tie(k.iteration, k.flow) : !(k < keys[i]);
            if (before && keys[best] < keys[i]) best = int(i);
        }
        return best;
    }

    std::string clockOnlyNote(const Candidate& c, int parent) const {
        const std::string head = "first anomaly of rank " + std::to_string(c.dstRank) + "; ";
        const ChainStep& from = nodes[std::size_t(parent)];
        if (flow && !linked(c.dstRank, from.at.rank)) {
            const int to = ctx.stages.stageOf(c.dstRank);
            std::string n = head + "no message in the dump links rank " + std::to_string(c.dstRank) + " and rank " +
                            std::to_string(from.at.rank) + "; placed by the pipeline's data flow (" +
                            (from.at.stage == to ? "stage " + std::to_string(to) + ", after the rank that carried the damage into it"
                                                 : "stage " + std::to_string(from.at.stage) + " -> stage " + std::to_string(to)) + ")";
            const std::int64_t a = ctx.rawTime(c.dstOp), b = ctx.rawTime(from.at.op);
            if (timed && a && b)
                n += "; raw clocks differ by " + std::to_string(a - b) + " us and are not comparable across machines";
            else if (!timed)
                n += "; no timestamps";
            return n;
        }
        return head + "no Send/Receive or collective link from a rank reached earlier is in the dump, placed by " +
               (!timed ? "execution order" : ctx.clocksAligned ? "its clock-aligned time" : "its raw timestamp (clocks not aligned)");
    }


    // Spreads the anomaly through iteration `it` from the ranks already reached.
    void spread(std::uint32_t it, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& scans) {
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

    void startIteration(std::uint32_t it) {
        if (flow && !flowPosOf.count(it)) {
            int from = ctx.stages.stageCount;
            for (std::uint32_t r : reached) from = std::min(from, std::max(0, ctx.stages.stageOf(r)));
            planFlow(it, std::min(from, ctx.stages.stageCount - 1), false);
        }
        iter = it;
        onRank.clear();
        pendingSeed.clear();
    }

    // Ranks reached by one hop, and tensor-parallel peers (same role, via, stage, iteration and
    // op name, reached from equivalent steps), become one step with peerRanks.
    void mergePeers() {
        std::vector<int> to(nodes.size(), -1);
        std::vector<ChainStep> merged;
        std::vector<Key> mkeys;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            ChainStep& s = nodes[i];
            const int parent = s.causedBy < 0 ? -1 : to[std::size_t(s.causedBy)];
            int into = -1;
            for (std::size_t m = 0; m < merged.size() && i > 0; ++m) {
                const ChainStep& t = merged[m];
                if (m == 0 || t.role != s.role || t.via != s.via || t.at.iteration != s.at.iteration || t.at.rank == s.at.rank ||
                    ctx.index.ops[t.at.op].type != ctx.index.ops[s.at.op].type)
                    continue;
                // Reached by one hop (members of one collective, and what follows on them) ...
                if (t.causedBy == parent && parent >= 0) { into = int(m); break; }
                // ... or tensor-parallel peers: the same op of one stage, from equivalent steps.
                if (t.at.stage < 0 || t.at.stage != s.at.stage || ctx.index.ops[t.at.op].name != ctx.index.ops[s.at.op].name) continue;
                const bool sameParent = t.causedBy >= 0 && parent >= 0 && merged[std::size_t(t.causedBy)].at.stage == merged[std::size_t(parent)].at.stage &&
                                        merged[std::size_t(t.causedBy)].at.iteration == merged[std::size_t(parent)].at.iteration;
                if (sameParent) { into = int(m); break; }
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
            if (s.at.rank != t.at.rank && std::find(t.at.peerRanks.begin(), t.at.peerRanks.end(), s.at.rank) == t.at.peerRanks.end())
                t.at.peerRanks.push_back(s.at.rank);
            for (std::uint32_t p : s.at.peerRanks)
                if (p != t.at.rank && std::find(t.at.peerRanks.begin(), t.at.peerRanks.end(), p) == t.at.peerRanks.end()) t.at.peerRanks.push_back(p);
        }
        for (ChainStep& s : merged) std::sort(s.at.peerRanks.begin(), s.at.peerRanks.end());
        nodes = std::move(merged);
        keys = std::move(mkeys);
    }

    // Happens-before first (a step after the step it came from), then time: Kahn's algorithm
    // taking the earliest ready step.
    std::vector<ChainStep> causalOrder(std::size_t maxSteps) {
        std::vector<std::vector<int>> children(nodes.size());
        using Ready = std::pair<Key, int>;
        std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            if (nodes[i].causedBy >= 0) children[std::size_t(nodes[i].causedBy)].push_back(int(i));
            else ready.push({keys[i], int(i)});
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
};

// Happens-before positions without timestamps: program order on each rank, a Receive after its
// Send, a collective after every member reached it (a Lamport clock per iteration).
std::vector<std::uint64_t> happensBeforeOrder(const AnalysisContext& ctx) {
    const std::size_t n = ctx.index.ops.size();
    std::vector<std::uint64_t> L(n, 0);
    std::vector<char> done(n, 0);
    std::map<std::uint32_t, std::vector<std::pair<std::uint32_t, std::uint32_t>>> byIter;  // iter -> ranges
    for (const auto& [key, r] : ctx.range) byIter[key.second].push_back(r);
    for (auto& entry : byIter) {
        auto& ranges = entry.second;   // a plain reference: clang 14 cannot capture a structured binding
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
                        if (!done[std::size_t(p)]) blocked = true;
                        else v = std::max(v, L[std::size_t(p)] + 1);
                    } else if (isCollective(ctx.ops[i].comm) && ctx.match.group[i] >= 0) {
                        for (std::uint32_t m : ctx.match.groups[std::size_t(ctx.match.group[i])].ops) {
                            auto s = slotOfRank.find(ctx.index.ops[m].rank);
                            if (s == slotOfRank.end() || m < ranges[s->second].first || m >= ranges[s->second].second) continue;
                            if (cur[s->second] < m) { blocked = true; break; }
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
std::map<std::uint32_t, std::uint32_t> linkComponents(const AnalysisContext& ctx) {
    std::map<std::uint32_t, std::uint32_t> up;
    for (const auto& [key, r] : ctx.range) up.emplace(key.first, key.first);
    std::function<std::uint32_t(std::uint32_t)> root = [&](std::uint32_t r) {
        auto it = up.try_emplace(r, r).first;
        return it->second == r ? r : (it->second = root(it->second));
    };
    auto join = [&](std::uint32_t a, std::uint32_t b) {
        a = root(a);
        b = root(b);
        if (a != b) up[std::max(a, b)] = std::min(a, b);
    };
    for (const CommPair& p : ctx.match.pairs) join(ctx.index.ops[p.send].rank, ctx.index.ops[p.recv].rank);
    for (const CollectiveGroup& g : ctx.match.groups)
        for (std::uint32_t m : g.ops) join(ctx.index.ops[g.ops.front()].rank, ctx.index.ops[m].rank);
    std::map<std::uint32_t, std::uint32_t> out;
    for (const auto& [r, u] : up) out[r] = root(r);
    return out;
}

}  // namespace

bool chainOrderedByFlow(const AnalysisContext& ctx) {
    if (ctx.stages.stageCount < 2) return false;
    std::set<std::uint32_t> components;
    for (const auto& [rank, root] : linkComponents(ctx)) {
        if (ctx.stages.stageOf(rank) < 0) return false;  // a rank the data flow cannot place
        components.insert(root);
    }
    return components.size() > 1;
}

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

bool chainOrderedByClock(const AnalysisContext& ctx) {
    for (std::uint32_t i = 0; i < ctx.index.ops.size(); ++i)
        if (!ctx.rawTime(i)) return false;
    return !ctx.index.ops.empty();
}

std::vector<ChainStep> buildChain(const AnalysisContext& ctx, const OverflowPoint& origin, bool orderedByClock,
                                  std::size_t maxSteps) {
    Builder b{ctx, std::max<std::size_t>(maxSteps * 4, 256)};
    b.timed = orderedByClock;
    if (!b.timed) b.order = happensBeforeOrder(ctx);
    b.originRank = origin.rank;
    b.flow = chainOrderedByFlow(ctx);
    b.linkRoot = linkComponents(ctx);
    b.clockRoot = ctx.clockComponent;
    b.referenceRank = ctx.clockOffsetUs.empty() ? origin.rank : ctx.clockOffsetUs.begin()->first;
    if (b.flow) {
        // The origin's iteration: a backward origin's gradient goes down, a forward one up and back.
        const OpRecord& o = ctx.index.ops[origin.op];
        const bool backward = isBackwardName(ctx.index.strings.view(o.name)) || isBackwardName(ctx.index.strings.view(o.scope));
        b.reached.insert(origin.rank);
        b.reached.insert(origin.peerRanks.begin(), origin.peerRanks.end());
        b.planFlow(origin.iteration, std::max(0, ctx.stages.stageOf(origin.rank)), backward);
    }
    for (const CommOp& c : ctx.comm)
        if (c.kind == CommKind::Send && c.tag >= 0) b.tagOf[c.op] = c.tag;
    b.startIteration(origin.iteration);

    // A Receive only stands first when its Send is not in the dump: it inherited, never originated.
    const bool inherited = ctx.ops[origin.op].comm == CommKind::Receive || ctx.ops[origin.op].inputBad;
    const ChainRole role = ctx.ops[origin.op].comm == CommKind::Receive ? ChainRole::Receive
                           : inherited                                  ? ChainRole::Propagated
                                                                        : ChainRole::Origin;
    const int root = b.add(role, origin.op, -1, ChainVia::None,
                           inherited ? "earliest anomaly; its source is not in the dump" : "inputs within range, output out of range", false);
    b.nodes[std::size_t(root)].at.peerRanks = origin.peerRanks;
    b.nodes[std::size_t(root)].at.tensor = origin.tensor;
    b.nodes[std::size_t(root)].at.kind = origin.kind;
    b.reached.insert(origin.rank);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> scans{{origin.rank, origin.op}};
    for (std::uint32_t peer : origin.peerRanks) {
        b.reached.insert(peer);
        b.lastNodeOn[peer] = root;
        std::uint32_t from = b.rangeOf(peer, origin.iteration).first;
        const auto [pb, pe] = b.rangeOf(peer, origin.iteration);
        for (std::uint32_t i = pb; i < pe; ++i)
            if (ctx.index.ops[i].name == ctx.index.ops[origin.op].name) { from = i; break; }
        scans.push_back({peer, from});
    }
    b.spread(origin.iteration, scans);

    // Later iterations, while some rank with an anomaly is not reached: the ranks reached so far
    // start them with bad weights.
    std::set<std::uint32_t> later;
    for (const auto& [key, r] : ctx.range) if (key.second > origin.iteration) later.insert(key.second);
    for (std::uint32_t it : later) {
        bool missing = false;
        for (const auto& [key, r] : ctx.range)
            if (key.second >= it && !b.reached.count(key.first) && b.firstBad(key.first, key.second) != kNoIndex) missing = true;
        if (!missing || b.full()) break;
        b.startIteration(it);
        scans.clear();
        for (std::uint32_t rank : b.reached) {
            const auto [rb, re] = b.rangeOf(rank, it);
            std::uint32_t seed = kNoIndex;
            for (std::uint32_t i = rb; i < re && seed == kNoIndex; ++i) {
                const OpFindings& s = ctx.ops[i];
                if (!s.anomalous() || s.comm == CommKind::Receive || (isCollective(s.comm) && !b.collectiveCarries(i))) continue;
                seed = i;
            }
            if (seed == kNoIndex) continue;
            b.pendingSeed[rank] = seed;
            scans.push_back({rank, seed});
        }
        b.materializeSeed(origin.rank);  // the path across iterations always starts at the origin
        b.spread(it, scans);
    }
    b.mergePeers();
    return b.causalOrder(maxSteps);
}

}  // namespace dl

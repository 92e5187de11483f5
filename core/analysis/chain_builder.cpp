// The chain's entry point and its steps: creating a step, keys on the reference clock, the first
// bad op on a rank. The hop search, the order and the path across iterations are in their own
// files (chain_walk.h).
#include "core/analysis/chain_builder.h"

#include <algorithm>

#include "core/analysis/chain_walk.h"

namespace dl {

namespace chain_detail {

// Time the op's bad data is there: a Receive's or collective's output at its end.
std::int64_t Walk::alignedTime(std::uint32_t op, bool arriving) const {
    const OpRecord& o = ctx.index.ops[op];
    std::int64_t t = ctx.rawTime(op);
    if (arriving && o.endUs) t = std::max(t, o.endUs);
    auto off = ctx.clockOffsetUs.find(o.rank);
    return t && off != ctx.clockOffsetUs.end() ? t - off->second : t;
}

Key Walk::keyOf(std::uint32_t op, bool arriving, int kind) const {
    const OpRecord& o = ctx.index.ops[op];
    return {o.iteration,
            flowOf(o.rank, o.iteration),
            timed ? alignedTime(op, arriving) : std::int64_t(order[op]),
            kind,
            o.rank,
            op};
}

int Walk::add(ChainRole role, std::uint32_t op, int parent, ChainVia via, std::string note, bool arriving) {
    ChainStep s;
    s.role = role;
    s.at = ctx.point(op);
    if (role == ChainRole::Send && s.at.kind == AnomalyKind::None) carried(op, s.at);
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

// First anomalous compute op on `rank` at or after `from` in iteration `it` (comm ops are hops).
std::uint32_t Walk::firstBadCompute(std::uint32_t rank, std::uint32_t it, std::uint32_t from) const {
    const auto [b, e] = rangeOf(rank, it);
    for (std::uint32_t i = std::max(b, from); i < e; ++i)
        if (ctx.ops[i].anomalous() && ctx.ops[i].comm == CommKind::None) return i;
    return kNoIndex;
}

std::uint32_t Walk::firstBad(std::uint32_t rank, std::uint32_t it) const {
    const auto [b, e] = rangeOf(rank, it);
    for (std::uint32_t i = b; i < e; ++i)
        if (ctx.ops[i].anomalous() || ctx.ops[i].inputBad) return i;
    return kNoIndex;
}

// A Send's own output (when dumped) is not what it moved: its kind and tensor are those of the
// bad input it carried, or, inputs not dumped, of what its Receive got.
void Walk::carried(std::uint32_t op, OverflowPoint& at) const {
    const OpFindings& f = ctx.ops[op];
    if (f.inputKind != AnomalyKind::None) {
        at.kind = f.inputKind;
        at.tensor = f.badInput;
    } else if (const std::int32_t p = ctx.match.partner[op]; p >= 0) {
        at.kind = ctx.ops[std::size_t(p)].kind;
    }
}

void Walk::startIteration(std::uint32_t it) {
    if (flow && !flowPosOf.count(it)) {
        int from = ctx.stages.stageCount;
        for (std::uint32_t r : reached) from = std::min(from, std::max(0, ctx.stages.stageOf(r)));
        planFlow(it, std::min(from, ctx.stages.stageCount - 1), false);
    }
    iter = it;
    onRank.clear();
    pendingSeed.clear();
}

}  // namespace chain_detail

using chain_detail::happensBeforeOrder;
using chain_detail::linkComponents;
using chain_detail::Walk;

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

std::vector<ChainStep> buildChain(const AnalysisContext& ctx, const OverflowPoint& origin, bool orderedByClock,
                                  std::size_t maxSteps) {
    Walk b{ctx, std::max<std::size_t>(maxSteps * 4, 256)};
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
        const bool backward =
            isBackwardName(ctx.index.strings.view(o.name)) || isBackwardName(ctx.index.strings.view(o.scope));
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
        : inherited                                                     ? ChainRole::Propagated
                                                                        : ChainRole::Origin;
    const int root = b.add(
        role, origin.op, -1, ChainVia::None,
        inherited ? "earliest anomaly; its source is not in the dump" : "inputs within range, output out of range",
        false);
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
            if (ctx.index.ops[i].name == ctx.index.ops[origin.op].name) {
                from = i;
                break;
            }
        scans.push_back({peer, from});
    }
    b.spread(origin.iteration, scans);

    b.spreadLaterIterations(origin);
    b.mergePeers();
    return b.causalOrder(maxSteps);
}

}  // namespace dl

// The path across iterations: a rank reached in one iteration starts the next with bad weights,
// through the optimizer that applied the bad gradient (when it is in the dump), then its first
// anomaly there, from which the hops go on.
#include <algorithm>
#include <set>

#include "core/analysis/chain_walk.h"

namespace dl::chain_detail {

// Optimizer kernels that write a gradient into the weights (MindSpore, CANN and msprobe names).
bool isOptimizerType(std::string_view t) {
    static constexpr std::string_view kNames[] = {"ApplyMomentum",
                                                  "ApplyAdam",
                                                  "Adam",
                                                  "AdamWeightDecay",
                                                  "AdamW",
                                                  "FusedAdam",
                                                  "FusedAdamWeightDecay",
                                                  "ApplyAdagrad",
                                                  "ApplyRMSProp",
                                                  "ApplyFtrl",
                                                  "SGD",
                                                  "Lamb",
                                                  "LambApplyOptimizerAssign",
                                                  "ApplyAdaMax",
                                                  "ApplyProximalAdagrad",
                                                  "ApplyCenteredRMSProp",
                                                  "FusedSgd",
                                                  "ApplyLars"};
    for (std::string_view n : kNames)
        if (t == n || (t.size() > n.size() && t.substr(0, n.size()) == n && t[n.size()] == 'V')) return true;  // ...V2
    return t.find("Optimizer.step") != std::string_view::npos;
}

// A rank reached in an earlier iteration starts this one with bad weights: the optimizer that
// wrote them, then its first anomaly here. Listed only when the spread goes through it.
int Walk::materializeSeed(std::uint32_t rank) {
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
        if (isOptimizerType(ctx.index.strings.view(ctx.index.ops[i].type)) &&
            (ctx.ops[i].inputBad || ctx.ops[i].outputBad))
            optimizer = i;
    std::string how;
    if (optimizer != kNoIndex) {
        parent = add(
            ChainRole::Propagated, optimizer, parent, ChainVia::SameRank,
            type(optimizer) + " applies the bad gradient to the weights after iteration " + std::to_string(prevIter),
            false);
        how = "the weights updated by " + name(optimizer) + " after iteration " + std::to_string(prevIter);
    } else {
        how = "the weights updated after iteration " + std::to_string(prevIter) + "; the optimizer is not in the dump";
    }
    const int seed = add(ChainRole::Propagated, seedOp, parent, ChainVia::WeightUpdate,
                         "iteration " + std::to_string(iter) + ": first anomaly of rank " + std::to_string(rank) +
                             ", reached through " + how,
                         false);
    nodes[std::size_t(seed)].linkOp = optimizer;
    return seed;
}

// Later iterations, while some rank with an anomaly is not reached: the ranks reached so far
// start them with bad weights.
void Walk::spreadLaterIterations(const OverflowPoint& origin) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> scans;
    std::set<std::uint32_t> later;
    for (const auto& [key, r] : ctx.range)
        if (key.second > origin.iteration) later.insert(key.second);
    for (std::uint32_t it : later) {
        bool missing = false;
        for (const auto& [key, r] : ctx.range)
            if (key.second >= it && !reached.count(key.first) && firstBad(key.first, key.second) != kNoIndex)
                missing = true;
        if (!missing || full()) break;
        startIteration(it);
        scans.clear();
        for (std::uint32_t rank : reached) {
            const auto [rb, re] = rangeOf(rank, it);
            std::uint32_t seed = kNoIndex;
            for (std::uint32_t i = rb; i < re && seed == kNoIndex; ++i) {
                const OpFindings& s = ctx.ops[i];
                if (!s.anomalous() || s.comm == CommKind::Receive || (isCollective(s.comm) && !collectiveCarries(i)))
                    continue;
                seed = i;
            }
            if (seed == kNoIndex) continue;
            pendingSeed[rank] = seed;
            scans.push_back({rank, seed});
        }
        materializeSeed(origin.rank);  // the path across iterations always starts at the origin
        spread(it, scans);
    }
}
}  // namespace dl::chain_detail

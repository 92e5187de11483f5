#pragma once
// Internal to the chain builder: the state of one walk from the origin and the declarations its
// files share. chain_builder.cpp holds the entry point and the steps, chain_hops.cpp the hop
// search (Send/Receive and collectives, earliest arrival first), chain_flow_order.cpp the order
// (happens-before, data flow, merging TP peers, the final listing), chain_weight_update.cpp the
// path across iterations through the optimizer.
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "core/analysis/analysis_context.h"

namespace dl::chain_detail {

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
        return std::tie(iteration, flow, time, kind, rank, op) <
            std::tie(o.iteration, o.flow, o.time, o.kind, o.rank, o.op);
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

// Optimizer kernels that write a gradient into the weights (chain_weight_update.cpp).
bool isOptimizerType(std::string_view t);
// Happens-before positions per op without timestamps (chain_flow_order.cpp).
std::vector<std::uint64_t> happensBeforeOrder(const AnalysisContext& ctx);
// Ranks joined by messages: rank -> lowest rank of its component (chain_flow_order.cpp). Computed
// on the first call and kept in ctx (ctx.match and ctx.range must be final by then).
const std::map<std::uint32_t, std::uint32_t>& linkComponents(const AnalysisContext& ctx);

struct Walk {
    const AnalysisContext& ctx;
    std::size_t maxNodes;
    bool timed = true;                 // every op has a timestamp: order by the aligned clock
    std::vector<std::uint64_t> order;  // happens-before position per op (only when !timed)
    // Data-flow placement (no message links some ranks): per iteration, the place of each stage in
    // the order the damage travels, and the ranks that held it when the iteration began.
    bool flow = false;
    std::map<std::uint32_t, std::vector<int>> flowPosOf;         // iteration -> [stage] -> place
    std::map<std::uint32_t, std::set<std::uint32_t>> seededOf;   // iteration -> ranks bad at its start
    std::map<std::uint32_t, std::uint32_t> linkRoot, clockRoot;  // rank -> its message / clock component
    std::uint32_t referenceRank = 0;
    std::vector<ChainStep> nodes;  // in creation order; causedBy indexes nodes
    std::vector<Key> keys;
    std::set<std::uint32_t> reached;          // ranks the chain has reached
    std::map<std::uint32_t, int> lastNodeOn;  // rank -> its latest node (any iteration)
    std::uint32_t originRank = 0;
    int depth = 0;                       // nesting of listArrival (a bound against odd pairings)
    std::map<std::uint32_t, int> tagOf;  // Send op -> its sr_tag, where written
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
    bool full() const { return nodes.size() >= maxNodes; }
    // A collective passes on bad data its own rank put in (or, inputs not dumped, came out bad).
    bool collectiveCarries(std::uint32_t i) const {
        const OpFindings& s = ctx.ops[i];
        return s.inputBad || (s.outputBad && !s.inputsDumped);
    }
    bool clockAlignedRank(std::uint32_t rank) const {
        auto a = clockRoot.find(rank), b = clockRoot.find(referenceRank);
        return a != clockRoot.end() && b != clockRoot.end() && a->second == b->second;
    }
    bool linked(std::uint32_t a, std::uint32_t b) const {
        auto x = linkRoot.find(a), y = linkRoot.find(b);
        return a == b || (x != linkRoot.end() && y != linkRoot.end() && x->second == y->second);
    }

    // Steps (chain_builder.cpp).
    std::int64_t alignedTime(std::uint32_t op, bool arriving) const;
    Key keyOf(std::uint32_t op, bool arriving, int kind = 0) const;
    int add(ChainRole role, std::uint32_t op, int parent, ChainVia via, std::string note, bool arriving);
    void carried(std::uint32_t op, OverflowPoint& at) const;
    std::uint32_t firstBadCompute(std::uint32_t rank, std::uint32_t it, std::uint32_t from) const;
    std::uint32_t firstBad(std::uint32_t rank, std::uint32_t it) const;
    void startIteration(std::uint32_t it);

    // Hop search (chain_hops.cpp).
    void scanFrom(std::uint32_t rank, std::uint32_t from);
    void arrive(std::uint32_t rank, int node, std::uint32_t at);
    std::pair<std::uint32_t, std::uint32_t> arrivalBefore(std::uint32_t rank, std::uint32_t from,
                                                          std::uint32_t op) const;
    int latestOn(std::uint32_t rank, std::uint32_t op);
    int listArrival(std::uint32_t rank, std::uint32_t at, std::uint32_t src);
    std::vector<std::uint32_t> groupRanksOf(std::uint32_t op) const;
    int sourceNode(std::uint32_t srcRank, std::uint32_t srcOp, std::string note);
    void pop(const Candidate& c);
    void spread(std::uint32_t it, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& scans);

    // Data-flow order and listing (chain_flow_order.cpp).
    int flowOf(std::uint32_t rank, std::uint32_t it) const;
    void planFlow(std::uint32_t it, int fromStage, bool backwardOnly);
    int latestBefore(const Key& k) const;
    std::string clockOnlyNote(const Candidate& c, int parent) const;
    void mergePeers();
    std::vector<ChainStep> causalOrder(std::size_t maxSteps);

    // Across iterations (chain_weight_update.cpp).
    int materializeSeed(std::uint32_t rank);
    void spreadLaterIterations(const OverflowPoint& origin);
};

}  // namespace dl::chain_detail

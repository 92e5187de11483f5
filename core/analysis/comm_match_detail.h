#pragma once
// Internal to the comm matcher: what its files share. comm_matcher.cpp holds the entry points (one
// match of a run, iterations on all cores), comm_pairing.cpp the Send/Receive pairing,
// comm_collectives.cpp the grouping of collective calls.
#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <vector>

#include "core/analysis/comm_matcher.h"
#include "core/analysis/stage_map.h"
#include "core/model/dump_index.h"

namespace dl::comm_detail {

// Shape and dtype of the data a comm op moves; empty when nothing was dumped. The shape is a view
// of the index's dims: made once per comm op, not per compared pair.
struct Signature {
    DType dtype = DType::Unknown;
    std::span<const std::int64_t> shape;
    bool known = false;
};

Signature signatureOf(const DumpIndex& index, const OpRecord& op, bool wantInput);
bool compatible(const Signature& a, const Signature& b);
std::map<int, std::vector<std::uint32_t>> ranksByStage(const StageMap& stages);

// Ranks that may sit at the other end of a comm op: an explicit peer, or up to two neighbouring
// stages' ranks (none: unknown, any rank).
struct Peers {
    std::uint32_t n = 0;
    std::uint32_t rank[2] = {0, 0};
    bool empty() const { return n == 0; }
    bool has(std::uint32_t r) const { return (n > 0 && rank[0] == r) || (n > 1 && rank[1] == r); }
};

Peers candidatePeers(const DumpIndex& index, const CommOp& c, const StageMap& stages,
                     const std::map<int, std::vector<std::uint32_t>>& by);

// What matchIteration needs of each point-to-point op, computed once (by position in `comm`).
struct P2p {
    Signature sig;  // a Send's input, a Receive's output
    Peers peers;
};

// What one iteration adds to a CommMatch: iterations are matched on all cores, each writing the
// per-op partner and group of its own ops only, and merged in iteration order (group ids are
// local until then).
struct IterationMatch {
    std::vector<CommPair> pairs;
    std::vector<CollectiveGroup> groups;
    std::vector<std::uint32_t> unmatchedSends, unmatchedReceives;
    std::uint64_t ambiguous = 0, statisticsDiffer = 0;
};

// What a Send moved (its input) or a Receive got (its output): the same bytes on both ends, so
// equal statistics. `hash` mixes dtype, shape and every statistic (NaN as one value).
struct Fingerprint {
    bool known = false;
    std::uint64_t hash = 0;
    TensorStats stats;
};

Fingerprint fingerprintOf(const DumpIndex& index, const OpRecord& op, bool wantInput);
bool sameStats(const Fingerprint& a, const Fingerprint& b);

// One end of a point-to-point message within an iteration.
struct End {
    const CommOp* c;
    std::uint32_t rank;
    Fingerprint fp;
    int paired = -1;         // index into the other side
    int anchor = -1;         // Receives: the Send their statistics tie them to
    bool laneOrder = false;  // ... among TP peers carrying identical data, by rank order
};
struct IterationEnds {
    std::vector<End> sends, recvs;
};
// (rank, backward, tag) -> the ranks at the other end of its messages, with how often.
using ChannelKey = std::tuple<std::uint32_t, bool, int>;
using Votes = std::map<ChannelKey, std::map<std::uint32_t, int>>;

void findAnchors(const DumpIndex& index, const std::vector<const CommOp*>& ops, const CommOp* base,
                 const std::vector<P2p>& p2p, IterationEnds& e, Votes& senders, Votes& receivers);
void pairIteration(const CommOp* base, const std::vector<P2p>& p2p, IterationEnds& e, const Votes& senderVotes,
                   const Votes& receiverVotes, IterationMatch& m, std::vector<std::int32_t>& partner);
void groupCollectives(const DumpIndex& index, const std::vector<const CommOp*>& ops, std::uint32_t iteration,
                      IterationMatch& m, std::vector<std::int32_t>& group);
void splitByLearnedPartition(const DumpIndex& index, CommMatch& m);

}  // namespace dl::comm_detail

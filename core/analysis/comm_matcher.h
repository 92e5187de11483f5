#pragma once
// Finds the communication ops of a dump (HCCL Send/Receive and collectives, msprobe
// Distributed.* entries) and pairs each Receive with the Send that fed it, so anomalies can be
// followed across ranks by causality instead of by timestamps from unsynchronised clocks.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"

namespace dl {

enum class CommKind : std::uint8_t {
    None,
    Send,
    Receive,
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    AllToAll,
    Reduce
};
const char* commKindName(CommKind k);
// From the op type, falling back to the name (msprobe "Distributed.all_reduce.0.forward").
CommKind classifyComm(std::string_view type, std::string_view name);
CommKind commKindOfType(std::string_view type);  // the type's part of classifyComm
CommKind commKindOfName(std::string_view name);  // the name's part, for a type that names no comm op
// msprobe batch_isend_irecv entries whose P2POps all go one way: the reader writes "P2POp isend
// peer=N" / "P2POp irecv peer=N" into the op's scope (msprobe_shard.cpp), read here.
CommKind p2pKindOfScope(std::string_view scope);
inline bool isCollective(CommKind k) { return k != CommKind::None && k != CommKind::Send && k != CommKind::Receive; }

// Backward ops: MindSpore puts them under a "Gradients/" scope, msprobe names end in ".backward".
bool isBackwardName(std::string_view nameOrScope);

struct CommOp {
    std::uint32_t op = 0;
    CommKind kind = CommKind::None;
    int explicitPeer = -1;  // peer rank written into the name/scope (dest_rank, src_rank, peer), -1 none
    int tag = -1;           // sr_tag / tag when written, -1 none
    bool backward = false;
};

// Every comm op of the index, in index order.
std::vector<CommOp> findCommOps(const DumpIndex& index);

// What tied a Receive to its Send, strongest first.
enum class PairEvidence : std::uint8_t {
    Statistics,             // the only Send whose input carries the Receive's output statistics
    StatisticsLaneOrder,    // TP peers sent identical data: equal statistics, peers paired in rank order
    ExplicitPeer,           // the names give the peer rank; the channel's order gives the Send
    Order,                  // the k-th Receive of a one-to-one channel (rank, peer, direction, tag)
    OrderStatisticsDiffer,  // paired by order, but the statistics differ: a row is missing or misread
    StageMap,               // the stage map's neighbour was the only possible sender
    Ambiguous,              // several Sends were possible: the first was taken, reported as a guess
};
const char* pairEvidenceName(PairEvidence e);  // "statistics", "explicit_peer", "order", ...

struct CommPair {
    std::uint32_t send = 0, recv = 0;  // op indices
    bool confident = true;             // false: more than one Send could have fed this Receive
    PairEvidence evidence = PairEvidence::Order;
};

struct CollectiveGroup {
    CommKind kind = CommKind::None;
    std::uint32_t iteration = 0;
    std::vector<std::uint32_t> ops;  // the k-th such collective of the iteration on each rank
};

struct CommMatch {
    std::vector<CommPair> pairs;
    std::vector<CollectiveGroup> groups;
    std::vector<std::uint32_t> unmatchedSends, unmatchedReceives;
    std::vector<std::int32_t> partner;  // per op: paired Send/Receive op index, -1 none
    std::vector<std::int32_t> group;    // per op: index into groups, -1 none
    std::uint64_t ambiguous = 0;
    std::uint64_t statisticsDiffer = 0;  // pairs whose two ends' statistics differ
};

// Pairs Receives with Sends per iteration: explicit peers and tags when the names carry them,
// else the neighbouring pipeline stage (same position within the stage) in the op's direction,
// else any rank; channels are FIFO and tensor shapes/dtypes must agree. `stages` may be empty.
CommMatch matchCommunication(const DumpIndex& index, const std::vector<CommOp>& comm, const StageMap& stages);
// The same without the collectives (groups and group empty): the Send/Receive topology needs only
// the pairs, and grouping was most of a match at 10M tensors.
CommMatch matchSendReceive(const DumpIndex& index, const std::vector<CommOp>& comm, const StageMap& stages);

}  // namespace dl

#include "core/analysis/comm_matcher.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>

#include "core/analysis/name_memo.h"
#include "core/util/parallel_for.h"
#include "core/util/text.h"

namespace dl {

const char* commKindName(CommKind k) {
    switch (k) {
        case CommKind::None:
            return "none";
        case CommKind::Send:
            return "Send";
        case CommKind::Receive:
            return "Receive";
        case CommKind::AllReduce:
            return "AllReduce";
        case CommKind::AllGather:
            return "AllGather";
        case CommKind::ReduceScatter:
            return "ReduceScatter";
        case CommKind::Broadcast:
            return "Broadcast";
        case CommKind::AllToAll:
            return "AllToAll";
        case CommKind::Reduce:
            return "Reduce";
    }
    return "none";
}

const char* pairEvidenceName(PairEvidence e) {
    switch (e) {
        case PairEvidence::Statistics:
            return "statistics";
        case PairEvidence::StatisticsLaneOrder:
            return "statistics_lane_order";
        case PairEvidence::ExplicitPeer:
            return "explicit_peer";
        case PairEvidence::Order:
            return "order";
        case PairEvidence::OrderStatisticsDiffer:
            return "order_statistics_differ";
        case PairEvidence::StageMap:
            return "stage_map";
        case PairEvidence::Ambiguous:
            return "ambiguous";
    }
    return "?";
}

namespace {

std::string lowerAlnum(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s)
        if (std::isalnum(static_cast<unsigned char>(c))) out += char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

CommKind kindOfToken(std::string_view token) {
    std::string t = lowerAlnum(token);
    if (t.rfind("hcom", 0) == 0) t.erase(0, 4);
    if (t.rfind("mint", 0) == 0) t.erase(0, 4);
    static const std::pair<const char*, CommKind> kTable[] = {
        {"send", CommKind::Send},
        {"isend", CommKind::Send},
        {"receive", CommKind::Receive},
        {"recv", CommKind::Receive},
        {"irecv", CommKind::Receive},
        {"allreduce", CommKind::AllReduce},
        {"allgather", CommKind::AllGather},
        {"allgatherv", CommKind::AllGather},
        {"allgatherintotensor", CommKind::AllGather},
        {"reducescatter", CommKind::ReduceScatter},
        {"reducescatterv", CommKind::ReduceScatter},
        {"reducescattertensor", CommKind::ReduceScatter},
        {"broadcast", CommKind::Broadcast},
        {"alltoall", CommKind::AllToAll},
        {"alltoallv", CommKind::AllToAll},
        {"reduce", CommKind::Reduce},
    };
    for (const auto& [name, kind] : kTable)
        if (t == name) return kind;
    return CommKind::None;
}

// Value of `key` followed by an optional separator and digits, -1 when absent.
int intAfter(std::string_view s, std::string_view key) {
    for (std::size_t pos = s.find(key); pos != std::string_view::npos; pos = s.find(key, pos + 1)) {
        std::size_t i = pos + key.size();
        while (i < s.size() && (s[i] == '=' || s[i] == ':' || s[i] == '_' || s[i] == '-')) ++i;
        if (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
            int v = 0;
            while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && v < 1000000)
                v = v * 10 + (s[i++] - '0');
            return v;
        }
    }
    return -1;
}

// Shape and dtype of the data a comm op moves; empty when nothing was dumped. The shape is a view
// of the index's dims: made once per comm op, not per compared pair.
struct Signature {
    DType dtype = DType::Unknown;
    std::span<const std::int64_t> shape;
    bool known = false;
};

Signature signatureOf(const DumpIndex& index, const OpRecord& op, bool wantInput) {
    Signature sig;
    for (std::uint32_t i = 0; i < op.tensorCount; ++i) {
        const TensorRecord& t = index.tensors[op.firstTensor + i];
        if ((t.io == Io::Input) != wantInput || t.dtype == DType::Unknown) continue;
        sig.dtype = t.dtype;
        sig.shape = {index.dims.data() + t.shapeOffset, t.ndim};
        sig.known = true;
        break;
    }
    return sig;
}

bool compatible(const Signature& a, const Signature& b) {
    return !a.known || !b.known ||
        (a.dtype == b.dtype && std::equal(a.shape.begin(), a.shape.end(), b.shape.begin(), b.shape.end()));
}

// Ranks sorted per stage, to pair the k-th rank of one stage with the k-th of its neighbour.
std::map<int, std::vector<std::uint32_t>> ranksByStage(const StageMap& stages) {
    std::map<int, std::vector<std::uint32_t>> by;
    for (const auto& [rank, stage] : stages.stageOfRank) by[stage].push_back(rank);
    return by;
}

// Ranks that may sit at the other end of a comm op: an explicit peer, or up to two neighbouring
// stages' ranks (none: unknown, any rank).
struct Peers {
    std::uint32_t n = 0;
    std::uint32_t rank[2] = {0, 0};
    bool empty() const { return n == 0; }
    bool has(std::uint32_t r) const { return (n > 0 && rank[0] == r) || (n > 1 && rank[1] == r); }
};

Peers candidatePeers(const DumpIndex& index, const CommOp& c, const StageMap& stages,
                     const std::map<int, std::vector<std::uint32_t>>& by) {
    Peers peers;
    if (c.explicitPeer >= 0) {
        peers.rank[peers.n++] = std::uint32_t(c.explicitPeer);
        return peers;
    }
    const std::uint32_t rank = index.ops[c.op].rank;
    const int s = stages.stageOf(rank);
    if (s < 0) return peers;
    auto own = by.find(s);
    const std::size_t pos = std::find(own->second.begin(), own->second.end(), rank) - own->second.begin();
    int targets[2];
    int nt = 0;
    const bool towardsNext = (c.kind == CommKind::Send) != c.backward;
    if (c.backward || c.kind == CommKind::Send || c.kind == CommKind::Receive)
        targets[nt++] = towardsNext ? s + 1 : s - 1;
    // Without a scope we cannot tell forward from backward traffic: allow both neighbours.
    if (!c.backward && index.ops[c.op].scope == 0) targets[nt++] = towardsNext ? s - 1 : s + 1;
    for (int k = 0; k < nt; ++k) {
        auto it = by.find(targets[k]);
        if (it != by.end() && !it->second.empty()) peers.rank[peers.n++] = it->second[pos % it->second.size()];
    }
    return peers;
}

// What matchIteration needs of each point-to-point op, computed once (by position in `comm`).
struct P2p {
    Signature sig;  // a Send's input, a Receive's output
    Peers peers;
};

}  // namespace

CommKind commKindOfType(std::string_view type) { return kindOfToken(type); }

CommKind commKindOfName(std::string_view name) {
    // MindSpore names: "AllReduce-op12"; msprobe: "Distributed.all_reduce.0.forward".
    std::string_view head = name.substr(0, name.find("-op"));
    if (head.find('/') == std::string_view::npos && head.find('.') == std::string_view::npos)
        if (const CommKind k = kindOfToken(head); k != CommKind::None) return k;
    for (std::string_view prefix : {"Distributed.", "MintDistributed."}) {
        if (name.rfind(prefix, 0) == 0) {
            std::string_view rest = name.substr(prefix.size());
            return kindOfToken(rest.substr(0, rest.find('.')));
        }
    }
    return CommKind::None;
}

CommKind p2pKindOfScope(std::string_view scope) {
    if (scope.find("P2POp isend") != std::string_view::npos) return CommKind::Send;
    if (scope.find("P2POp irecv") != std::string_view::npos) return CommKind::Receive;
    return CommKind::None;
}

CommKind classifyComm(std::string_view type, std::string_view name) {
    const CommKind k = commKindOfType(type);
    return k != CommKind::None ? k : commKindOfName(name);
}

bool isBackwardName(std::string_view s) {
    // MindSpore 2.3+ file names spell the scope's '/' as '_': "Gradients_Default_..._gradReceive_Send-op9".
    // The bprop of a pipeline Send is a Receive under "gradSend" and vice versa, wherever the
    // Gradients prefix was cut off.
    return s.find("Gradients/") != std::string_view::npos || s.find(".backward") != std::string_view::npos ||
        s.find("gradients/") != std::string_view::npos || s.starts_with("Gradients_") ||
        s.find("gradReceive") != std::string_view::npos || s.find("gradSend") != std::string_view::npos;
}

namespace {
// The peer rank per key ("dest_rank", "src_rank", "peer_rank", "peer") and "sr_tag" in one
// lower-cased string, and whether it names backward traffic.
struct NameFacts {
    int peer[4] = {-1, -1, -1, -1};
    int tag = -1;
    bool backward = false;
};
NameFacts factsOf(std::string_view s) {
    NameFacts f;
    const std::string text = lower(s);
    const std::string_view keys[4] = {"dest_rank", "src_rank", "peer_rank", "peer"};
    for (int k = 0; k < 4; ++k) f.peer[k] = intAfter(text, keys[k]);
    f.tag = intAfter(text, "sr_tag");
    f.backward = isBackwardName(s);
    return f;
}
}  // namespace

std::vector<CommOp> findCommOps(const DumpIndex& index) {
    std::vector<CommOp> out;
    // classifyComm per op lower-cased two strings for every op: answered once per type and name.
    NameMemo<CommKind> byType(index.strings), byName(index.strings), byScope(index.strings);
    // The peer / tag search per string too. A key never spans name and scope (no '|' in a key,
    // and '|' ends the digits after one), so searching "name|scope" is the name's answer, else
    // the scope's.
    NameMemo<NameFacts> facts(index.strings);
    for (std::uint32_t i = 0; i < index.ops.size(); ++i) {
        const OpRecord& op = index.ops[i];
        CommKind kind = byType.get(op.type, commKindOfType);
        if (kind == CommKind::None) kind = byName.get(op.name, commKindOfName);
        if (kind == CommKind::None && op.scope) kind = byScope.get(op.scope, p2pKindOfScope);
        if (kind == CommKind::None) continue;
        CommOp c;
        c.op = i;
        c.kind = kind;
        const NameFacts n = facts.get(op.name, factsOf), sc = facts.get(op.scope, factsOf);
        for (int k = 0; k < 4; ++k)
            if ((c.explicitPeer = n.peer[k] >= 0 ? n.peer[k] : sc.peer[k]) >= 0) break;
        c.tag = n.tag >= 0 ? n.tag : sc.tag;
        c.backward = n.backward || sc.backward;
        out.push_back(c);
    }
    return out;
}

namespace {

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

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}
std::uint64_t bitsOf(double v) {
    if (std::isnan(v)) return 0x7ff8000000000000ull;
    std::uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

Fingerprint fingerprintOf(const DumpIndex& index, const OpRecord& op, bool wantInput) {
    Fingerprint f;
    for (std::uint32_t i = 0; i < op.tensorCount; ++i) {
        const TensorRecord& t = index.tensors[op.firstTensor + i];
        if ((t.io == Io::Input) != wantInput) continue;
        f.stats = index.stats(t);
        if (!f.stats.known) return f;
        std::uint64_t h = mix(std::uint64_t(t.dtype), t.ndim);
        for (std::uint32_t d = 0; d < t.ndim; ++d) h = mix(h, std::uint64_t(index.dims[t.shapeOffset + d]));
        for (std::uint64_t v : {f.stats.count, f.stats.nanCount, f.stats.posInfCount, f.stats.negInfCount})
            h = mix(h, v);
        for (double v : {f.stats.min, f.stats.max, f.stats.mean, f.stats.l2}) h = mix(h, bitsOf(v));
        f.hash = h;
        f.known = true;
        return f;
    }
    return f;
}

bool sameStats(const Fingerprint& a, const Fingerprint& b) {
    if (!a.known || !b.known) return false;
    const TensorStats &x = a.stats, &y = b.stats;
    auto same = [](double u, double v) { return (std::isnan(u) && std::isnan(v)) || u == v; };
    return x.count == y.count && x.nanCount == y.nanCount && x.posInfCount == y.posInfCount &&
        x.negInfCount == y.negInfCount && same(x.min, y.min) && same(x.max, y.max) && same(x.mean, y.mean) &&
        same(x.l2, y.l2);
}

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

bool fitsPair(const End& s, const End& r, const CommOp* base, const std::vector<P2p>& p2p) {
    if (s.rank == r.rank || s.c->backward != r.c->backward) return false;
    if (s.c->explicitPeer >= 0 && std::uint32_t(s.c->explicitPeer) != r.rank) return false;
    if (r.c->explicitPeer >= 0 && std::uint32_t(r.c->explicitPeer) != s.rank) return false;
    if (s.c->tag >= 0 && r.c->tag >= 0 && s.c->tag != r.c->tag) return false;
    return compatible(p2p[std::size_t(s.c - base)].sig, p2p[std::size_t(r.c - base)].sig);
}

// Phase 1, per iteration: the ends with their fingerprints, and the anchors. A Receive whose
// statistics equal those of exactly one Send is tied to it. Tensor-parallel peers hand the next
// stage identical activations, so a fingerprint can sit on one Send per peer and one Receive per
// peer of the next stage: then the peers pair in rank order (MindSpore numbers a stage's ranks
// lane by lane), said so in the evidence. The anchors vote for each rank's peer per direction.
void findAnchors(const DumpIndex& index, const std::vector<const CommOp*>& ops, const CommOp* base,
                 const std::vector<P2p>& p2p, IterationEnds& e, Votes& senders, Votes& receivers) {
    for (const CommOp* c : ops) {
        if (c->kind != CommKind::Send && c->kind != CommKind::Receive) continue;
        const OpRecord& o = index.ops[c->op];
        End x{c, o.rank, fingerprintOf(index, o, c->kind == CommKind::Send)};
        (c->kind == CommKind::Send ? e.sends : e.recvs).push_back(x);
    }
    std::unordered_map<std::uint64_t, std::pair<std::vector<int>, std::vector<int>>> byFp;
    for (std::size_t i = 0; i < e.sends.size(); ++i)
        if (e.sends[i].fp.known) byFp[e.sends[i].fp.hash ^ (e.sends[i].c->backward ? 1 : 0)].first.push_back(int(i));
    for (std::size_t i = 0; i < e.recvs.size(); ++i)
        if (e.recvs[i].fp.known) byFp[e.recvs[i].fp.hash ^ (e.recvs[i].c->backward ? 1 : 0)].second.push_back(int(i));
    for (auto& [h, sr] : byFp) {
        auto& [ss, rs] = sr;
        if (ss.empty() || ss.size() != rs.size()) continue;
        const auto byRank = [](const std::vector<End>& v) {
            return [&v](int a, int b) { return v[std::size_t(a)].rank < v[std::size_t(b)].rank; };
        };
        std::sort(ss.begin(), ss.end(), byRank(e.sends));
        std::sort(rs.begin(), rs.end(), byRank(e.recvs));
        std::set<std::uint32_t> seen;
        bool ok = true;
        for (int i : ss) ok = ok && seen.insert(e.sends[std::size_t(i)].rank).second;
        for (int i : rs) ok = ok && seen.insert(e.recvs[std::size_t(i)].rank).second;
        for (std::size_t k = 0; ok && k < ss.size(); ++k) {
            const End &s = e.sends[std::size_t(ss[k])], &r = e.recvs[std::size_t(rs[k])];
            ok = fitsPair(s, r, base, p2p) && sameStats(s.fp, r.fp);
        }
        if (!ok) continue;
        for (std::size_t k = 0; k < ss.size(); ++k) {
            End& r = e.recvs[std::size_t(rs[k])];
            const End& s = e.sends[std::size_t(ss[k])];
            r.anchor = ss[k];
            r.laneOrder = ss.size() > 1;
            senders[{r.rank, r.c->backward, r.c->tag}][s.rank] += 1;
            receivers[{s.rank, s.c->backward, s.c->tag}][r.rank] += 1;
        }
    }
    for (const End& r : e.recvs)
        if (r.c->explicitPeer >= 0) senders[{r.rank, r.c->backward, r.c->tag}][std::uint32_t(r.c->explicitPeer)] += 1;
    for (const End& s : e.sends)
        if (s.c->explicitPeer >= 0) receivers[{s.rank, s.c->backward, s.c->tag}][std::uint32_t(s.c->explicitPeer)] += 1;
}

// The one rank at the other end of a channel: the only one voted for, or one with at least 4x
// the votes of the next (a stray coincidence of statistics does not break a channel); -1 none.
std::int64_t singlePeer(const Votes& votes, const ChannelKey& k) {
    const auto it = votes.find(k);
    if (it == votes.end() || it->second.empty()) return -1;
    int best = 0, second = 0;
    std::uint32_t rank = 0;
    for (const auto& [r, n] : it->second) {
        if (n > best) {
            second = best;
            best = n;
            rank = r;
        } else
            second = std::max(second, n);
    }
    return best >= 4 * second ? std::int64_t(rank) : -1;
}

// Phase 2, per iteration, strongest evidence first:
//  1. channels: the votes of every iteration (the topology is the run's, not the iteration's:
//     after an overflow every message of an iteration may carry the same NaN statistics) name
//     each Receive's sender rank and each Send's receiver rank per direction and tag; a channel
//     with one rank at each end is FIFO, so its k-th Receive got its k-th Send (shifted by what
//     the anchors say when rows are missing);
//  2. the rest: the anchor, else the stage map's neighbour, else any rank with a compatible
//     unused Send; more than one possible sender is reported as ambiguous.
void pairIteration(const CommOp* base, const std::vector<P2p>& p2p, IterationEnds& e, const Votes& senderVotes,
                   const Votes& receiverVotes, IterationMatch& m, std::vector<std::int32_t>& partner) {
    auto& sends = e.sends;
    auto& recvs = e.recvs;
    if (sends.empty() || recvs.empty()) {
        for (const End& r : recvs) m.unmatchedReceives.push_back(r.c->op);
        for (const End& s : sends) m.unmatchedSends.push_back(s.c->op);
        return;
    }
    const auto fits = [&](const End& s, const End& r) { return fitsPair(s, r, base, p2p); };
    std::map<std::tuple<std::uint32_t, std::uint32_t, bool, int>, std::pair<std::vector<int>, std::vector<int>>>
        channels;
    for (std::size_t i = 0; i < sends.size(); ++i) {
        const End& s = sends[i];
        const std::int64_t to =
            s.c->explicitPeer >= 0 ? s.c->explicitPeer : singlePeer(receiverVotes, {s.rank, s.c->backward, s.c->tag});
        if (to >= 0) channels[{s.rank, std::uint32_t(to), s.c->backward, s.c->tag}].first.push_back(int(i));
    }
    for (std::size_t i = 0; i < recvs.size(); ++i) {
        const End& r = recvs[i];
        const std::int64_t from =
            r.c->explicitPeer >= 0 ? r.c->explicitPeer : singlePeer(senderVotes, {r.rank, r.c->backward, r.c->tag});
        if (from >= 0) channels[{std::uint32_t(from), r.rank, r.c->backward, r.c->tag}].second.push_back(int(i));
    }
    const auto pair = [&](int si, int ri, PairEvidence ev, bool confident) {
        End& s = sends[std::size_t(si)];
        End& r = recvs[std::size_t(ri)];
        s.paired = ri;
        r.paired = si;
        CommPair p{s.c->op, r.c->op, confident, ev};
        if (s.fp.known && r.fp.known && !sameStats(s.fp, r.fp)) {
            p.evidence = PairEvidence::OrderStatisticsDiffer;
            ++m.statisticsDiffer;
        }
        if (!confident) ++m.ambiguous;
        partner[s.c->op] = std::int32_t(r.c->op);
        partner[r.c->op] = std::int32_t(s.c->op);
        m.pairs.push_back(p);
    };
    const auto anchorEvidence = [](const End& r) {
        return r.laneOrder ? PairEvidence::StatisticsLaneOrder : PairEvidence::Statistics;
    };
    for (auto& [key, ends] : channels) {
        const auto& [ss, rs] = ends;
        if (ss.empty() || rs.empty()) continue;
        // Rows missing at one end shift the order: the anchors say by how much.
        std::map<std::int64_t, int> shifts;
        std::map<int, std::size_t> posOfSend;
        for (std::size_t j = 0; j < ss.size(); ++j) posOfSend[ss[j]] = j;
        for (std::size_t k = 0; k < rs.size(); ++k) {
            const int a = recvs[std::size_t(rs[k])].anchor;
            if (a >= 0 && posOfSend.count(a)) ++shifts[std::int64_t(posOfSend[a]) - std::int64_t(k)];
        }
        std::int64_t shift = 0;
        int best = 0;
        for (const auto& [d, n] : shifts)
            if (n > best) {
                best = n;
                shift = d;
            }
        for (std::size_t k = 0; k < rs.size(); ++k) {
            const std::int64_t j = std::int64_t(k) + shift;
            if (j < 0 || j >= std::int64_t(ss.size())) continue;
            const int si = ss[std::size_t(j)], ri = rs[k];
            if (sends[std::size_t(si)].paired >= 0 || !fits(sends[std::size_t(si)], recvs[std::size_t(ri)])) continue;
            const End& r = recvs[std::size_t(ri)];
            const bool explicitPeer = r.c->explicitPeer >= 0 || sends[std::size_t(si)].c->explicitPeer >= 0;
            pair(si, ri,
                 r.anchor == si     ? anchorEvidence(r)
                     : explicitPeer ? PairEvidence::ExplicitPeer
                                    : PairEvidence::Order,
                 true);
        }
    }
    // The rest: the anchor when still free, else per candidate rank its first unused fitting
    // Send (FIFO); equal statistics win.
    std::map<std::uint32_t, std::vector<int>> byRank;
    for (std::size_t i = 0; i < sends.size(); ++i) byRank[sends[i].rank].push_back(int(i));
    std::vector<std::uint32_t> from;
    for (std::size_t ri = 0; ri < recvs.size(); ++ri) {
        End& r = recvs[ri];
        if (r.paired >= 0) continue;
        if (r.anchor >= 0 && sends[std::size_t(r.anchor)].paired < 0) {
            pair(r.anchor, int(ri), anchorEvidence(r), true);
            continue;
        }
        const P2p& rp = p2p[std::size_t(r.c - base)];
        from.clear();
        if (const auto v = senderVotes.find({r.rank, r.c->backward, r.c->tag}); v != senderVotes.end())
            for (const auto& [rank, n] : v->second) from.push_back(rank);
        bool byStages = false;
        if (from.empty()) {
            from.assign(rp.peers.rank, rp.peers.rank + rp.peers.n);
            byStages = !from.empty();
        }
        if (from.empty())
            for (const auto& [rank, list] : byRank)
                if (rank != r.rank) from.push_back(rank);
        int first = -1, equal = -1, options = 0, equalOptions = 0;
        for (std::uint32_t a : from) {
            const auto it = byRank.find(a);
            if (it == byRank.end()) continue;
            for (int si : it->second) {
                const End& s = sends[std::size_t(si)];
                if (s.paired >= 0 || !fits(s, r)) continue;
                const P2p& sp = p2p[std::size_t(s.c - base)];
                if (!sp.peers.empty() && !sp.peers.has(r.rank)) continue;
                if (options++ == 0) first = si;
                if (sameStats(s.fp, r.fp) && equalOptions++ == 0) equal = si;
                break;
            }
        }
        if (options == 0) {
            m.unmatchedReceives.push_back(r.c->op);
            continue;
        }
        if (equalOptions == 1)
            pair(equal, int(ri), PairEvidence::Statistics, true);
        else if (options == 1)
            pair(first, int(ri), byStages ? PairEvidence::StageMap : PairEvidence::Order, true);
        else
            pair(equalOptions > 1 ? equal : first, int(ri), PairEvidence::Ambiguous, false);
    }
    for (const End& s : sends)
        if (s.paired < 0) m.unmatchedSends.push_back(s.c->op);
}

// A call's name without its graph-local number ("..._AllReduce-op213" -> "..._AllReduce").
std::string callScope(std::string_view name) {
    const std::size_t p = name.rfind("-op");
    if (p == std::string_view::npos || p + 3 == name.size()) return std::string(name);
    for (std::size_t i = p + 3; i < name.size(); ++i)
        if (!std::isdigit(static_cast<unsigned char>(name[i]))) return std::string(name);
    return std::string(name.substr(0, p));
}

// Both ops' first outputs are known and carry the same statistics and shape (NaN equal to NaN).
bool sameResult(const DumpIndex& index, std::uint32_t a, std::uint32_t b) {
    auto firstOutput = [&](std::uint32_t op) -> const TensorRecord* {
        const OpRecord& o = index.ops[op];
        for (std::uint32_t i = 0; i < o.tensorCount; ++i)
            if (index.tensors[o.firstTensor + i].io == Io::Output) return &index.tensors[o.firstTensor + i];
        return nullptr;
    };
    const TensorRecord* ta = firstOutput(a);
    const TensorRecord* tb = firstOutput(b);
    if (!ta || !tb || index.shape(*ta) != index.shape(*tb)) return false;
    const TensorStats x = index.stats(*ta), y = index.stats(*tb);
    if (!x.known || x.known != y.known || x.count != y.count) return false;
    auto same = [](double u, double v) { return (std::isnan(u) && std::isnan(v)) || u == v; };
    return x.nanCount == y.nanCount && x.posInfCount == y.posInfCount && x.negInfCount == y.negInfCount &&
        same(x.min, y.min) && same(x.max, y.max) && same(x.mean, y.mean) && same(x.l2, y.l2);
}

// Collectives. Ranks that run one compiled graph (tensor-parallel peers of a stage, every rank
// of a msprobe run) give a call the same name on each member: the k-th call of a name is one
// group. A name no other rank has (stages compile their own graphs, so a collective across
// stages has a different name on each) falls back to the k-th remaining call of its kind.
void groupCollectives(const DumpIndex& index, const std::vector<const CommOp*>& ops, std::uint32_t iteration,
                      IterationMatch& m, std::vector<std::int32_t>& group) {
    using NameKey = std::tuple<CommKind, StrId, std::uint32_t>;  // (kind, name, k-th call of that name)
    std::map<std::tuple<CommKind, StrId, std::uint32_t>, std::uint32_t> nameSeen;  // (kind, name, rank) -> count
    std::map<NameKey, std::vector<const CommOp*>> byName;
    for (const CommOp* c : ops) {
        if (!isCollective(c->kind)) continue;
        const OpRecord& o = index.ops[c->op];
        const std::uint32_t k = nameSeen[{c->kind, o.name, o.rank}]++;
        byName[{c->kind, o.name, k}].push_back(c);
    }
    // A collective over more ranks than share a graph (a global-norm AllReduce under pipeline x
    // tensor parallelism) has one name per stage: name groups of the same scope and k-th call
    // on disjoint ranks whose members came out with the same result (an AllReduce, AllGather or
    // Broadcast hands every member identical data) are one call.
    // Replicas of one graph (data-parallel pipelines) give their own calls the same names: the
    // members of one call come out with the same result, so a name group whose members split
    // into several sets of equal results, each of two ranks or more, is several calls.
    std::vector<std::pair<NameKey, std::vector<const CommOp*>>> split;
    for (const auto& [key, members] : byName) {
        std::vector<std::pair<Fingerprint, std::vector<const CommOp*>>> parts;
        bool known = true;
        for (const CommOp* c : members) {
            const Fingerprint f = fingerprintOf(index, index.ops[c->op], false);
            known = known && f.known;
            auto it = std::find_if(parts.begin(), parts.end(), [&](const auto& p) { return sameStats(p.first, f); });
            if (it == parts.end())
                parts.push_back({f, {c}});
            else
                it->second.push_back(c);
        }
        const bool several = known && parts.size() > 1 &&
            std::all_of(parts.begin(), parts.end(), [](const auto& p) { return p.second.size() > 1; });
        if (!several) {
            split.push_back({key, members});
            continue;
        }
        for (auto& p : parts) split.push_back({key, std::move(p.second)});
    }
    std::vector<std::pair<NameKey, std::vector<const CommOp*>>> named;
    std::map<std::tuple<CommKind, std::string, std::uint32_t>, std::size_t> byScope;  // -> index in named
    // Call scopes numbered once per name: the counts below run over every collective op.
    std::unordered_map<StrId, std::pair<std::string, std::uint64_t>> scopes;
    std::unordered_map<std::string, std::uint64_t> scopeIds;
    const auto scopeEntry = [&](StrId name) -> const std::pair<std::string, std::uint64_t>& {
        auto it = scopes.find(name);
        if (it == scopes.end()) {
            std::string sc = callScope(index.strings.view(name));
            const std::uint64_t id = scopeIds.emplace(sc, scopeIds.size()).first->second;
            it = scopes.emplace(name, std::pair(std::move(sc), id)).first;
        }
        return it->second;
    };
    const auto scopeOf = [&](StrId name) -> const std::string& { return scopeEntry(name).first; };
    const auto callKey = [&](CommKind k, StrId name, std::uint32_t rank) {
        return (std::uint64_t(k) << 56) | (scopeEntry(name).second << 24) | rank;
    };
    std::unordered_map<std::uint64_t, int> scopeCalls;  // (kind, scope, rank) -> calls in the iteration
    for (const CommOp* c : ops)
        if (isCollective(c->kind)) ++scopeCalls[callKey(c->kind, index.ops[c->op].name, index.ops[c->op].rank)];
    std::vector<std::uint32_t> ranks;  // of one name group, sorted and unique
    for (const auto& [key, members] : split) {
        ranks.clear();
        for (const CommOp* c : members) ranks.push_back(index.ops[c->op].rank);
        std::sort(ranks.begin(), ranks.end());
        ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
        if (ranks.size() < 2) continue;
        const CommKind kind = std::get<0>(key);
        // Only a scope each member calls once in the iteration (a global norm) is matched by
        // position across stages: a gradient reducer calls one scope per weight, and calls for
        // different weights that all came out NaN would look like one call.
        const std::string& scope = scopeOf(std::get<1>(key));
        const auto& name = std::get<1>(key);  // clang 14 cannot capture a structured binding
        const bool once = std::all_of(members.begin(), members.end(), [&](const CommOp* c) {
            return scopeCalls[callKey(kind, name, index.ops[c->op].rank)] == 1;
        });
        if (once && (kind == CommKind::AllReduce || kind == CommKind::AllGather || kind == CommKind::Broadcast)) {
            const auto [it, fresh] = byScope.try_emplace({kind, scope, std::get<2>(key)}, named.size());
            if (!fresh) {
                auto& into = named[it->second].second;
                const bool disjoint = std::none_of(into.begin(), into.end(), [&](const CommOp* c) {
                    return std::binary_search(ranks.begin(), ranks.end(), index.ops[c->op].rank);
                });
                if (disjoint && sameResult(index, into.front()->op, members.front()->op)) {
                    into.insert(into.end(), members.begin(), members.end());
                    continue;
                }
            }
        }
        named.push_back({key, members});
    }
    std::vector<std::uint32_t> grouped;  // ops in a name group, sorted below
    for (const auto& [key, members] : named) {
        const std::size_t g = m.groups.size();
        m.groups.push_back({std::get<0>(key), iteration, {}});
        for (const CommOp* c : members) {
            m.groups[g].ops.push_back(c->op);
            group[c->op] = std::int32_t(g);
            grouped.push_back(c->op);
        }
    }
    std::sort(grouped.begin(), grouped.end());
    std::map<std::pair<CommKind, std::uint32_t>, std::uint32_t> seen;   // (kind, rank) -> count
    std::map<std::pair<CommKind, std::uint32_t>, std::size_t> groupAt;  // (kind, k) -> group index
    for (const CommOp* c : ops) {
        if (!isCollective(c->kind) || std::binary_search(grouped.begin(), grouped.end(), c->op)) continue;
        const std::uint32_t k = seen[{c->kind, index.ops[c->op].rank}]++;
        auto [it, fresh] = groupAt.try_emplace({c->kind, k}, m.groups.size());
        if (fresh) m.groups.push_back({c->kind, iteration, {}});
        m.groups[it->second].ops.push_back(c->op);
        group[c->op] = std::int32_t(it->second);
    }
    for (CollectiveGroup& g : m.groups) std::sort(g.ops.begin(), g.ops.end());
}

}  // namespace

namespace {

// A call that came out NaN on every member cannot be split by its results, but the same call in a
// clean iteration could: when other iterations split a name's call into rank sets that partition
// this call's ranks, this call is split the same way (data-parallel replicas, TP lanes).
void splitByLearnedPartition(const DumpIndex& index, CommMatch& m) {
    auto ranksOf = [&](const CollectiveGroup& g) {
        std::vector<std::uint32_t> r;
        for (std::uint32_t op : g.ops) r.push_back(index.ops[op].rank);
        std::sort(r.begin(), r.end());
        r.erase(std::unique(r.begin(), r.end()), r.end());
        return r;
    };
    std::map<StrId, std::set<std::vector<std::uint32_t>>> setsOf;
    for (const CollectiveGroup& g : m.groups)
        if (!g.ops.empty()) setsOf[index.ops[g.ops.front()].name].insert(ranksOf(g));
    const std::size_t n = m.groups.size();
    for (std::size_t gi = 0; gi < n; ++gi) {
        if (m.groups[gi].ops.empty()) continue;
        const std::vector<std::uint32_t> all = ranksOf(m.groups[gi]);
        if (all.size() < 4) continue;
        std::vector<const std::vector<std::uint32_t>*> parts;
        std::set<std::uint32_t> covered;
        for (const auto& part : setsOf[index.ops[m.groups[gi].ops.front()].name]) {
            if (part.size() < 2 || part.size() >= all.size() ||
                !std::includes(all.begin(), all.end(), part.begin(), part.end()))
                continue;
            if (std::any_of(part.begin(), part.end(), [&](std::uint32_t r) { return covered.count(r) > 0; })) continue;
            parts.push_back(&part);
            covered.insert(part.begin(), part.end());
        }
        if (parts.size() < 2 || covered.size() != all.size()) continue;
        CollectiveGroup whole = std::move(m.groups[gi]);
        for (std::size_t k = 0; k < parts.size(); ++k) {
            const std::size_t at = k == 0 ? gi : m.groups.size();
            CollectiveGroup g{whole.kind, whole.iteration, {}};
            for (std::uint32_t op : whole.ops)
                if (std::binary_search(parts[k]->begin(), parts[k]->end(), index.ops[op].rank)) {
                    g.ops.push_back(op);
                    m.group[op] = std::int32_t(at);
                }
            if (k == 0)
                m.groups[gi] = std::move(g);
            else
                m.groups.push_back(std::move(g));
        }
    }
}

CommMatch match(const DumpIndex& index, const std::vector<CommOp>& comm, const StageMap& stages, bool collectives) {
    CommMatch m;
    m.partner.assign(index.ops.size(), -1);
    m.group.assign(index.ops.size(), -1);
    std::map<std::uint32_t, std::vector<const CommOp*>> byIteration;
    for (const CommOp& c : comm) byIteration[index.ops[c.op].iteration].push_back(&c);
    const auto by = ranksByStage(stages);
    std::vector<P2p> p2p(comm.size());
    for (std::size_t i = 0; i < comm.size(); ++i)
        if (comm[i].kind == CommKind::Send || comm[i].kind == CommKind::Receive)
            p2p[i] = {signatureOf(index, index.ops[comm[i].op], comm[i].kind == CommKind::Send),
                      candidatePeers(index, comm[i], stages, by)};
    std::vector<std::pair<std::uint32_t, const std::vector<const CommOp*>*>> iterations;
    for (const auto& [iteration, ops] : byIteration) iterations.push_back({iteration, &ops});
    std::vector<IterationMatch> parts(iterations.size());
    std::vector<IterationEnds> ends(iterations.size());
    std::vector<Votes> senders(iterations.size()), receivers(iterations.size());
    parallelFor(std::size_t(0), iterations.size(), [&](std::size_t i) {
        findAnchors(index, *iterations[i].second, comm.data(), p2p, ends[i], senders[i], receivers[i]);
    });
    Votes senderVotes, receiverVotes;  // of the whole run
    for (std::size_t i = 0; i < iterations.size(); ++i) {
        for (const auto& [k, v] : senders[i])
            for (const auto& [r, n] : v) senderVotes[k][r] += n;
        for (const auto& [k, v] : receivers[i])
            for (const auto& [r, n] : v) receiverVotes[k][r] += n;
    }
    parallelFor(std::size_t(0), iterations.size(), [&](std::size_t i) {
        const auto& [iteration, ops] = iterations[i];
        pairIteration(comm.data(), p2p, ends[i], senderVotes, receiverVotes, parts[i], m.partner);
        if (collectives) groupCollectives(index, *ops, iteration, parts[i], m.group);
    });
    for (IterationMatch& part : parts) {
        const auto offset = std::int32_t(m.groups.size());
        for (CollectiveGroup& g : part.groups) {
            for (std::uint32_t op : g.ops) m.group[op] += offset;
            m.groups.push_back(std::move(g));
        }
        m.pairs.insert(m.pairs.end(), part.pairs.begin(), part.pairs.end());
        m.unmatchedSends.insert(m.unmatchedSends.end(), part.unmatchedSends.begin(), part.unmatchedSends.end());
        m.unmatchedReceives.insert(m.unmatchedReceives.end(), part.unmatchedReceives.begin(),
                                   part.unmatchedReceives.end());
        m.ambiguous += part.ambiguous;
        m.statisticsDiffer += part.statisticsDiffer;
    }
    if (collectives) splitByLearnedPartition(index, m);
    return m;
}

}  // namespace

CommMatch matchCommunication(const DumpIndex& index, const std::vector<CommOp>& comm, const StageMap& stages) {
    return match(index, comm, stages, true);
}

CommMatch matchSendReceive(const DumpIndex& index, const std::vector<CommOp>& comm, const StageMap& stages) {
    return match(index, comm, stages, false);
}

}  // namespace dl

// Send/Receive pairing, per iteration: each op's signature and candidate peers, the statistics
// fingerprints that tie a Receive to its Send (phase 1), then the pairs by channel order and the
// rest (phase 2). Apart from the collectives, which share only the fingerprints.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>

#include "core/analysis/comm_match_detail.h"

namespace dl::comm_detail {

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

namespace {

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

}  // namespace

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

namespace {

bool fitsPair(const End& s, const End& r, const CommOp* base, const std::vector<P2p>& p2p) {
    if (s.rank == r.rank || s.c->backward != r.c->backward) return false;
    if (s.c->explicitPeer >= 0 && std::uint32_t(s.c->explicitPeer) != r.rank) return false;
    if (r.c->explicitPeer >= 0 && std::uint32_t(r.c->explicitPeer) != s.rank) return false;
    if (s.c->tag >= 0 && r.c->tag >= 0 && s.c->tag != r.c->tag) return false;
    return compatible(p2p[std::size_t(s.c - base)].sig, p2p[std::size_t(r.c - base)].sig);
}

}  // namespace

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

namespace {

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
}  // namespace

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

}  // namespace dl::comm_detail

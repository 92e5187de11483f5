#include "core/analysis/comm_matcher.h"

#include <algorithm>
#include <span>
#include <cctype>
#include <cmath>
#include <map>
#include <tuple>

#include "core/analysis/name_memo.h"
#include "core/util/parallel_for.h"
#include "core/util/text.h"

namespace dl {

const char* commKindName(CommKind k) {
    switch (k) {
    case CommKind::None: return "none";
    case CommKind::Send: return "Send";
    case CommKind::Receive: return "Receive";
    case CommKind::AllReduce: return "AllReduce";
    case CommKind::AllGather: return "AllGather";
    case CommKind::ReduceScatter: return "ReduceScatter";
    case CommKind::Broadcast: return "Broadcast";
    case CommKind::AllToAll: return "AllToAll";
    case CommKind::Reduce: return "Reduce";
    }
    return "none";
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
        {"send", CommKind::Send}, {"isend", CommKind::Send},
        {"receive", CommKind::Receive}, {"recv", CommKind::Receive}, {"irecv", CommKind::Receive},
        {"allreduce", CommKind::AllReduce}, {"allgather", CommKind::AllGather},
        {"allgatherv", CommKind::AllGather}, {"allgatherintotensor", CommKind::AllGather},
        {"reducescatter", CommKind::ReduceScatter}, {"reducescatterv", CommKind::ReduceScatter},
        {"reducescattertensor", CommKind::ReduceScatter}, {"broadcast", CommKind::Broadcast},
        {"alltoall", CommKind::AllToAll}, {"alltoallv", CommKind::AllToAll}, {"reduce", CommKind::Reduce},
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
            while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && v < 1000000) v = v * 10 + (s[i++] - '0');
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
    Signature sig;   // a Send's input, a Receive's output
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
    return s.find("Gradients/") != std::string_view::npos || s.find(".backward") != std::string_view::npos ||
           s.find("gradients/") != std::string_view::npos;
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
    std::uint64_t ambiguous = 0;
};

// Pairs the Receives of one iteration with its Sends. `p2p[c - base]` holds each op's signature
// and candidate peers.
void matchIteration(const DumpIndex& index, const std::vector<const CommOp*>& ops, const CommOp* base,
                    const std::vector<P2p>& p2p, IterationMatch& m, std::vector<std::int32_t>& partner) {
    std::map<std::uint32_t, std::vector<const CommOp*>> sends;  // rank -> sends in order
    std::vector<const CommOp*> recvs;
    for (const CommOp* c : ops) {
        if (c->kind == CommKind::Send) sends[index.ops[c->op].rank].push_back(c);
        else if (c->kind == CommKind::Receive) recvs.push_back(c);
    }
    std::map<std::uint32_t, std::vector<bool>> used;
    for (auto& [rank, list] : sends) used[rank].assign(list.size(), false);
    std::vector<std::uint32_t> from;
    for (const CommOp* r : recvs) {
        const std::uint32_t recvRank = index.ops[r->op].rank;
        const P2p& rp = p2p[std::size_t(r - base)];
        from.assign(rp.peers.rank, rp.peers.rank + rp.peers.n);
        if (from.empty())
            for (const auto& [rank, list] : sends) if (rank != recvRank) from.push_back(rank);
        std::pair<std::uint32_t, std::size_t> first{0, 0};  // (sender rank, send position) of the first option
        std::size_t options = 0;
        for (std::uint32_t a : from) {
            auto it = sends.find(a);
            if (it == sends.end()) continue;
            std::vector<bool>& usedOfA = used[a];
            for (std::size_t k = 0; k < it->second.size(); ++k) {
                const CommOp* s = it->second[k];
                if (usedOfA[k]) continue;
                if (s->explicitPeer >= 0 && std::uint32_t(s->explicitPeer) != recvRank) continue;
                if (s->tag >= 0 && r->tag >= 0 && s->tag != r->tag) continue;
                if (s->backward != r->backward) continue;  // forward activations vs backward gradients
                const P2p& sp = p2p[std::size_t(s - base)];
                if (!compatible(sp.sig, rp.sig)) continue;
                if (!sp.peers.empty() && !sp.peers.has(recvRank)) continue;
                if (options++ == 0) first = {a, k};  // FIFO: the first unused send of the channel
                break;
            }
        }
        if (options == 0) { m.unmatchedReceives.push_back(r->op); continue; }
        // Several senders possible: take the lowest rank and flag the pair as a guess.
        const CommOp* s = sends[first.first][first.second];
        used[first.first][first.second] = true;
        const bool confident = options == 1;
        if (!confident) ++m.ambiguous;
        partner[s->op] = std::int32_t(r->op);
        partner[r->op] = std::int32_t(s->op);
        m.pairs.push_back({s->op, r->op, confident});
    }
    for (auto& [rank, list] : sends)
        for (std::size_t k = 0; k < list.size(); ++k)
            if (!used[rank][k]) m.unmatchedSends.push_back(list[k]->op);
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
    std::vector<std::pair<NameKey, std::vector<const CommOp*>>> named;
    std::map<std::tuple<CommKind, std::string, std::uint32_t>, std::size_t> byScope;  // -> index in named
    std::vector<std::uint32_t> ranks;   // of one name group, sorted and unique
    for (const auto& [key, members] : byName) {
        ranks.clear();
        for (const CommOp* c : members) ranks.push_back(index.ops[c->op].rank);
        std::sort(ranks.begin(), ranks.end());
        ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
        if (ranks.size() < 2) continue;
        const CommKind kind = std::get<0>(key);
        if (kind == CommKind::AllReduce || kind == CommKind::AllGather || kind == CommKind::Broadcast) {
            const auto [it, fresh] = byScope.try_emplace({kind, callScope(index.strings.view(std::get<1>(key))), std::get<2>(key)}, named.size());
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
    std::vector<std::uint32_t> grouped;   // ops in a name group, sorted below
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
    std::map<std::pair<CommKind, std::uint32_t>, std::uint32_t> seen;  // (kind, rank) -> count
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
    parallelFor(std::size_t(0), iterations.size(), [&](std::size_t i) {
        const auto& [iteration, ops] = iterations[i];
        matchIteration(index, *ops, comm.data(), p2p, parts[i], m.partner);
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
        m.unmatchedReceives.insert(m.unmatchedReceives.end(), part.unmatchedReceives.begin(), part.unmatchedReceives.end());
        m.ambiguous += part.ambiguous;
    }
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

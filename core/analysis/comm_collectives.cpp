// Collective calls per iteration: which ops of the ranks are one call (by name, by scope across
// stages, by equal results), and the split of an all-NaN call learned from clean iterations.
// Apart from the Send/Receive pairing: it shares only the statistics fingerprints.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

#include "core/analysis/comm_match_detail.h"

namespace dl::comm_detail {

namespace {

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

}  // namespace

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

}  // namespace dl::comm_detail

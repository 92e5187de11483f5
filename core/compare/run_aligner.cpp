#include "core/compare/run_aligner.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "core/util/text.h"
#include "core/util/text_lines.h"

namespace dl {

namespace {

constexpr std::size_t kDpCellLimit = 4'000'000;  // gaps larger than this are aligned greedily
constexpr std::size_t kGreedyWindow = 256;

struct Group {
    std::uint32_t rank, iteration, graph;
    std::uint32_t begin, end;  // op index range
    auto key() const { return std::tie(rank, iteration, graph); }
};

std::vector<Group> groupsOf(const DumpIndex& idx) {
    std::vector<Group> out;
    for (std::uint32_t i = 0; i < idx.ops.size();) {
        const OpRecord& o = idx.ops[i];
        std::uint32_t j = i + 1;
        while (j < idx.ops.size() && idx.ops[j].rank == o.rank && idx.ops[j].iteration == o.iteration &&
               idx.ops[j].graph == o.graph)
            ++j;
        out.push_back({o.rank, o.iteration, o.graph, i, j});
        i = j;
    }
    return out;
}

// Shapes of an op's tensors folded into one number: a cheap tie-break between candidates.
std::uint64_t shapeHash(const DumpIndex& idx, const OpRecord& o) {
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount && t < idx.tensors.size(); ++t) {
        const TensorRecord& r = idx.tensors[t];
        mix(std::uint64_t(r.io) << 32 | r.slot);
        for (std::uint32_t d = 0; d < r.ndim; ++d) mix(std::uint64_t(idx.dims[r.shapeOffset + d]));
    }
    return h;
}

// Per-op alignment features of one group side.
struct Side {
    const DumpIndex& idx;
    std::vector<std::uint32_t> ops;  // op indices still to align
    std::vector<int> key;            // interned (type, stripped scope/name)
    std::vector<std::uint64_t> shapes;
};

class GroupAligner {
public:
    GroupAligner(Side& a, Side& b, std::vector<OpPair>& out) : m_a(a), m_b(b), m_out(out) {}

    void run() {
        const std::size_t n = m_a.ops.size();
        std::vector<std::pair<std::size_t, std::size_t>> anchors = patienceAnchors();
        std::size_t i0 = 0, j0 = 0;
        for (auto [i, j] : anchors) {
            alignGap(i0, i, j0, j);
            emit(i, j);
            i0 = i + 1;
            j0 = j + 1;
        }
        alignGap(i0, n, j0, m_b.ops.size());
    }

private:
    bool same(std::size_t i, std::size_t j) const { return m_a.key[i] == m_b.key[j]; }
    bool sameName(std::size_t i, std::size_t j) const {
        return m_a.idx.strings.view(m_a.idx.ops[m_a.ops[i]].name) == m_b.idx.strings.view(m_b.idx.ops[m_b.ops[j]].name);
    }
    void emit(std::size_t i, std::size_t j) {
        m_out.push_back({m_a.ops[i], m_b.ops[j], sameName(i, j) ? MatchKind::Exact : MatchKind::Tolerant});
    }

    // Signatures occurring once on each side, kept where they agree in order (longest
    // increasing subsequence): cheap, reliable split points for the costly alignment.
    std::vector<std::pair<std::size_t, std::size_t>> patienceAnchors() const {
        std::unordered_map<int, std::pair<int, int>> countA, posB;  // key -> (count, position)
        for (std::size_t i = 0; i < m_a.key.size(); ++i) {
            auto& c = countA[m_a.key[i]];
            ++c.first;
            c.second = int(i);
        }
        for (std::size_t j = 0; j < m_b.key.size(); ++j) {
            auto& c = posB[m_b.key[j]];
            ++c.first;
            c.second = int(j);
        }
        std::vector<std::pair<std::size_t, std::size_t>> cand;
        for (std::size_t i = 0; i < m_a.key.size(); ++i) {
            auto ca = countA.find(m_a.key[i]);
            auto cb = posB.find(m_a.key[i]);
            if (ca->second.first == 1 && cb != posB.end() && cb->second.first == 1)
                cand.push_back({i, std::size_t(cb->second.second)});
        }
        // LIS on the B positions (A positions already increase).
        std::vector<std::size_t> tails, tailIdx, prev(cand.size(), SIZE_MAX);
        for (std::size_t k = 0; k < cand.size(); ++k) {
            auto it = std::lower_bound(tails.begin(), tails.end(), cand[k].second);
            const std::size_t pos = std::size_t(it - tails.begin());
            if (pos > 0) prev[k] = tailIdx[pos - 1];
            if (it == tails.end()) {
                tails.push_back(cand[k].second);
                tailIdx.push_back(k);
            } else {
                *it = cand[k].second;
                tailIdx[pos] = k;
            }
        }
        std::vector<std::pair<std::size_t, std::size_t>> out;
        for (std::size_t k = tailIdx.empty() ? SIZE_MAX : tailIdx.back(); k != SIZE_MAX; k = prev[k])
            out.push_back(cand[k]);
        std::reverse(out.begin(), out.end());
        return out;
    }

    void alignGap(std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1) {
        if (i0 >= i1 || j0 >= j1) return;
        const std::size_t n = i1 - i0, m = j1 - j0;
        if ((n + 1) * (m + 1) <= kDpCellLimit)
            dpAlign(i0, i1, j0, j1);
        else
            greedyAlign(i0, i1, j0, j1);
    }

    // Weighted LCS: the number of pairs first, then pairs with equal shapes, then equal names.
    void dpAlign(std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1) {
        const std::size_t n = i1 - i0, m = j1 - j0;
        const std::int64_t big = 3 * std::int64_t(std::min(n, m)) + 1;
        std::vector<std::int64_t> dp((n + 1) * (m + 1), 0);
        auto at = [&](std::size_t i, std::size_t j) -> std::int64_t& { return dp[i * (m + 1) + j]; };
        auto score = [&](std::size_t i, std::size_t j) -> std::int64_t {
            if (!same(i0 + i, j0 + j)) return -1;
            return big + 2 * std::int64_t(m_a.shapes[i0 + i] == m_b.shapes[j0 + j]) + sameName(i0 + i, j0 + j);
        };
        for (std::size_t i = n; i-- > 0;)
            for (std::size_t j = m; j-- > 0;) {
                std::int64_t best = std::max(at(i + 1, j), at(i, j + 1));
                const std::int64_t s = score(i, j);
                if (s >= 0) best = std::max(best, s + at(i + 1, j + 1));
                at(i, j) = best;
            }
        for (std::size_t i = 0, j = 0; i < n && j < m;) {
            const std::int64_t s = score(i, j);
            if (s >= 0 && at(i, j) == s + at(i + 1, j + 1)) {
                emit(i0 + i, j0 + j);
                ++i, ++j;
            } else if (at(i, j) == at(i + 1, j)) {
                ++i;
            } else {
                ++j;
            }
        }
    }

    // Large gaps without unique signatures: walk both sides, resynchronising within a window.
    void greedyAlign(std::size_t i, std::size_t i1, std::size_t j, std::size_t j1) {
        while (i < i1 && j < j1) {
            if (same(i, j)) {
                emit(i++, j++);
                continue;
            }
            std::size_t skipB = SIZE_MAX, skipA = SIZE_MAX;
            for (std::size_t k = 1; k < kGreedyWindow && j + k < j1; ++k)
                if (same(i, j + k)) {
                    skipB = k;
                    break;
                }
            for (std::size_t k = 1; k < kGreedyWindow && i + k < i1; ++k)
                if (same(i + k, j)) {
                    skipA = k;
                    break;
                }
            if (skipB == SIZE_MAX && skipA == SIZE_MAX) {
                ++i;
                ++j;
            } else if (skipB <= skipA)
                j += skipB;
            else
                i += skipA;
        }
    }

    Side& m_a;
    Side& m_b;
    std::vector<OpPair>& m_out;
};

constexpr StrId kNoStr = 0xffffffffu;  // StringPool::find's "absent"

struct PinIds {
    StrId a = kNoStr, b = kNoStr;
};

bool opNamed(const OpRecord& o, StrId id) { return id != kNoStr && id != 0 && (o.name == id || o.scope == id); }

void alignGroup(const DumpIndex& a, const Group& ga, const DumpIndex& b, const Group& gb,
                const std::vector<PinIds>& pins, std::unordered_map<std::string, int>& keys, RunAlignment& out) {
    std::vector<OpPair> pairs;
    std::vector<char> usedA(ga.end - ga.begin, 0), usedB(gb.end - gb.begin, 0);
    for (const PinIds& p : pins) {
        std::uint32_t ia = UINT32_MAX, ib = UINT32_MAX;
        for (std::uint32_t i = ga.begin; i < ga.end && ia == UINT32_MAX; ++i)
            if (!usedA[i - ga.begin] && opNamed(a.ops[i], p.a)) ia = i;
        for (std::uint32_t j = gb.begin; j < gb.end && ib == UINT32_MAX; ++j)
            if (!usedB[j - gb.begin] && opNamed(b.ops[j], p.b)) ib = j;
        if (ia == UINT32_MAX || ib == UINT32_MAX) continue;
        usedA[ia - ga.begin] = usedB[ib - gb.begin] = 1;
        pairs.push_back({ia, ib, MatchKind::Pinned});
    }
    Side sa{a, {}, {}, {}}, sb{b, {}, {}, {}};
    for (std::uint32_t i = ga.begin; i < ga.end; ++i)
        if (!usedA[i - ga.begin]) sa.ops.push_back(i);
    for (std::uint32_t j = gb.begin; j < gb.end; ++j)
        if (!usedB[j - gb.begin]) sb.ops.push_back(j);

    bool identical = sa.ops.size() == sb.ops.size();
    for (std::size_t k = 0; identical && k < sa.ops.size(); ++k) {
        const OpRecord &oa = a.ops[sa.ops[k]], &ob = b.ops[sb.ops[k]];
        identical =
            a.strings.view(oa.name) == b.strings.view(ob.name) && a.strings.view(oa.type) == b.strings.view(ob.type);
    }
    if (identical) {
        for (std::size_t k = 0; k < sa.ops.size(); ++k) pairs.push_back({sa.ops[k], sb.ops[k], MatchKind::Exact});
    } else {
        // Scopes only help when both sides know them for every op; otherwise compare names.
        bool scopes = true;
        for (std::uint32_t i : sa.ops) scopes &= a.ops[i].scope != 0;
        for (std::uint32_t j : sb.ops) scopes &= b.ops[j].scope != 0;
        auto fill = [&](Side& s) {
            for (std::uint32_t i : s.ops) {
                const OpRecord& o = s.idx.ops[i];
                std::string k(s.idx.strings.view(o.type));
                k += '\x1f';
                k += stripOpNumbers(s.idx.strings.view(scopes ? o.scope : o.name));
                s.key.push_back(keys.try_emplace(std::move(k), int(keys.size())).first->second);
                s.shapes.push_back(shapeHash(s.idx, o));
            }
        };
        fill(sa);
        fill(sb);
        GroupAligner(sa, sb, pairs).run();
    }
    std::sort(pairs.begin(), pairs.end(), [](const OpPair& x, const OpPair& y) { return x.a < y.a; });
    std::vector<char> matchedA(ga.end - ga.begin, 0), matchedB(gb.end - gb.begin, 0);
    for (const OpPair& p : pairs) {
        matchedA[p.a - ga.begin] = matchedB[p.b - gb.begin] = 1;
        out.ops.push_back(p);
    }
    for (std::uint32_t i = ga.begin; i < ga.end; ++i)
        if (!matchedA[i - ga.begin]) out.onlyOpsA.push_back(i);
    for (std::uint32_t j = gb.begin; j < gb.end; ++j)
        if (!matchedB[j - gb.begin]) out.onlyOpsB.push_back(j);
}

// Tensors of two ops whose writer named them (msprobe) pair by name, as msprobe's compare does:
// "output.1" meets "output.1" even when the runs' lists hold other nulls or non-tensors.
void pairByName(const DumpIndex& a, const DumpIndex& b, const OpRecord& oa, const OpRecord& ob, std::uint32_t k,
                RunAlignment& out, std::size_t& paired) {
    std::vector<std::pair<std::string, std::uint32_t>> names;
    names.reserve(ob.tensorCount);
    for (std::uint32_t j = ob.firstTensor; j < ob.firstTensor + ob.tensorCount; ++j)
        names.emplace_back(b.tensorLabel(b.tensors[j]), j);
    std::sort(names.begin(), names.end());
    for (std::uint32_t i = oa.firstTensor; i < oa.firstTensor + oa.tensorCount; ++i) {
        const std::string label = a.tensorLabel(a.tensors[i]);
        const auto it = std::lower_bound(names.begin(), names.end(), std::make_pair(label, std::uint32_t(0)));
        if (it == names.end() || it->first != label) continue;
        out.tensors.push_back({i, it->second, k});
        ++paired;
    }
}

std::size_t tensorsIn(const DumpIndex& idx, const std::vector<Group>& groups) {
    std::size_t n = 0;
    for (const Group& g : groups)
        for (std::uint32_t i = g.begin; i < g.end; ++i) n += idx.ops[i].tensorCount;
    return n;
}

std::string listOf(const std::set<std::uint32_t>& s) {
    std::string out;
    std::size_t k = 0;
    for (std::uint32_t v : s) {
        if (k++ == 8) return out + ", ...";
        out += (out.empty() ? "" : ", ") + std::to_string(v);
    }
    return out;
}

// Renumbers run B's groups onto run A's iterations (and drops the ones not asked for); says so.
void pairIterations(std::vector<Group>& ga, std::vector<Group>& gb, const IterationChoice& choice,
                    std::vector<std::string>& warnings) {
    std::set<std::uint32_t> ia, ib;
    for (const Group& g : ga) ia.insert(g.iteration);
    for (const Group& g : gb) ib.insert(g.iteration);
    std::map<std::uint32_t, std::uint32_t> bToA;
    if (choice.a || choice.b) {
        const std::uint32_t na = choice.a ? *choice.a : *choice.b, nb = choice.b ? *choice.b : *choice.a;
        if (!ia.count(na))
            warnings.push_back("run A has no iteration " + std::to_string(na) + " (it has " + listOf(ia) + ")");
        if (!ib.count(nb))
            warnings.push_back("run B has no iteration " + std::to_string(nb) + " (it has " + listOf(ib) + ")");
        std::erase_if(ga, [&](const Group& g) { return g.iteration != na; });
        std::erase_if(gb, [&](const Group& g) { return g.iteration != nb; });
        bToA[nb] = na;
        if (na != nb)
            warnings.push_back("comparing iteration " + std::to_string(na) + " of run A with iteration " +
                               std::to_string(nb) + " of run B: ops matched by name across the iterations");
    } else {
        bool shared = false;
        for (std::uint32_t v : ia) shared |= ib.count(v) != 0;
        if (shared || ia.empty() || ib.empty()) return;
        auto x = ia.begin();
        auto y = ib.begin();
        std::string pairs;
        for (; x != ia.end() && y != ib.end(); ++x, ++y) {
            bToA[*y] = *x;
            if (pairs.size() < 200)
                pairs += (pairs.empty() ? "" : ", ") + std::to_string(*x) + " with " + std::to_string(*y);
        }
        warnings.push_back("the runs share no iteration (A: " + listOf(ia) + "; B: " + listOf(ib) +
                           "): ops matched by name across iterations, A's with B's in order (" + pairs + ")");
    }
    for (Group& g : gb) {
        const auto it = bToA.find(g.iteration);
        g.iteration = it == bToA.end() ? std::numeric_limits<std::uint32_t>::max() : it->second;  // unpaired: unmatched
    }
    std::stable_sort(gb.begin(), gb.end(), [](const Group& x, const Group& y) { return x.key() < y.key(); });
}

// Pairs tensors of each matched op by name where both writers named them, else by (io, slot);
// both runs are sorted that way.
void pairTensors(const DumpIndex& a, const DumpIndex& b, RunAlignment& out, std::size_t totalA, std::size_t totalB) {
    std::size_t pairedA = 0, pairedB = 0;
    for (std::uint32_t k = 0; k < out.ops.size(); ++k) {
        const OpRecord &oa = a.ops[out.ops[k].a], &ob = b.ops[out.ops[k].b];
        // Same names in the same order (the usual case): the slot walk below pairs them alike.
        if (oa.tensorNames && ob.tensorNames && a.strings.view(oa.tensorNames) != b.strings.view(ob.tensorNames)) {
            std::size_t paired = 0;
            pairByName(a, b, oa, ob, k, out, paired);
            pairedA += paired;
            pairedB += paired;
            continue;
        }
        std::uint32_t i = oa.firstTensor, j = ob.firstTensor;
        const std::uint32_t ie = oa.firstTensor + oa.tensorCount, je = ob.firstTensor + ob.tensorCount;
        while (i < ie && j < je) {
            const auto ka = std::make_pair(int(a.tensors[i].io), a.tensors[i].slot);
            const auto kb = std::make_pair(int(b.tensors[j].io), b.tensors[j].slot);
            if (ka == kb) {
                out.tensors.push_back({i++, j++, k});
                ++pairedA, ++pairedB;
            } else if (ka < kb) {
                ++i;
            } else {
                ++j;
            }
        }
    }
    out.onlyTensorsA = totalA - pairedA;
    out.onlyTensorsB = totalB - pairedB;
}

// A mapping cell without blanks and the quotes a spreadsheet adds.
std::string trimCell(std::string_view s) { return std::string(trim(s, " \t\r\"")); }

}  // namespace

const char* matchKindName(MatchKind k) {
    switch (k) {
        case MatchKind::Exact:
            return "exact";
        case MatchKind::Tolerant:
            return "tolerant";
        case MatchKind::Pinned:
            return "pinned";
    }
    return "?";
}

std::string stripOpNumbers(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    for (std::size_t i = 0; i < name.size();) {
        if (name.compare(i, 3, "-op") == 0 && i + 3 < name.size() &&
            std::isdigit(static_cast<unsigned char>(name[i + 3]))) {
            i += 3;
            while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
            continue;
        }
        out += name[i++];
    }
    return out;
}

bool parseMappingText(std::string_view text, std::vector<OpNamePin>& out, std::string& error) {
    bool ok = true;
    forEachLine(text, [&](std::string_view raw, std::uint32_t lineNo) {
        const std::string line = trimCell(raw);
        if (!ok || line.empty() || line[0] == '#') return;
        const std::size_t comma = line.find(',');
        if (comma == std::string::npos || line.find(',', comma + 1) != std::string::npos) {
            error = "mapping line " + std::to_string(lineNo) +
                ": expected exactly one comma in \"name_a,name_b\", got \"" + line.substr(0, 120) + "\"";
            ok = false;
            return;
        }
        OpNamePin p{trimCell(std::string_view(line).substr(0, comma)),
                    trimCell(std::string_view(line).substr(comma + 1))};
        if (p.a.empty() || p.b.empty()) {
            error = "mapping line " + std::to_string(lineNo) + ": an op name is empty";
            ok = false;
            return;
        }
        if (out.empty() && p.a == "name_a" && p.b == "name_b") return;  // header
        out.push_back(std::move(p));
    });
    return ok;
}

bool readMappingFile(const std::string& path, std::vector<OpNamePin>& out, std::string& error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "cannot open mapping file " + path;
        return false;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (!parseMappingText(ss.str(), out, error)) {
        error = path + ": " + error;
        return false;
    }
    return true;
}

RunAlignment alignRuns(const DumpIndex& a, const DumpIndex& b, const std::vector<OpNamePin>& pins,
                       const IterationChoice& iterations) {
    RunAlignment out;
    std::vector<PinIds> pinIds;
    for (const OpNamePin& p : pins) {
        PinIds id{a.strings.find(p.a), b.strings.find(p.b)};
        if (id.a == kNoStr) out.warnings.push_back("mapping: run A has no op named \"" + p.a + "\"");
        if (id.b == kNoStr) out.warnings.push_back("mapping: run B has no op named \"" + p.b + "\"");
        if (id.a != kNoStr && id.b != kNoStr) pinIds.push_back(id);
    }
    std::vector<Group> ga = groupsOf(a), gb = groupsOf(b);
    pairIterations(ga, gb, iterations, out.warnings);
    std::unordered_map<std::string, int> keys;
    std::size_t i = 0, j = 0;
    while (i < ga.size() || j < gb.size()) {
        if (j == gb.size() || (i < ga.size() && ga[i].key() < gb[j].key())) {
            for (std::uint32_t k = ga[i].begin; k < ga[i].end; ++k) out.onlyOpsA.push_back(k);
            ++i;
        } else if (i == ga.size() || gb[j].key() < ga[i].key()) {
            for (std::uint32_t k = gb[j].begin; k < gb[j].end; ++k) out.onlyOpsB.push_back(k);
            ++j;
        } else {
            alignGroup(a, ga[i], b, gb[j], pinIds, keys, out);
            ++i, ++j;
        }
    }
    std::sort(out.onlyOpsA.begin(), out.onlyOpsA.end());
    std::sort(out.onlyOpsB.begin(), out.onlyOpsB.end());
    for (const OpPair& p : out.ops) {
        if (p.kind == MatchKind::Exact)
            ++out.exactOps;
        else if (p.kind == MatchKind::Tolerant)
            ++out.tolerantOps;
        else
            ++out.pinnedOps;
    }
    pairTensors(a, b, out, tensorsIn(a, ga), tensorsIn(b, gb));
    return out;
}

}  // namespace dl

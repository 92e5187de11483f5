#include "core/analysis/stage_map.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <queue>
#include <set>

#include <nlohmann/json.hpp>

#include "core/analysis/name_memo.h"
#include "core/formats/mindspore/execution_order.h"
#include "core/util/read_file.h"
#include "core/util/text.h"

namespace dl {

namespace {

bool parseNumber(std::string_view s, long& out) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    if (s.empty()) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size() && out >= 0 && out < 1000000;
}

void finish(StageMap& m) {
    std::set<int> distinct;
    for (const auto& [r, s] : m.stageOfRank) distinct.insert(s);
    m.stageCount = distinct.empty() ? 0 : *distinct.rbegin() + 1;
}

std::set<std::uint32_t> ranksOf(const DumpIndex& index) {
    std::set<std::uint32_t> ranks;
    for (const RankInfo& r : index.ranks) ranks.insert(r.rank);
    // Ops come in runs of one rank: a set insertion per run, not per op.
    for (std::size_t i = 0; i < index.ops.size(); ++i)
        if (i == 0 || index.ops[i].rank != index.ops[i - 1].rank) ranks.insert(index.ops[i].rank);
    return ranks;
}

// A rank table with explicit per-device stage fields (some launchers write them).
bool fromRankTable(const DumpIndex& index, StageMap& m) {
    std::vector<std::string> paths = {index.root + "/hccl.json", index.root + "/.metadata/hccl.json"};
    for (const RankInfo& r : index.ranks) paths.push_back(index.root + "/" + r.folder + "/.dump_metadata/hccl.json");
    for (const std::string& p : paths) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(p, ec) || std::filesystem::file_size(p, ec) > (16u << 20)) continue;
        std::ifstream in(p);
        const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
        if (j.is_discarded() || !j.contains("server_list") || !j["server_list"].is_array()) continue;
        for (const auto& server : j["server_list"]) {
            if (!server.is_object() || !server.contains("device") || !server["device"].is_array()) continue;
            for (const auto& d : server["device"]) {
                long rank = -1, stage = -1;
                auto num = [](const nlohmann::json& v, long& out) {
                    if (v.is_number_integer()) {
                        out = v.get<long>();
                        return out >= 0;
                    }
                    return v.is_string() && parseNumber(v.get<std::string>(), out);
                };
                if (!d.is_object() || !d.contains("rank_id") || !num(d["rank_id"], rank)) continue;
                for (const char* key : {"stage", "stage_id", "pipeline_stage"})
                    if (d.contains(key) && num(d[key], stage)) break;
                if (stage >= 0) m.stageOfRank[std::uint32_t(rank)] = int(stage);
            }
        }
        if (!m.stageOfRank.empty()) {
            m.source = "hccl.json";
            m.confident = true;
            return true;
        }
    }
    return false;
}

// The sr_tag a MindSpore pipeline Send/Receive carries in its scope ("_pipeline_send_sr_tag_3"), -1 none.
int srTagOf(std::string_view lowerName) {
    const std::size_t at = lowerName.find("sr_tag");
    if (at == std::string_view::npos) return -1;
    std::size_t i = at + 6;
    while (i < lowerName.size() && (lowerName[i] == '_' || lowerName[i] == '-' || lowerName[i] == '=')) ++i;
    long v = 0;
    const auto [p, ec] = std::from_chars(lowerName.data() + i, lowerName.data() + lowerName.size(), v);
    return ec == std::errc() && p != lowerName.data() + i && v < 1000000 ? int(v) : -1;
}

// Layers ranks by the Send/Receive kernels their execution order files list (rank folder's
// execution_order/ms_execution_order_graph_*.csv): an overflow-only or partial dump holds no
// tensor of them, but every rank's order file names them with their sr_tag. A forward Send of
// tag t on rank a and a forward Receive of tag t on rank b put b one stage after a (backward
// traffic, under Gradients/, the other way round when the order files hold no forward pair).
// Every rank of the dump must be placed, and the layering must be acyclic.
bool fromExecutionOrder(const DumpIndex& index, const std::set<std::uint32_t>& ranks, StageMap& m) {
    struct Tags {
        std::set<int> send, recv;
    };
    std::map<std::uint32_t, Tags> fwd, bwd;
    for (const RankInfo& r : index.ranks) {
        std::error_code ec;
        // A merged or MPI index keeps each rank's own dump root.
        const std::filesystem::path dir =
            std::filesystem::path(r.dataRoot.empty() ? index.root : r.dataRoot) / r.folder / "execution_order";
        if (!std::filesystem::is_directory(dir, ec)) continue;
        // increment(ec), not a range-for: a folder removed or made unreadable while it is listed
        // must end the listing, not throw out of the analysis.
        for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            const std::filesystem::directory_entry& e = *it;
            const std::string file = e.path().filename().string();
            if (!file.starts_with("ms_execution_order_graph_") || !file.ends_with(".csv")) continue;
            std::string text, error;
            std::vector<std::string> names;
            if (!readFileText(e.path().string(), text, error, 1ull << 30) ||
                !parseExecutionOrderCsv(text, names, error))
                continue;
            for (const std::string& full : names) {
                const std::string_view last = std::string_view(full).substr(full.rfind('/') + 1);
                const std::string_view head = last.substr(0, last.find("-op"));
                const bool send = head == "Send", recv = head == "Receive";
                if (!send && !recv) continue;
                const int tag = srTagOf(lower(full));
                if (tag < 0) continue;
                Tags& t = (isBackwardName(full) ? bwd : fwd)[r.rank];
                (send ? t.send : t.recv).insert(tag);
            }
        }
    }
    const bool forward = !fwd.empty();
    std::map<std::uint32_t, Tags>& tags = forward ? fwd : bwd;
    if (tags.empty()) return false;
    // Edges earlier stage -> later stage.
    std::map<std::uint32_t, std::set<std::uint32_t>> next;
    for (const auto& [a, ta] : tags)
        for (const auto& [b, tb] : tags) {
            if (a == b) continue;
            const std::set<int>& out = forward ? ta.send : tb.send;  // backward: b sends gradients to a
            const std::set<int>& in = forward ? tb.recv : ta.recv;
            if (std::any_of(out.begin(), out.end(), [&](int t) { return in.count(t) > 0; })) next[a].insert(b);
        }
    std::map<std::uint32_t, int> stage;
    for (std::uint32_t r : ranks) stage[r] = 0;
    for (std::size_t round = 0; round <= ranks.size(); ++round) {
        bool changed = false;
        for (const auto& [a, bs] : next)
            for (std::uint32_t b : bs)
                if (stage.count(a) && stage.count(b) && stage[b] < stage[a] + 1) {
                    stage[b] = stage[a] + 1;
                    changed = true;
                }
        if (changed) continue;
        // Each rank must take part in the pipeline (a rank of no Send/Receive is not placed).
        for (std::uint32_t r : ranks)
            if (!tags.count(r)) return false;
        m.stageOfRank = stage;
        m.source = "send/receive topology (execution order files)";
        m.confident = true;
        return true;
    }
    return false;  // a cycle
}

// Layers ranks along Send->Receive edges. Directed (forward traffic) when the dump tells
// forward from backward; otherwise each pipeline is a path oriented by the loss holder.
bool fromTopology(const DumpIndex& index, const std::vector<CommOp>& comm, const std::set<std::uint32_t>& lossRanks,
                  StageMap& m) {
    const CommMatch match = matchSendReceive(index, comm, StageMap{});
    if (match.pairs.empty()) return false;
    const bool directionKnown = std::any_of(comm.begin(), comm.end(), [](const CommOp& c) { return c.backward; });
    std::map<std::uint32_t, std::set<std::uint32_t>> fwd, undirected;
    // A guessed pair places ranks only where the sure ones leave a rank out: the map is then
    // said to be a guess.
    std::set<std::uint32_t> placed;
    for (const CommPair& p : match.pairs)
        if (p.confident) {
            placed.insert(index.ops[p.send].rank);
            placed.insert(index.ops[p.recv].rank);
        }
    bool guessed = false;
    for (const CommPair& p : match.pairs) {
        if (!p.confident) {
            if (placed.count(index.ops[p.send].rank) && placed.count(index.ops[p.recv].rank)) continue;
            guessed = true;
        }
        const std::uint32_t a = index.ops[p.send].rank, b = index.ops[p.recv].rank;
        if (a == b) continue;
        undirected[a].insert(b);
        undirected[b].insert(a);
        const bool backward = isBackwardName(index.strings.view(index.ops[p.send].name)) ||
            isBackwardName(index.strings.view(index.ops[p.send].scope));
        if (directionKnown && !backward) fwd[a].insert(b);
    }
    if (directionKnown && !fwd.empty()) {
        // Longest path from the sources; more relaxations than ranks means a cycle. The
        // interleaved (virtual-pipeline) schedule closes the ring: the last stage, which holds
        // the loss, sends its chunk's activations back to stage 0. That edge goes.
        for (int attempt = 0; attempt < 2; ++attempt) {
            if (attempt == 1) {
                if (lossRanks.empty()) break;
                for (auto& [a, bs] : fwd)
                    if (lossRanks.count(a)) bs.clear();
            }
            m.stageOfRank.clear();
            for (const auto& [a, bs] : undirected) m.stageOfRank[a] = 0;
            for (std::size_t round = 0; round <= undirected.size(); ++round) {
                bool changed = false;
                for (const auto& [a, bs] : fwd)
                    for (std::uint32_t b : bs)
                        if (m.stageOfRank[b] < m.stageOfRank[a] + 1) {
                            m.stageOfRank[b] = m.stageOfRank[a] + 1;
                            changed = true;
                        }
                if (!changed) {
                    m.source = attempt
                        ? "send/receive topology (interleaved: the loss stage's wrap-around Send left out)"
                        : "send/receive topology";
                    m.confident = !guessed;
                    return true;
                }
            }
        }
        m.stageOfRank.clear();
        return false;
    }
    // Undirected: walk each path from an end, the loss holder's end being the last stage.
    std::set<std::uint32_t> seen;
    for (const auto& [start, ns] : undirected) {
        if (seen.count(start)) continue;
        std::vector<std::uint32_t> comp;
        std::queue<std::uint32_t> q;
        q.push(start);
        seen.insert(start);
        while (!q.empty()) {
            const std::uint32_t r = q.front();
            q.pop();
            comp.push_back(r);
            for (std::uint32_t n : undirected[r])
                if (seen.insert(n).second) q.push(n);
        }
        std::vector<std::uint32_t> ends;
        for (std::uint32_t r : comp)
            if (undirected[r].size() <= 1) ends.push_back(r);
        if (ends.size() != 2) return false;  // not a simple pipeline
        std::uint32_t first = std::min(ends[0], ends[1]);
        if (lossRanks.count(first)) first = std::max(ends[0], ends[1]);
        std::map<std::uint32_t, int> dist{{first, 0}};
        q.push(first);
        while (!q.empty()) {
            const std::uint32_t r = q.front();
            q.pop();
            for (std::uint32_t n : undirected[r])
                if (!dist.count(n)) {
                    dist[n] = dist[r] + 1;
                    q.push(n);
                }
        }
        for (const auto& [r, d] : dist) m.stageOfRank[r] = d;
    }
    m.source =
        lossRanks.empty() ? "send/receive topology (orientation guessed: lowest rank first)" : "send/receive topology";
    m.confident = !lossRanks.empty();
    return true;
}

}  // namespace

bool parseStageSpec(std::string_view spec, StageMap& out, std::string& error) {
    out = StageMap{};
    std::size_t pos = 0;
    while (pos <= spec.size()) {
        const std::size_t comma = std::min(spec.find(',', pos), spec.size());
        const std::string_view item = spec.substr(pos, comma - pos);
        pos = comma + 1;
        if (item.find_first_not_of(' ') == std::string_view::npos) {
            if (comma == spec.size()) break;
            error = "empty entry in stage spec '" + std::string(spec) + "'";
            return false;
        }
        const std::size_t colon = item.find(':');
        const std::size_t dash = item.substr(0, colon).find('-');
        long lo = 0, hi = 0, stage = 0;
        const bool ok = colon != std::string_view::npos && parseNumber(item.substr(colon + 1), stage) &&
            (dash == std::string_view::npos
                 ? parseNumber(item.substr(0, colon), lo) && (hi = lo, true)
                 : parseNumber(item.substr(0, dash), lo) && parseNumber(item.substr(dash + 1, colon - dash - 1), hi));
        if (!ok || hi < lo || hi - lo > 65536) {
            error = "bad stage spec entry '" + std::string(item) + "' (expected RANK:STAGE or FIRST-LAST:STAGE)";
            return false;
        }
        for (long r = lo; r <= hi; ++r) {
            if (!out.stageOfRank.emplace(std::uint32_t(r), int(stage)).second) {
                error = "rank " + std::to_string(r) + " appears twice in stage spec";
                return false;
            }
        }
    }
    if (out.stageOfRank.empty()) {
        error = "empty stage spec";
        return false;
    }
    out.source = "--stages";
    out.confident = true;
    finish(out);
    return true;
}

namespace {

bool isLossType(std::string_view type) {
    const std::string t = lower(type);
    return t.find("crossentropy") != std::string::npos || t.find("nllloss") != std::string::npos;
}

// Neither word holds the '|' that used to join name and scope, so testing each alone is the same.
bool isHeadName(std::string_view nameOrScope) {
    const std::string w = lower(nameOrScope);
    return w.find("normhead") != std::string::npos || w.find("lm_head") != std::string::npos;
}

}  // namespace

// Each string is tested once; a rank's remaining ops are skipped once it holds one.
std::set<std::uint32_t> lossOrHeadRanks(const DumpIndex& index) {
    NameMemo<bool> lossType(index.strings), headName(index.strings);
    std::set<std::uint32_t> out;
    bool found = false;
    std::uint32_t lastFound = 0;
    for (const OpRecord& op : index.ops) {
        if (found && op.rank == lastFound) continue;
        if (lossType.get(op.type, isLossType) || headName.get(op.name, isHeadName) ||
            headName.get(op.scope, isHeadName)) {
            out.insert(op.rank);
            found = true;
            lastFound = op.rank;
        }
    }
    return out;
}

namespace {
bool isOptimizerScope(std::string_view name) {
    const std::string w = lower(name);
    return w.find("optimizer") != std::string::npos || w.find("grad_reducer") != std::string::npos ||
        w.find("gradreducer") != std::string::npos || w.find("clip_grad") != std::string::npos;
}
std::uint32_t findRoot(std::map<std::uint32_t, std::uint32_t>& parent, std::uint32_t r) {
    while (parent[r] != r) r = parent[r] = parent[parent[r]];
    return r;
}
}  // namespace

void describeParallelism(const DumpIndex& index, const CommMatch& match, StageMap& m) {
    // TP groups: the member sets of collectives inside the model (not the optimizer's gradient
    // reduction or global norm) whose members all sit in one stage.
    std::map<std::vector<std::uint32_t>, std::size_t> sets;
    NameMemo<bool> optimizer(index.strings);
    for (const CollectiveGroup& g : match.groups) {
        if (g.ops.size() < 2) continue;
        if (optimizer.get(index.ops[g.ops.front()].name, isOptimizerScope) ||
            optimizer.get(index.ops[g.ops.front()].scope, isOptimizerScope))
            continue;
        std::vector<std::uint32_t> ranks;
        int stage = -2;
        bool oneStage = true;
        for (std::uint32_t op : g.ops) {
            const std::uint32_t r = index.ops[op].rank;
            ranks.push_back(r);
            const int s = m.stageOf(r);
            if (stage == -2) stage = s;
            oneStage = oneStage && s == stage && s >= 0;
        }
        std::sort(ranks.begin(), ranks.end());
        ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
        if (oneStage && ranks.size() > 1) ++sets[ranks];
    }
    // Most frequent sets first, each rank in one group.
    std::vector<std::pair<std::size_t, std::vector<std::uint32_t>>> bySize;
    for (const auto& [ranks, n] : sets) bySize.push_back({n, ranks});
    std::stable_sort(bySize.begin(), bySize.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::set<std::uint32_t> taken;
    m.tpGroups.clear();
    for (const auto& [n, ranks] : bySize) {
        if (std::any_of(ranks.begin(), ranks.end(), [&](std::uint32_t r) { return taken.count(r) > 0; })) continue;
        taken.insert(ranks.begin(), ranks.end());
        m.tpGroups.push_back(ranks);
    }
    std::sort(m.tpGroups.begin(), m.tpGroups.end());
    // Data-parallel replicas: ranks joined by Send/Receive pairs and TP groups are one pipeline.
    std::map<std::uint32_t, std::uint32_t> parent;
    for (const auto& [r, s] : m.stageOfRank) parent[r] = r;
    auto join = [&](std::uint32_t a, std::uint32_t b) {
        if (!parent.count(a)) parent[a] = a;
        if (!parent.count(b)) parent[b] = b;
        const std::uint32_t x = findRoot(parent, a), y = findRoot(parent, b);
        if (x != y) parent[std::max(x, y)] = std::min(x, y);
    };
    for (const CommPair& p : match.pairs)
        if (p.confident) join(index.ops[p.send].rank, index.ops[p.recv].rank);
    for (const auto& g : m.tpGroups)
        for (std::uint32_t r : g) join(g.front(), r);
    std::map<std::uint32_t, std::vector<std::uint32_t>> comps;
    for (const auto& [r, p] : parent) comps[findRoot(parent, r)].push_back(r);
    m.replicas.clear();
    if (match.pairs.empty()) return;
    for (auto& [root, ranks] : comps) m.replicas.push_back(ranks);
}

bool isLossOrHeadOp(const DumpIndex& index, const OpRecord& op) {
    return isLossType(index.strings.view(op.type)) || isHeadName(index.strings.view(op.name)) ||
        isHeadName(index.strings.view(op.scope));
}

StageMap inferStageMap(const DumpIndex& index, const std::vector<CommOp>& comm, std::string_view spec,
                       std::vector<std::string>& warnings) {
    StageMap m;
    if (!spec.empty()) {
        std::string error;
        if (parseStageSpec(spec, m, error)) return m;
        warnings.push_back("--stages ignored: " + error);
        m = StageMap{};
    }
    const std::set<std::uint32_t> ranks = ranksOf(index);
    if (ranks.size() <= 1) {
        // Rank 0 alone is a single-device run; any other lone rank is a partial (overflow-only) dump.
        if (ranks.empty() || *ranks.begin() == 0 || index.ranks.empty()) {
            for (std::uint32_t r : ranks) m.stageOfRank[r] = 0;
            m.source = "single rank";
            m.confident = true;
        } else {
            m.source = "unknown";
            warnings.push_back("only rank " + std::to_string(*ranks.begin()) +
                               " is in the dump: its pipeline stage is "
                               "unknown; pass --stages to set it");
        }
        finish(m);
        return m;
    }
    const std::set<std::uint32_t> lossRanks = lossOrHeadRanks(index);
    if (fromRankTable(index, m) || fromTopology(index, comm, lossRanks, m)) {
        finish(m);
        return m;
    }
    m = StageMap{};
    if (fromExecutionOrder(index, ranks, m)) {
        finish(m);
        return m;
    }
    m = StageMap{};
    const bool anyP2p = std::any_of(comm.begin(), comm.end(), [](const CommOp& c) {
        return c.kind == CommKind::Send || c.kind == CommKind::Receive;
    });
    if (!anyP2p && (lossRanks.empty() || lossRanks.size() == ranks.size())) {
        for (std::uint32_t r : ranks) m.stageOfRank[r] = 0;
        m.source = "no Send/Receive: one stage assumed";
        m.confident = lossRanks.size() == ranks.size();
    } else if (!lossRanks.empty() && ranks.size() % lossRanks.size() == 0) {
        // MindSpore gives stage s the ranks [s*n, (s+1)*n): valid when the loss holders are the last block.
        const std::size_t per = lossRanks.size();
        std::vector<std::uint32_t> sorted(ranks.begin(), ranks.end());
        if (std::equal(lossRanks.begin(), lossRanks.end(), sorted.end() - long(per))) {
            for (std::size_t i = 0; i < sorted.size(); ++i) m.stageOfRank[sorted[i]] = int(i / per);
            m.source = "ops held (loss/head ranks are the last stage; contiguous rank blocks assumed)";
        }
    }
    if (m.stageOfRank.empty()) {
        warnings.push_back(
            "pipeline stages unknown: no rank table stages, Send/Receive topology or loss op to "
            "place ranks; pass --stages to set them");
        m.source = "unknown";
    }
    finish(m);
    return m;
}

}  // namespace dl

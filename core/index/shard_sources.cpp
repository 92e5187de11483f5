#include "core/index/shard_sources.h"

#include <algorithm>
#include <tuple>

#include "core/io/dump_metadata.h"
#include "core/io/execution_order.h"
#include "core/io/mapping_csv.h"
#include "core/io/opdebug_record.h"

namespace dl {
namespace {

std::string baseName(const std::string& rel) {
    const auto slash = rel.rfind('/');
    return slash == std::string::npos ? rel : rel.substr(slash + 1);
}
std::string dirName(const std::string& rel) {
    const auto slash = rel.rfind('/');
    return slash == std::string::npos ? std::string() : rel.substr(0, slash);
}
bool inFolderNamed(const std::string& rel, std::string_view folder) {
    const std::string dir = dirName(rel);
    return dir == folder || dir.ends_with("/" + std::string(folder));
}

}  // namespace

void ShardSources::collect(const std::string& rootAbs, const std::vector<const ScannedFile*>& files,
                           std::vector<IndexWarning>& warnings) {
    for (const ScannedFile* f : files) {
        const std::string base = baseName(f->rel);
        const std::string abs = rootAbs + "/" + f->rel;
        std::string text, error;
        if (base == "mapping.csv") {
            MappingTable table;
            std::vector<std::uint32_t> bad;
            if (!table.read(abs, bad, error)) {
                warnings.push_back({f->rel, error});
                continue;
            }
            if (!bad.empty())
                warnings.push_back({f->rel, std::to_string(bad.size()) + " malformed line(s), first at line " +
                                                std::to_string(bad.front())});
            auto& m = m_mappings[dirName(f->rel)];
            for (const auto& [k, v] : table.entries()) m[k] = v;
        } else if (inFolderNamed(f->rel, "execution_order")) {
            bool isGlobal = false;
            const auto graph = executionOrderGraphId(base, &isGlobal);
            if (graph < 0 || isGlobal) continue;
            std::vector<std::string> names;
            if (!readSmallTextFile(abs, text, error) || !parseExecutionOrderCsv(text, names, error)) {
                warnings.push_back({f->rel, error});
                continue;
            }
            auto& order = m_execOrder[std::uint32_t(graph)];
            for (std::uint32_t pos = 0; pos < names.size(); ++pos)
                for (auto form : {ScopeNameForm::ShortMs22, ScopeNameForm::ScopedMs23})
                    order.emplace(scopeToFileName(names[pos], form), std::pair(pos, names[pos]));
        } else if (inFolderNamed(f->rel, ".dump_metadata") || inFolderNamed(f->rel, ".metadata")) {
            if (!readSmallTextFile(abs, text, error)) {
                warnings.push_back({f->rel, error});
                continue;
            }
            if (base == "config.json") {
                MsRunConfig cfg;
                if (parseMsRunConfig(text, cfg, error)) {
                    meta.frameworkVersion = cfg.msVersion;
                    meta.deviceTarget = cfg.deviceTarget;
                } else {
                    warnings.push_back({f->rel, error});
                }
            } else if (base == "data_dump.json") {
                DumpConfig cfg;
                if (parseDumpConfig(text, cfg, error)) {
                    meta.dumpConfigJson = text;
                    meta.opDebugMode = cfg.opDebugMode;
                    meta.dumpMode = cfg.savedData.empty() ? "tensor" : cfg.savedData;
                    if (cfg.opDebugMode > 0 && cfg.opDebugMode != 4) meta.dumpMode += ", overflow only";
                } else {
                    warnings.push_back({f->rel, error});
                }
            } else if (base == "hccl.json") {
                std::vector<RankTableEntry> table;
                if (parseRankTable(text, table, error)) {
                    for (const auto& e : table) {
                        m_rankHosts.emplace_back(e.rank, e.server.empty() ? e.hostIp : e.server);
                        m_rankDevices.emplace_back(e.rank, e.deviceId);
                    }
                } else {
                    warnings.push_back({f->rel, error});
                }
            }
        }
    }
}

bool ShardSources::isAuxiliary(const std::string& rel) const {
    const std::string base = baseName(rel);
    if (base == "mapping.csv" || inFolderNamed(rel, "execution_order") || inFolderNamed(rel, ".dump_metadata") ||
        inFolderNamed(rel, ".metadata") || inFolderNamed(rel, "graphs") || inFolderNamed(rel, "constants"))
        return true;
    // save_kernel_args {type}.{name}.json, acl_dump_{dev}.json, stray configs and logs.
    if (base.ends_with(".json") && !base.starts_with("Opdebug.")) return true;
    return base.ends_with(".ir") || base.ends_with(".pb") || base.ends_with(".txt") || base.ends_with(".log") ||
           base.ends_with(".csv");
}

std::string ShardSources::mappedName(const std::string& rel, const std::string& key) const {
    auto it = m_mappings.find(dirName(rel));
    if (it == m_mappings.end()) return {};
    const std::string base = baseName(rel);
    for (const std::string& k : {base, key, key + ".npy"})
        if (auto e = it->second.find(k); e != it->second.end()) return e->second;
    return {};
}

void ShardSources::addOpdebug(const std::string& rootAbs, const ScannedFile& f, const DumpFileName& name,
                              std::uint32_t folder, DumpIndex& out) {
    OpdebugRecord rec;
    std::string error;
    if (!readOpdebugFile(rootAbs + "/" + f.rel, rec, error)) {
        out.warnings.push_back({f.rel, "overflow record unreadable: " + error});
        return;
    }
    const OverflowCulprit c = overflowCulprit(rec);
    OverflowRecord r;
    r.aicoreStatus = rec.aiCore.status;
    r.dhaAtomicStatus = rec.dhaAtomic.status;
    r.l2AtomicStatus = rec.l2Atomic.status;
    r.taskId = c.taskId;
    r.streamId = c.streamId;
    r.modelId = c.modelId;
    r.file = out.strings.intern(f.rel);
    r.timestampUs = name.timestampUs;
    if (c.block == OverflowBlock::None)
        out.warnings.push_back({f.rel, "overflow record with every status 0 (no overflow reported)"});
    out.overflows.push_back(r);
    m_overflows.push_back({folder, std::uint32_t(out.overflows.size() - 1), name.taskId, name.streamId});
}

void ShardSources::orderOps(const FolderInfo& folder, DumpIndex& out, std::size_t begin, std::size_t end) const {
    const auto order = m_execOrder.find(folder.loc.graph);
    // Known positions from the execution order file; ops it does not list keep their time order,
    // slotted after the last listed op that ran before them.
    std::vector<std::size_t> idx(end - begin);
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = begin + i;
    std::stable_sort(idx.begin(), idx.end(), [&](auto a, auto b) { return out.ops[a].startUs < out.ops[b].startUs; });
    struct Key { std::int64_t pos; std::size_t seq; std::size_t op; };
    std::vector<Key> keys;
    std::int64_t lastKnown = -1;
    for (std::size_t s = 0; s < idx.size(); ++s) {
        OpRecord& op = out.ops[idx[s]];
        std::int64_t pos = lastKnown;
        if (order != m_execOrder.end()) {
            if (auto it = order->second.find(out.strings.str(op.name)); it != order->second.end()) {
                pos = it->second.first;
                lastKnown = pos;
                op.scope = out.strings.intern(it->second.second);
            }
        }
        keys.push_back({pos, s, idx[s]});
    }
    std::stable_sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
        return a.pos != b.pos ? a.pos < b.pos : a.seq < b.seq;
    });
    for (std::uint32_t p = 0; p < keys.size(); ++p) out.ops[keys[p].op].execPos = p;
}

void ShardSources::attachOverflows(const std::vector<FolderInfo>& folders, DumpIndex& out) {
    if (m_overflows.empty()) return;
    // (rank, iteration, graph, task, stream) -> op; records name ops of their own iteration folder.
    using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;
    std::map<Key, std::size_t> byIds;
    for (std::size_t i = 0; i < out.ops.size(); ++i) {
        const auto& op = out.ops[i];
        byIds.emplace(Key{op.rank, op.iteration, op.graph, op.taskId, op.streamId}, i);
    }
    for (const auto& p : m_overflows) {
        const OverflowRecord& r = out.overflows[p.record];
        const auto& loc = folders[p.folder].loc;
        const std::uint32_t rank = loc.rank.value_or(0), iter = loc.iteration.value_or(0);
        auto it = byIds.find(Key{rank, iter, loc.graph, r.taskId, r.streamId});
        if (it == byIds.end()) it = byIds.find(Key{rank, iter, loc.graph, p.nameTask, p.nameStream});
        if (it == byIds.end()) {
            out.warnings.push_back({out.strings.str(r.file),
                                    "overflow record names task " + std::to_string(r.taskId) + " stream " +
                                        std::to_string(r.streamId) + ", which no tensor file in its folder has"});
            continue;
        }
        out.ops[it->second].overflow = std::int32_t(p.record);
    }
}

void ShardSources::fillRankInfo(const std::string& shardRel, const std::vector<FolderInfo>& folders,
                                DumpIndex& out) const {
    std::vector<std::uint32_t> ranks;
    for (const auto& op : out.ops) ranks.push_back(op.rank);
    for (const auto& f : folders)
        if (f.loc.rank) ranks.push_back(*f.loc.rank);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    bool stats = true, npy = false, bin = false;
    for (const auto& t : out.tensors) {
        if (t.flags & HasData) {
            stats = false;
            const auto file = out.strings.view(t.file);
            (file.ends_with(".bin") ? bin : npy) = true;
        }
    }
    for (std::uint32_t r : ranks) {
        RankInfo info;
        info.rank = r;
        info.folder = shardRel;
        info.format = out.tensors.empty() ? DumpFormat::Unknown
                      : bin            ? DumpFormat::MindSporeBin
                      : npy || !stats  ? DumpFormat::MindSporeNpy
                                       : DumpFormat::MindSporeStatsOnly;
        for (const auto& [rk, host] : m_rankHosts)
            if (rk == r) info.host = host;
        for (const auto& [rk, dev] : m_rankDevices)
            if (rk == r) info.deviceId = dev;
        out.ranks.push_back(info);
    }
}

}  // namespace dl

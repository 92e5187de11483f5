#include "core/index/shard_sources.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>

#include "core/formats/cann/opdebug_record.h"
#include "core/formats/mindspore/dump_metadata.h"
#include "core/formats/mindspore/execution_order.h"
#include "core/formats/mindspore/graph_ir.h"
#include "core/formats/mindspore/mapping_csv.h"

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
bool isUnder(const std::string& rel, const std::string& dir) {
    return dir.empty() || rel == dir || (rel.size() > dir.size() && rel.starts_with(dir) && rel[dir.size()] == '/');
}

}  // namespace

void ShardSources::collect(const std::string& rootAbs, const std::vector<const ScannedFile*>& files,
                           std::vector<IndexWarning>& warnings) {
    std::vector<PendingIr> irs;
    for (const ScannedFile* f : files) {
        const std::string base = baseName(f->rel);
        const std::string abs = rootAbs + "/" + f->rel;
        std::string text, error;
        if (base == "mapping.csv") {
            MappingTable table;
            std::vector<std::uint32_t> bad;
            if (!table.read(abs, bad, error)) {
                warnings.push_back({f->rel, error, WarningSeverity::Unreadable});
                continue;
            }
            if (!bad.empty())
                warnings.push_back(
                    {f->rel,
                     std::to_string(bad.size()) + " malformed line(s), first at line " + std::to_string(bad.front()),
                     WarningSeverity::Unreadable});
            auto& m = m_mappings[dirName(f->rel)];
            for (const auto& [k, v] : table.entries()) m[k] = v;
        } else if (inFolderNamed(f->rel, "execution_order")) {
            // ms_global_execution_order_graph_N.csv lists the iterations a graph ran, not its kernels.
            bool isGlobal = false;
            const auto graph = executionOrderGraphId(base, &isGlobal);
            if (graph < 0 || isGlobal) continue;
            auto table = orderTable(abs, *f, warnings, [&](std::vector<std::string>& names, IndexWarning& warning) {
                if (readSmallTextFile(abs, text, error) && parseExecutionOrderCsv(text, names, error)) return true;
                warning = {f->rel, error, WarningSeverity::Unreadable};
                return false;
            });
            if (!table) continue;
            OrderFile& order = m_orders[{dirName(dirName(f->rel)), std::uint32_t(graph)}];
            order.table = std::move(table);
            order.source = OrderSource::ExecutionOrder;
            order.rel = f->rel;
        } else if (inFolderNamed(f->rel, "graphs") && graphIrGraphId(base) >= 0) {
            irs.push_back({f, dirName(dirName(f->rel)), std::uint32_t(graphIrGraphId(base))});
        } else if (inFolderNamed(f->rel, ".dump_metadata") || inFolderNamed(f->rel, ".metadata")) {
            if (!readSmallTextFile(abs, text, error)) {
                warnings.push_back({f->rel, error, WarningSeverity::Unreadable});
                continue;
            }
            if (base == "config.json") {
                MsRunConfig cfg;
                if (parseMsRunConfig(text, cfg, error)) {
                    meta.frameworkVersion = cfg.msVersion;
                    meta.deviceTarget = cfg.deviceTarget;
                } else {
                    warnings.push_back({f->rel, error, WarningSeverity::Unreadable});
                }
            } else if (base == "data_dump.json") {
                DumpConfig cfg;
                if (parseDumpConfig(text, cfg, error)) {
                    meta.dumpConfigJson = text;
                    meta.opDebugMode = cfg.opDebugMode;
                    meta.dumpMode = cfg.savedData.empty() ? "tensor" : cfg.savedData;
                    if (cfg.opDebugMode > 0 && cfg.opDebugMode != 4) meta.dumpMode += ", overflow only";
                } else {
                    warnings.push_back({f->rel, error, WarningSeverity::Unreadable});
                }
            } else if (base == "hccl.json") {
                std::vector<RankTableEntry> table;
                if (parseRankTable(text, table, error)) {
                    for (const auto& e : table) {
                        m_rankHosts.emplace_back(e.rank, e.server.empty() ? e.hostIp : e.server);
                        m_rankDevices.emplace_back(e.rank, e.deviceId);
                    }
                } else {
                    warnings.push_back({f->rel, error, WarningSeverity::Unreadable});
                }
            }
        }
    }
    readGraphIrs(rootAbs, irs, warnings);
}

// The graph IR orders a graph only where no execution order file does (it is read only then: it
// can be large).
void ShardSources::readGraphIrs(const std::string& rootAbs, const std::vector<PendingIr>& irs,
                                std::vector<IndexWarning>& warnings) {
    for (const PendingIr& ir : irs) {
        if (m_orders.count({ir.dir, ir.graph})) continue;
        const std::string& rel = ir.file->rel;
        const std::string abs = rootAbs + "/" + rel;
        auto table = orderTable(abs, *ir.file, warnings, [&](std::vector<std::string>& names, IndexWarning& warning) {
            std::string error;
            if (!readGraphIrOpOrder(abs, names, error)) {
                warning = {rel, error, WarningSeverity::Unreadable};
                return false;
            }
            if (names.empty()) {
                warning = {rel, "graph IR names no kernel (no full_name_with_scope lines): not used to order ops",
                           WarningSeverity::Note};
                return false;
            }
            return true;
        });
        if (!table) continue;
        OrderFile& order = m_orders[{ir.dir, ir.graph}];
        order.table = std::move(table);
        order.source = OrderSource::GraphIr;
        order.rel = rel;
    }
}

// A failed parse is not kept (a read that failed once may not again), nor one of a file that
// changed while it was read: it is not what its size and stamp stand for.
template <class Parse>
std::shared_ptr<const OpOrderTable> ShardSources::orderTable(const std::string& abs, const ScannedFile& f,
                                                             std::vector<IndexWarning>& warnings, Parse&& parse) {
    if (m_cache)
        if (auto table = m_cache->find(f)) return table;
    std::vector<std::string> names;
    IndexWarning warning;
    if (!parse(names, warning)) {
        warnings.push_back(std::move(warning));
        return nullptr;
    }
    std::uint64_t size = 0;
    std::int64_t stamp = 0;
    if (m_cache && fileSizeAndStamp(abs, size, stamp) && size == f.size && stamp == f.stamp)
        return m_cache->add(f, std::move(names));
    auto table = std::make_shared<OpOrderTable>();
    table->assign(std::move(names));
    return table;
}

std::string_view ShardSources::orderSourceName(OrderSource s) {
    switch (s) {
        case OrderSource::FileName:
            return "file_name";
        case OrderSource::GraphIr:
            return "graph_ir";
        case OrderSource::ExecutionOrder:
            return "execution_order";
        case OrderSource::Timestamps:
            return "timestamps";
    }
    return "";
}

bool ShardSources::isShardContext(const std::string& rel) {
    if (inFolderNamed(rel, "execution_order")) {
        bool isGlobal = false;
        return executionOrderGraphId(baseName(rel), &isGlobal) >= 0 && !isGlobal;
    }
    return inFolderNamed(rel, "graphs") || inFolderNamed(rel, ".dump_metadata") || inFolderNamed(rel, ".metadata");
}

namespace {
constexpr std::string_view kFileNameOrderNote = "no timestamps in the file names and no execution_order/";
constexpr std::string_view kUnlistedOrderNote = " op(s) without timestamps are not in ";
}  // namespace

int ShardSources::orderSourceStrength(std::string_view name) {
    for (OrderSource s :
         {OrderSource::FileName, OrderSource::GraphIr, OrderSource::ExecutionOrder, OrderSource::Timestamps})
        if (!name.empty() && orderSourceName(s) == name) return int(s);
    return -1;
}

int ShardSources::rankFormatStrength(DumpFormat f) {
    return f == DumpFormat::MindSporeBin      ? 3
        : f == DumpFormat::MindSporeNpy       ? 2
        : f == DumpFormat::MindSporeStatsOnly ? 1
                                              : 0;
}

int ShardSources::oncePerRankNote(const IndexWarning& w) {
    if (w.severity != WarningSeverity::Note) return -1;
    if (w.reason.starts_with(kFileNameOrderNote)) return 0;
    return w.reason.find(kUnlistedOrderNote) != std::string::npos ? 1 : -1;
}

bool ShardSources::isAuxiliary(const std::string& rel) {
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
    const std::string abs = rootAbs + "/" + f.rel;
    if (!readOpdebugFile(abs, rec, error)) {
        // The warning names the file by its path in the dump; the reader's absolute prefix repeats it.
        if (error.rfind(abs + ": ", 0) == 0) error.erase(0, abs.size() + 2);
        out.warnings.push_back({f.rel, "overflow record unreadable: " + error, WarningSeverity::Unreadable});
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
        out.warnings.push_back(
            {f.rel, "overflow record with every status 0 (no overflow reported)", WarningSeverity::Note});
    out.overflows.push_back(r);
    m_overflows.push_back({folder, std::uint32_t(out.overflows.size() - 1), name.taskId, name.streamId});
}

void ShardSources::orderOps(const FolderInfo& folder, DumpIndex& out, std::size_t begin, std::size_t end) {
    if (begin == end) return;
    // The order files of the rank folder this folder lies in (the deepest one holding any).
    const std::string* home = nullptr;
    for (const auto& [key, file] : m_orders)
        if (isUnder(folder.rel, key.first) && (!home || key.first.size() > home->size())) home = &key.first;
    // <=1.2 sync iteration folders have no graph level: every graph of the device may be in them,
    // ordered graph by graph.
    const bool noGraphLevel = baseName(folder.rel).starts_with("iteration_");
    std::vector<std::pair<std::int64_t, const OrderFile*>> tables;  // (position base, file)
    if (home)
        for (const auto& [key, file] : m_orders)
            if (key.first == *home && (noGraphLevel || key.second == folder.loc.graph))
                tables.emplace_back(std::int64_t(key.second) << 32, &file);
    const StrId parameter = out.strings.intern("Parameter");
    bool timed = false, onlyParameters = true;
    for (std::size_t i = begin; i < end; ++i) {
        timed |= out.ops[i].startUs != 0;
        onlyParameters &= out.ops[i].type == parameter;
    }
    // Ops come in file-name order; that order survives only as the last tie-break.
    struct Key {
        std::int64_t time, pos;
        std::size_t seq;
    };
    std::vector<Key> keys;
    keys.reserve(end - begin);
    std::size_t unlisted = 0;
    std::optional<OrderSource> placedBy;  // weakest source among the files that placed an op
    for (std::size_t i = begin; i < end; ++i) {
        OpRecord& op = out.ops[i];
        const std::string_view name = out.strings.view(op.name);
        std::int64_t pos = -1;
        for (const auto& [base, file] : tables) {
            const std::string* full = nullptr;
            if (const auto p = file->table->find(name, &full); p >= 0) {
                pos = base + p;
                op.scope = out.strings.intern(*full);
                placedBy = std::min(placedBy.value_or(file->source), file->source);
                break;
            }
        }
        if (pos < 0) {
            // Parameters are graph inputs, never kernels: before every kernel. Other unlisted ops after.
            const bool param = op.type == parameter;
            pos = param ? -1 : std::numeric_limits<std::int64_t>::max();
            unlisted += !param;
        }
        keys.push_back({timed ? op.startUs : 0, pos, i - begin});
    }
    std::vector<std::uint32_t> order(keys.size());
    for (std::uint32_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return std::tie(keys[a].time, keys[a].pos, keys[a].seq) < std::tie(keys[b].time, keys[b].pos, keys[b].seq);
    });
    for (std::uint32_t p = 0; p < order.size(); ++p) out.ops[begin + order[p]].execPos = p;

    if (onlyParameters) return;  // graph inputs only: nothing ran in an order here
    const OrderSource source = timed ? OrderSource::Timestamps : placedBy.value_or(OrderSource::FileName);
    const std::uint32_t rank = folder.loc.rank.value_or(0);
    const std::string where = folder.rel.empty() ? std::string(".") : folder.rel;
    if (source == OrderSource::FileName && m_orderWarned.insert({rank, 0}).second)
        out.warnings.push_back({where,
                                std::string(kFileNameOrderNote) +
                                    "ms_execution_order_graph_N.csv or graphs/*.ir listing its ops for rank " +
                                    std::to_string(rank) +
                                    ": ops are ordered by file name, which need not be the order they ran "
                                    "(the first overflow named may be the wrong op)",
                                WarningSeverity::Note});
    else if (source != OrderSource::FileName && !timed && unlisted && m_orderWarned.insert({rank, 1}).second)
        out.warnings.push_back({where,
                                std::to_string(unlisted) + std::string(kUnlistedOrderNote) +
                                    tables.front().second->rel + ": placed after the listed ops, in file-name order",
                                WarningSeverity::Note});
    if (auto [it, inserted] = m_rankOrder.emplace(rank, source); !inserted) it->second = std::min(it->second, source);
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
                                        std::to_string(r.streamId) + ", which no tensor file in its folder has",
                                    WarningSeverity::Unreadable});
            continue;
        }
        out.ops[it->second].overflow = std::int32_t(p.record);
    }
}

void ShardSources::fillRankInfo(const std::string& shardRel, const std::vector<FolderInfo>& folders,
                                const std::set<DumpFormat>& read, DumpIndex& out) const {
    std::vector<std::uint32_t> ranks;
    for (const auto& op : out.ops) ranks.push_back(op.rank);
    for (const auto& f : folders)
        if (f.loc.rank) ranks.push_back(*f.loc.rank);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    DumpFormat format = DumpFormat::Unknown;
    for (DumpFormat f : read)
        if (rankFormatStrength(f) > rankFormatStrength(format)) format = f;
    for (std::uint32_t r : ranks) {
        RankInfo info;
        info.rank = r;
        info.folder = shardRel;
        info.format = format;
        for (const auto& [rk, host] : m_rankHosts)
            if (rk == r) info.host = host;
        for (const auto& [rk, dev] : m_rankDevices)
            if (rk == r) info.deviceId = dev;
        if (auto it = m_rankOrder.find(r); it != m_rankOrder.end()) info.orderSource = orderSourceName(it->second);
        out.ranks.push_back(info);
    }
}

}  // namespace dl

#pragma once
// The non-tensor files of a shard: mapping.csv, execution order, .dump_metadata and Opdebug
// overflow records. ShardBuilder asks it to resolve long names, order ops and attach overflows.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/formats/mindspore/dump_file_name.h"
#include "core/formats/mindspore/execution_order.h"
#include "core/index/dump_layout.h"
#include "core/index/dump_scanner.h"
#include "core/index/shard_context_cache.h"
#include "core/model/dump_index.h"

namespace dl {

struct FolderInfo {
    std::string rel;  // relative to the index root
    DumpLocation loc;
};

class ShardSources {
public:
    void collect(const std::string& rootAbs, const std::vector<const ScannedFile*>& files,
                 std::vector<IndexWarning>& warnings);
    // Before collect: order files parsed by earlier builds are taken from `cache`, and those parsed
    // now are added to it (shard_context_cache.h). Null (the default): every file is parsed.
    void setCache(ShardContextCache* cache) { m_cache = cache; }
    // Files that are not tensors and not handled elsewhere (metadata, graphs, configs, ...).
    static bool isAuxiliary(const std::string& rel);
    // What `collect` reads to order or describe every folder of its shard (execution order, graph
    // IR, .dump_metadata): a build of one iteration folder needs them too. ms_global_execution_order
    // (the iterations run, rewritten every step) is not: it orders nothing.
    static bool isShardContext(const std::string& rel);
    // The kind (0, 1) of a note orderOps gives once per rank, with the first folder it meets;
    // -1 for any other warning.
    static int oncePerRankNote(const IndexWarning& w);
    // RankInfo::orderSource from weakest (0, "file_name") to strongest (3, "timestamps"); -1 for
    // another writer's ("modification_time", "dump_json") or none.
    static int orderSourceStrength(std::string_view name);
    // The MindSpore formats fillRankInfo names a rank by, strongest read first: <= 1.2 bin (3),
    // npy (2), statistic.csv only (1); 0 for any other.
    static int rankFormatStrength(DumpFormat f);
    // mapping.csv lookup for a numeric file name in the folder of `rel`; empty when absent.
    std::string mappedName(const std::string& rel, const std::string& key) const;
    void addOpdebug(const std::string& rootAbs, const ScannedFile& f, const DumpFileName& name, std::uint32_t folder,
                    DumpIndex& out);
    // Sets execPos (and scope, from the execution order files) of ops [begin, end) of one folder:
    // by timestamp with the execution order breaking ties; without timestamps by the execution
    // order, else the graph IR, else file name (with a warning). Notes the source per rank.
    void orderOps(const FolderInfo& folder, DumpIndex& out, std::size_t begin, std::size_t end);
    void attachOverflows(const std::vector<FolderInfo>& folders, DumpIndex& out);
    // One rank entry per rank of the shard; its format from `read`, the MindSpore formats the
    // shard's readers read tensors of: <=1.2 bin, else npy, else statistic.csv only.
    void fillRankInfo(const std::string& shardRel, const std::vector<FolderInfo>& folders,
                      const std::set<DumpFormat>& read, DumpIndex& out) const;

    RunMetadata meta;

private:
    enum class OrderSource : std::uint8_t { FileName, GraphIr, ExecutionOrder, Timestamps };  // weakest first
    struct OrderFile {
        std::shared_ptr<const OpOrderTable> table;
        OrderSource source = OrderSource::ExecutionOrder;
        std::string rel;  // the file, for warnings
    };
    struct PendingIr {
        const ScannedFile* file = nullptr;
        std::string dir;
        std::uint32_t graph = 0;
    };
    // The table an order file parses to (null when it cannot order: its warning said), through
    // the cache when there is one.
    template <class Parse>
    std::shared_ptr<const OpOrderTable> orderTable(const std::string& abs, const ScannedFile& f,
                                                   std::vector<IndexWarning>& warnings, Parse&& parse);
    static std::string_view orderSourceName(OrderSource s);
    void readGraphIrs(const std::string& rootAbs, const std::vector<PendingIr>& irs,
                      std::vector<IndexWarning>& warnings);

    struct PendingOverflow {
        std::uint32_t folder = 0;
        std::uint32_t record = 0;                    // index in DumpIndex::overflows
        std::uint32_t nameTask = 0, nameStream = 0;  // ids from the file name (fallback)
    };
    std::map<std::string, std::map<std::string, std::string>> m_mappings;  // folder -> key -> original
    // (folder holding execution_order/ and graphs/, i.e. the rank folder; graph id) -> kernel order
    std::map<std::pair<std::string, std::uint32_t>, OrderFile> m_orders;
    std::map<std::uint32_t, OrderSource> m_rankOrder;       // weakest source per rank
    std::set<std::pair<std::uint32_t, int>> m_orderWarned;  // (rank, warning kind) said once
    std::vector<PendingOverflow> m_overflows;
    std::vector<std::pair<std::uint32_t, std::string>> m_rankHosts;  // from hccl.json: rank -> host
    std::vector<std::pair<std::uint32_t, std::string>> m_rankDevices;
    ShardContextCache* m_cache = nullptr;
};

}  // namespace dl

#pragma once
// The non-tensor files of a shard: mapping.csv, execution order, .dump_metadata and Opdebug
// overflow records. ShardBuilder asks it to resolve long names, order ops and attach overflows.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/index/dump_index.h"
#include "core/index/dump_layout.h"
#include "core/index/dump_scanner.h"
#include "core/io/dump_file_name.h"

namespace dl {

struct FolderInfo {
    std::string rel;         // relative to the index root
    DumpLocation loc;
};

class ShardSources {
public:
    void collect(const std::string& rootAbs, const std::vector<const ScannedFile*>& files,
                 std::vector<IndexWarning>& warnings);
    // Files that are not tensors and not handled elsewhere (metadata, graphs, configs, ...).
    bool isAuxiliary(const std::string& rel) const;
    // mapping.csv lookup for a numeric file name in the folder of `rel`; empty when absent.
    std::string mappedName(const std::string& rel, const std::string& key) const;
    void addOpdebug(const std::string& rootAbs, const ScannedFile& f, const DumpFileName& name,
                    std::uint32_t folder, DumpIndex& out);
    // Sets execPos (and scope, from the execution order files) of ops [begin, end) of one folder.
    void orderOps(const FolderInfo& folder, DumpIndex& out, std::size_t begin, std::size_t end) const;
    void attachOverflows(const std::vector<FolderInfo>& folders, DumpIndex& out);
    void fillRankInfo(const std::string& shardRel, const std::vector<FolderInfo>& folders, DumpIndex& out) const;

    RunMetadata meta;

private:
    struct PendingOverflow {
        std::uint32_t folder = 0;
        std::uint32_t record = 0;              // index in DumpIndex::overflows
        std::uint32_t nameTask = 0, nameStream = 0;  // ids from the file name (fallback)
    };
    std::map<std::string, std::map<std::string, std::string>> m_mappings;  // folder -> key -> original
    // graph id -> (name as dump files spell it -> (position, full scope name))
    std::map<std::uint32_t, std::map<std::string, std::pair<std::uint32_t, std::string>>> m_execOrder;
    std::vector<PendingOverflow> m_overflows;
    std::vector<std::pair<std::uint32_t, std::string>> m_rankHosts;  // from hccl.json: rank -> host
    std::vector<std::pair<std::uint32_t, std::string>> m_rankDevices;
};

}  // namespace dl

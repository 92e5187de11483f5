#pragma once
// What a reader sees of the shard being built (core/formats/<format>/): the shard's folders, its
// tensor drafts, the index the readers append to, the queued statistics jobs and the cached
// index of the shard (whose figures unchanged files keep). ShardBuilder owns one per shard; it
// is filled on the shard's thread, workers write only the slot of their job.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/formats/mindspore/dump_file_name.h"
#include "core/index/dump_scanner.h"
#include "core/index/shard_drafts.h"
#include "core/index/shard_resume.h"
#include "core/index/shard_sources.h"
#include "core/index/stats_job.h"
#include "core/model/dump_index.h"

namespace dl {

class ShardReader;

struct ShardContext : ShardDrafts {
    std::string rootAbs, shardRel;
    std::unordered_map<std::string, std::vector<const TensorRecord*>> previous;
    const DumpIndex* previousIndex = nullptr;
    std::vector<StrId> toOut;             // keys id -> out.strings id, filled by groupDrafts()
    std::vector<std::uint32_t> textRank;  // keys id -> rank of its text among all keys
    std::vector<std::uint32_t> seen;      // emitFolder scratch
    std::vector<FolderInfo> folders;
    std::map<std::string, std::uint32_t> folderIds;
    ShardSources sources;
    DumpIndex out;
    std::set<std::uint32_t> grammarFolders;  // folders holding dump-grammar files
    std::map<std::uint32_t, DumpFormat> folderFormat;
    std::set<DumpFormat> formats;
    // The MindSpore formats the shard's readers read tensors of (npy, <=1.2 bin, statistic.csv
    // rows): its ranks' format (ShardSources::fillRankInfo), as the readers know it.
    std::set<DumpFormat> rankFormats;
    std::vector<StatsJob> jobs;
    std::size_t reused = 0;  // files whose figures came from `previous`
    // Set by a reader that re-orders ops across folders after grouping (plain .npy): the shard's
    // ops then stay in first-seen folder order and name order (see emitOrder).
    bool keepEmitOrder = false;
    // Kept across builds of this shard by the caller (the watch): growing files read from where
    // they were left. Null: every file read whole.
    ShardResume* resume = nullptr;

    std::uint32_t folderOf(const std::string& fileRel);
    void warn(const std::string& path, const std::string& reason, WarningSeverity severity) {
        out.warnings.push_back({path, reason, severity});
    }
    void noteFormat(std::uint32_t folder, DumpFormat f) {
        formats.insert(f);
        folderFormat.emplace(folder, f);
    }

    // Files holding one tensor each, named by a dump grammar (MindSpore .npy, <=1.2 .bin): the
    // draft, and a job for `reader` unless the previous index still holds the file's figures.
    // Returns the draft id, or none when the file repeats another's name.
    std::optional<std::uint32_t> addTensorFile(const ScannedFile& f, const DumpFileName& name, DumpFormat format,
                                               ShardReader* reader);
    // Statistics of an unchanged file from the previous index of this shard.
    bool reuse(const ScannedFile& f, Draft& d);
    // A one-tensor file's job result into its draft (worker thread), and its read error at finish.
    void applyToDraft(const StatsJob& job, StatsJobResult&& result);
    void warnReadError(const StatsJob& job);

    // Groups the drafts into op executions appended to `out` (shard_grouping.cpp).
    void groupDrafts();
    std::vector<std::uint32_t> emitOrder(const std::vector<std::uint32_t>& folderStart) const;
    void emitFolder(std::uint32_t folderId, std::vector<std::uint32_t>& draftIds);
    void putInExecutionOrder(std::size_t opsBegin);
    std::uint32_t addTensor(const Draft& d, std::uint32_t opIndex);
};

}  // namespace dl

#pragma once
// What a reader (core/formats/<format>/) sees of the shard being built: its tensor drafts (the
// ShardDrafts base: the reader's to fill), its folders, the index the readers append to, the
// statistics jobs and the cached index of the shard (whose figures unchanged files keep).
// Everything else the builder keeps for itself (grouping, ordering, which formats each folder
// held): readers record it through the calls below and cannot write it directly.
//
// ShardBuilder owns one per shard; it is filled on the shard's thread, and workers write only
// the slot of their job (format_reader.h lists the order of the steps).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
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

class ShardContext : public ShardDrafts {
public:
    // --- The shard.
    const std::string& rootAbs() const { return m_rootAbs; }
    const std::string& shardRel() const { return m_shardRel; }
    std::string absPath(const ScannedFile& f) const { return m_rootAbs + "/" + f.rel; }
    // The folder of a file (relative to the root), numbered in first-seen order.
    std::uint32_t folderOf(const std::string& fileRel);
    // Kept across builds of this shard by the caller (the watch, ShardBuilder::setResume): growing
    // files read from where they were left. Null: every file read whole.
    ShardResume* resume() const { return m_resume; }
    // The index the readers append to (records a reader makes itself, e.g. msprobe's, and warnings).
    DumpIndex& index() { return m_out; }
    void warn(const std::string& path, const std::string& reason, WarningSeverity severity) {
        m_out.warnings.push_back({path, reason, severity});
    }

    // --- What wrote the shard's files.
    // `folder` holds files of format `f` (a row with namesRankFormat names its rank's format so).
    void noteFormat(std::uint32_t folder, DumpFormat f) {
        m_formats.insert(f);
        m_folderFormat.emplace(folder, f);
    }
    // The shard holds format `f` in no folder of its own (msprobe's dump.json folders).
    void noteShardFormat(DumpFormat f) { m_formats.insert(f); }
    // The MindSpore formats the shard's readers read tensors of (npy, <=1.2 bin, statistic.csv
    // rows): its ranks' format unless a namesRankFormat reader named it (ShardSources::fillRankInfo).
    void noteRankFormat(DumpFormat f) { m_rankFormats.insert(f); }
    // `folder` holds files named by a dump grammar: a .npy there that follows none is malformed.
    void noteGrammarFolder(std::uint32_t folder) { m_grammarFolders.insert(folder); }
    bool holdsGrammarFiles(std::uint32_t folder) const { return m_grammarFolders.count(folder) != 0; }
    // For a reader that re-orders ops across folders in finishOps (plain .npy): the shard's ops then
    // stay in first-seen folder order and name order (emitOrder).
    void keepFolderOrder() { m_keepEmitOrder = true; }

    // --- Statistics jobs (run on workers: format_reader.h steps 4-5).
    // A job whose result is the tensor of draft `draft`: applied into it and its read error warned
    // by the builder, in job order.
    void queueDraftJob(std::uint32_t draft, const ScannedFile& f, DType hint, ShardReader& reader) {
        m_jobs.push_back({draft, absPath(f), f.size, hint, &reader, true});
    }
    // A job with the reader's own slot (`job.draft`), applied by `job.reader->apply`.
    void queueJob(StatsJob job) {
        job.intoDraft = false;
        m_jobs.push_back(std::move(job));
    }

    // --- The shard's previous index (its cache entry), whose figures unchanged files keep.
    const DumpIndex* previousIndex() const { return m_previousIndex; }
    // Its tensors held in file `rel` (empty when none or no previous index).
    std::span<const TensorRecord* const> previousTensors(const std::string& rel) const {
        const auto it = m_previous.find(rel);
        return it == m_previous.end() ? std::span<const TensorRecord* const>() : it->second;
    }
    // Statistics of an unchanged one-tensor file from the previous index into its draft; counted
    // as reused when true.
    bool reuse(const ScannedFile& f, Draft& d);
    // A file whose figures the reader took from the previous index itself (raw CANN).
    void countReused() { ++m_reused; }

    // --- Files holding one tensor each, named by a dump grammar (MindSpore .npy, <=1.2 .bin): the
    // draft, and a draft job for `reader` unless the previous index still holds the file's
    // figures; notes the folder as a grammar folder and `format` as its and the rank's. Returns
    // the draft id, or none when the file repeats another's name.
    std::optional<std::uint32_t> addTensorFile(const ScannedFile& f, const DumpFileName& name, DumpFormat format,
                                               ShardReader& reader);

private:
    friend class ShardBuilder;

    // A draft job's result into its draft (worker thread), and its read error at finish.
    void applyToDraft(const StatsJob& job, StatsJobResult&& result);
    void warnReadError(const StatsJob& job);
    // Groups the drafts into op executions appended to `m_out` (shard_grouping.cpp).
    void groupDrafts();
    std::vector<std::uint32_t> emitOrder(const std::vector<std::uint32_t>& folderStart) const;
    void emitFolder(std::uint32_t folderId, std::vector<std::uint32_t>& draftIds);
    void putInExecutionOrder(std::size_t opsBegin);
    std::uint32_t addTensor(const Draft& d, std::uint32_t opIndex);

    std::string m_rootAbs, m_shardRel;
    std::unordered_map<std::string, std::vector<const TensorRecord*>> m_previous;  // by file
    const DumpIndex* m_previousIndex = nullptr;
    std::vector<StrId> m_toOut;             // keys id -> m_out.strings id, filled by groupDrafts()
    std::vector<std::uint32_t> m_textRank;  // keys id -> rank of its text among all keys
    std::vector<std::uint32_t> m_seen;      // emitFolder scratch
    std::vector<FolderInfo> m_folders;
    std::map<std::string, std::uint32_t> m_folderIds;
    ShardSources m_sources;
    DumpIndex m_out;
    std::set<std::uint32_t> m_grammarFolders;
    std::map<std::uint32_t, DumpFormat> m_folderFormat;
    std::set<DumpFormat> m_formats;
    std::set<DumpFormat> m_rankFormats;
    std::vector<StatsJob> m_jobs;
    std::size_t m_reused = 0;
    bool m_keepEmitOrder = false;
    ShardResume* m_resume = nullptr;
};

}  // namespace dl

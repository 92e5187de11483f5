#pragma once
// Builds the index of one shard (one rank folder, or the whole root when it has no rank folders)
// in three steps: `scan` offers every file to the format readers (core/formats/<format>/) and reads
// the shard's own files (mapping.csv, execution order, metadata, Opdebug records); the readers list
// the tensor files whose statistics must be computed; the caller runs those jobs (on all cores,
// `job.reader->run`) and hands back the figures (`applyJob`); `finish` lets each reader finish its
// part, groups tensors into op executions and orders them.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/index/dump_scanner.h"
#include "core/index/shard_drafts.h"
#include "core/index/shard_resume.h"
#include "core/index/stats_job.h"
#include "core/model/dump_index.h"

namespace dl {

struct ShardContextCache;

struct FormatReader;

class ShardBuilder {
public:
    // `previous`: the cached index of this shard, whose statistics are reused for unchanged files.
    ShardBuilder(std::string rootAbs, std::string shardRel, const DumpIndex* previous);
    // With other readers than the table's (tests: a format added without touching the table).
    ShardBuilder(std::string rootAbs, std::string shardRel, const DumpIndex* previous,
                 std::span<const FormatReader* const> readers);
    // Reusing only `previousTensors` of `previous` (one folder's part of a larger cached index): a
    // watch builds a shard folder by folder from one cache entry.
    ShardBuilder(std::string rootAbs, std::string shardRel, const DumpIndex* previous,
                 std::span<const TensorRecord* const> previousTensors);
    ~ShardBuilder();
    // Before scan: a store kept across builds of this shard (shard_resume.h), so that a reader of
    // growing files (statistic.csv) reads only what was added since the last build.
    void setResume(ShardResume* resume);
    // Before scan: the shard's order files parsed by its earlier builds (ShardContextCache), kept
    // by the caller across builds of the shard's folders.
    void setContextCache(ShardContextCache* cache);
    // `files` are relative to the index root and all lie inside this shard. False when `stop` was
    // requested before the last file: the builder is then half-filled and must be dropped.
    bool scan(const std::vector<const ScannedFile*>& files, std::stop_token stop = {});
    // Each job names the reader that runs it: `job.reader->run(job, scratch)` on any thread.
    std::vector<StatsJob>& jobs();
    void applyJob(const StatsJob& job, StatsJobResult&& result);  // worker thread, the job's own slot
    std::size_t reusedFiles() const;
    // Writers whose files this shard held (valid after scan).
    std::set<DumpFormat> formats() const;
    // Whether files of this format name their rank's format over the MindSpore ones, as one build
    // decides it (FormatReader::namesRankFormat: CANN raw, plain .npy).
    static bool namesRankFormat(DumpFormat f);
    DumpIndex finish();
    // The drafts' buffers of a finished shard, for the next builder (adoptBuffers before its scan).
    DraftBuffers releaseBuffers();
    void adoptBuffers(DraftBuffers&& buffers);

private:
    void rememberPrevious(const DumpIndex* previous, std::span<const TensorRecord* const> tensors);
    struct Impl;
    std::unique_ptr<Impl> m;
};

}  // namespace dl

#pragma once
// Builds the index of one shard (one rank folder, or the whole root when it has no rank folders)
// in three steps: `scan` reads names, statistic.csv, Opdebug records and metadata and lists the
// tensor files whose statistics must be computed; the caller runs those jobs (on all cores) and
// hands back the figures; `finish` groups tensors into op executions and orders them.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/dump_index.h"
#include "core/index/dump_scanner.h"
#include "core/index/stats_job.h"
#include "core/io/dump_file_name.h"

namespace dl {

class ShardBuilder {
public:
    // `previous`: the cached index of this shard, whose statistics are reused for unchanged files.
    ShardBuilder(std::string rootAbs, std::string shardRel, const DumpIndex* previous);
    ~ShardBuilder();
    // `files` are relative to the index root and all lie inside this shard. False when `stop` was
    // requested before the last file: the builder is then half-filled and must be dropped.
    bool scan(const std::vector<const ScannedFile*>& files, std::stop_token stop = {});
    std::vector<StatsJob>& jobs() { return m_jobs; }
    const DumpFileName& jobName(const StatsJob& job) const;
    void applyJob(const StatsJob& job, StatsJobResult&& result);
    std::size_t reusedFiles() const { return m_reused; }
    // Writers whose files this shard held (valid after scan).
    std::set<DumpFormat> formats() const;
    DumpIndex finish();

private:
    struct Impl;
    std::unique_ptr<Impl> m;
    std::vector<StatsJob> m_jobs;
    std::size_t m_reused = 0;
};

}  // namespace dl

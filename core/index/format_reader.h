#pragma once
// One interface for every dump format the indexer reads. A format is a FormatReader (one line of
// the table in core/formats/reader_registry.cpp) whose `open` makes a ShardReader for each shard
// being built; the reader sees the shard through its ShardContext (`s`).
//
// ShardBuilder calls a shard's readers in this fixed sequence, at each step every reader in table
// order (the step a reader does not override does nothing):
//
//   scan (the shard's thread)
//     1. scanShard(files, taken)  once, with all the shard's files: a reader of whole folders
//                                 (msprobe's dump.json) reads them here and marks what it took
//     2. scanFile(file, name)     per file nothing took yet, until a reader takes it
//     3. scanDone()               once: files whose reading depends on the whole shard
//   read (worker threads, in any order; only the jobs the reader queued in 1-3)
//     4. run(job, scratch)        per job: reads the file (const: no shared writes)
//     5. apply(job, result)       per job queued with ShardContext::queueJob: keeps the result in
//                                 the reader's own slot (jobs queued with queueDraftJob go into
//                                 their draft, and their read errors are warned, without it)
//   finish (the shard's thread)
//     6. finishDrafts(out)        before the drafts are grouped into op executions
//     7. finishOps(out)           the ops grouped and ordered, the rank entries made from the folders
//     8. finishRanks(out)         last, each rank's format settled
//
// Dispatch is once per file or per job (a virtual call), never per row or element: a reader
// loops over its own rows (statistic.csv) and elements (the statistics kernels) itself.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/formats/mindspore/dump_file_name.h"
#include "core/index/dump_scanner.h"
#include "core/index/stats_job.h"
#include "core/model/dump_format.h"

namespace dl {

class ShardContext;
struct DumpIndex;

class ShardReader {
public:
    explicit ShardReader(ShardContext& shard) : s(shard) {}
    virtual ~ShardReader() = default;
    ShardReader(const ShardReader&) = delete;
    ShardReader& operator=(const ShardReader&) = delete;

    // 1. `taken` is parallel to `files`: a file marked 1 is offered to no one in step 2.
    virtual void scanShard(const std::vector<const ScannedFile*>& /*files*/, std::vector<char>& /*taken*/) {}
    // 2. True when the reader took the file. Files named by the row's `fileName` come to that
    // reader first, before configs, graphs and *.csv are set aside, with `name` unparsed. Every
    // other tensor file comes with its name parsed (kind Unknown when no grammar matched, mapping.csv
    // names resolved): the file is this reader's if no earlier reader in the table took it.
    virtual bool scanFile(const ScannedFile& /*file*/, const DumpFileName& /*name*/) { return false; }
    // 3.
    virtual void scanDone() {}

    // 4. Worker thread: reads one job this reader queued (a reader that queues jobs overrides it).
    virtual StatsJobResult run(const StatsJob& /*job*/, std::vector<std::uint8_t>& /*scratch*/) const {
        StatsJobResult r;
        r.error = "this reader queues no statistics jobs";
        return r;
    }
    // 5. Worker thread: the result of a job queued with queueJob into the job's own slot (no
    // lock: one slot per job).
    virtual void apply(const StatsJob& /*job*/, StatsJobResult&& /*result*/) {}

    // 6. Results into drafts (raw CANN parts) or into records the reader made itself (msprobe).
    virtual void finishDrafts(DumpIndex& /*out*/) {}
    // 7. An op order of the format's own (plain .npy), ranks the reader found itself (msprobe).
    virtual void finishOps(DumpIndex& /*out*/) {}
    // 8. Rank fields only this format sets (its order source).
    virtual void finishRanks(DumpIndex& /*out*/) {}

protected:
    ShardContext& s;  // the shard being built
};

// One line of the reader table: what the format is called and how to read it in a shard.
struct FormatReader {
    DumpFormat format = DumpFormat::Unknown;
    std::string_view name;  // as the index summary prints it ("CANN raw")
    // A folder holding this format (ShardContext::noteFormat) names its rank's format, over what
    // the shard's MindSpore readers recorded (npy / bin / statistic.csv).
    bool namesRankFormat = false;
    std::unique_ptr<ShardReader> (*open)(ShardContext& shard) = nullptr;
    // A base name only this format has ("statistic.csv"): such files go to this reader's scanFile
    // before configs and *.csv are set aside. Empty: none.
    std::string_view fileName = {};
};

// The usual `open`: `.open = openReader<MyReader>`.
template <class Reader>
std::unique_ptr<ShardReader> openReader(ShardContext& shard) {
    return std::make_unique<Reader>(shard);
}

}  // namespace dl

#pragma once
// One interface for every dump format the indexer reads. A format is a FormatReader (one row of
// the table in reader_registry.cpp) whose `open` makes a ShardReader for each shard being built.
// The ShardBuilder offers the reader the shard's files, queues the statistics jobs it plans,
// hands each job back to it on a worker, and lets it finish its part of the shard index.
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
#include "core/model/dump_index.h"

namespace dl {

struct ShardContext;

// A format's reader for one shard. All hooks but `run` and `apply` run on the shard's thread, in
// the order listed; `run` and `apply` run on worker threads and touch only the job's own slot.
class ShardReader {
public:
    virtual ~ShardReader() = default;

    // Before the per-file pass: a reader of whole folders (msprobe's dump.json) reads them and
    // marks the files it consumed in `taken` (parallel to `files`); they are offered to no one.
    virtual void collect(const std::vector<const ScannedFile*>& /*files*/, std::vector<char>& /*taken*/) {}
    // Per file, before the auxiliary files (configs, graphs, *.csv) are set aside: a file this
    // format knows by its base name alone (statistic.csv). True when the reader took it.
    virtual bool addNamed(const ScannedFile& /*f*/, std::string_view /*base*/) { return false; }
    // Per remaining tensor file, with its name parsed (kind Unknown when no grammar matched, and
    // mapping.csv names already resolved). True when the reader took it; readers are asked in
    // table order, the first that takes a file reads it.
    virtual bool addFile(const ScannedFile& /*f*/, const DumpFileName& /*name*/) { return false; }
    // After the per-file pass: files whose reading depends on the whole shard (plain .npy).
    virtual void endScan() {}

    // Worker thread: reads one job this reader queued (readers that queue jobs override both).
    virtual StatsJobResult run(const StatsJob& /*job*/, std::vector<std::uint8_t>& /*scratch*/) const {
        StatsJobResult r;
        r.error = "this reader queues no statistics jobs";
        return r;
    }
    // Worker thread: keeps the result in the job's own slot (no lock: one slot per job).
    virtual void apply(const StatsJob& /*job*/, StatsJobResult&& /*result*/) {}

    // finish(), in job order: what one job left to say (read errors, in the same order whatever
    // the thread count).
    virtual void finishJob(const StatsJob& /*job*/) {}
    // Before the tensor drafts are grouped into ops: results into drafts or into tensors.
    virtual void finish(DumpIndex& /*out*/) {}
    // After the drafts were grouped into ops: an op order of the format's own.
    virtual void orderOps(DumpIndex& /*out*/) {}
    // After the shard's rank entries were made from its folders: ranks the reader found itself.
    virtual void addRanks(DumpIndex& /*out*/) {}
    // Last: rank fields only this format sets (its order source).
    virtual void finishRanks(DumpIndex& /*out*/) {}
};

// One row of the reader table: what the format is called and how to read it in a shard.
struct FormatReader {
    DumpFormat format = DumpFormat::Unknown;
    std::string_view name;  // as the index summary prints it ("CANN raw")
    // A folder holding this format names its rank's format, over the guess the shard makes from
    // the tensors it found (MindSpore npy / bin / statistic.csv).
    bool namesRankFormat = false;
    std::unique_ptr<ShardReader> (*open)(ShardContext& shard) = nullptr;
};

}  // namespace dl

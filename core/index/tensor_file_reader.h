#pragma once
#include <utility>

#include "core/index/format_reader.h"
#include "core/index/shard_context.h"
#include "core/index/tensor_file_job.h"

namespace dl {

// The ShardReader part of formats with one tensor per file: a job's result goes into the draft of
// its file (ShardContext::addTensorFile), its read error is warned in job order.
class TensorFileReader : public ShardReader {
public:
    explicit TensorFileReader(ShardContext& shard) : s(shard) {}
    void apply(const StatsJob& job, StatsJobResult&& result) override { s.applyToDraft(job, std::move(result)); }
    void finishJob(const StatsJob& job) override { s.warnReadError(job); }

protected:
    ShardContext& s;
};

}  // namespace dl

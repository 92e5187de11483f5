#pragma once
// One unit of statistics work: a tensor file whose header is read and whose payload is streamed
// through the statistics kernel. Jobs run on worker threads; each fills only its own result.
// How a job is read is up to the reader that queued it (core/formats/<format>/).
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/dump_format.h"
#include "core/stats/log2_histogram.h"
#include "core/stats/tensor_stats.h"
#include "core/util/dtype.h"

namespace dl {

class ShardReader;

// Queued by a reader while it scans a shard (ShardContext::queueDraftJob / queueJob); run by the
// same reader (one virtual call per job, never per element).
struct StatsJob {
    std::uint32_t draft = 0;  // the tensor draft, or the reader's own slot for it (a raw file, ...)
    std::string absPath;
    std::uint64_t fileSize = 0;
    DType hint = DType::Unknown;  // dtype from the name, resolves bf16 void descrs
    ShardReader* reader = nullptr;
    // The result is the tensor of drafts[draft] (the builder applies it); else reader->apply keeps it.
    bool intoDraft = false;
};

// One tensor of a multi-tensor file (CANN raw).
struct StatsJobPart {
    Io io = Io::Output;
    std::uint16_t slot = 0;
    DType dtype = DType::Unknown;
    std::string format;                       // device format name
    std::vector<std::int64_t> shape;          // stored (device) shape
    std::vector<std::int64_t> originalShape;  // logical shape, empty when unknown
    std::uint64_t dataOffset = 0, dataBytes = 0;
    std::uint16_t flags = 0;  // TensorFlag bits: DeviceFormat, Padding*
    bool hasStats = false;
    TensorStats stats;
    Log2Histogram hist;
    std::string note;  // why statistics are missing or partial
};

struct StatsJobResult {
    bool ok = false;
    std::string error;
    DType dtype = DType::Unknown;
    bool bigEndian = false, fortranOrder = false;
    std::vector<std::int64_t> shape;
    bool hasShape = false;
    std::uint64_t dataOffset = 0, dataBytes = 0;
    TensorStats stats;
    Log2Histogram hist;
    std::vector<StatsJobPart> parts;  // CannRaw: inputs then outputs
    std::vector<std::string> notes;   // file-level remarks (trailing bytes, ...)
};

}  // namespace dl

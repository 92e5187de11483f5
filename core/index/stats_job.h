#pragma once
// One unit of statistics work: a tensor file whose header is read and whose payload is streamed
// through the statistics kernel. Jobs run on worker threads; each fills only its own result.
#include <cstdint>
#include <string>
#include <vector>

#include "core/io/dump_file_name.h"
#include "core/stats/log2_histogram.h"
#include "core/stats/tensor_stats.h"

namespace dl {

struct StatsJob {
    std::uint32_t draft = 0;     // index of the tensor draft to fill
    std::string absPath;
    std::uint64_t fileSize = 0;
    DType hint = DType::Unknown; // dtype from the name, resolves bf16 void descrs
    bool rawBin = false;         // <=1.2 .bin: raw bytes, dtype and shape from the name
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
};

// Runs one job: reads the npy header (or takes the .bin name's metadata) and computes statistics.
StatsJobResult runStatsJob(const StatsJob& job, const DumpFileName& name, std::vector<std::uint8_t>& scratch);

}  // namespace dl

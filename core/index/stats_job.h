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

enum class StatsJobKind : std::uint8_t {
    Npy = 0,   // .npy: header, then statistics of the payload
    RawBin,    // <=1.2 .bin: raw bytes, dtype and shape from the name
    CannRaw,   // raw CANN dump: protobuf header, several tensors (parts)
    LinkedNpy, // .npy named by a msprobe dump.json entry (result goes to that tensor)
    LinkedTorch, // torch.save .pt named by a msprobe dump.json entry (PyTorch)
};

// Jobs whose result goes to a tensor a msprobe dump.json names (not to a file-name draft).
inline bool isLinkedJob(StatsJobKind k) { return k == StatsJobKind::LinkedNpy || k == StatsJobKind::LinkedTorch; }

struct StatsJob {
    std::uint32_t draft = 0;     // index of the tensor draft (or raw file) to fill
    std::string absPath;
    std::uint64_t fileSize = 0;
    DType hint = DType::Unknown; // dtype from the name, resolves bf16 void descrs
    StatsJobKind kind = StatsJobKind::Npy;
    bool rawBin = false;         // same as kind RawBin (kept for callers that set it directly)
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
    std::uint16_t flags = 0;                  // TensorFlag bits: DeviceFormat, Padding*
    bool hasStats = false;
    TensorStats stats;
    Log2Histogram hist;
    std::string note;                         // why statistics are missing or partial
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
    std::vector<StatsJobPart> parts;          // CannRaw: inputs then outputs
    std::vector<std::string> notes;           // file-level remarks (trailing bytes, ...)
};

// Runs one job: reads the npy header (or takes the .bin name's metadata) and computes statistics.
StatsJobResult runStatsJob(const StatsJob& job, const DumpFileName& name, std::vector<std::uint8_t>& scratch);

}  // namespace dl

#pragma once
// The statistics job of a file holding one tensor: behind a header (.npy, torch.save .pt) or raw
// (<=1.2 .bin, dtype and shape from the name). Shared by the readers whose tensors are such files
// (MindSpore .npy and .bin, plain .npy, msprobe) and by `dumplens-cli inspect`.
#include <cstdint>
#include <vector>

#include "core/formats/mindspore/dump_file_name.h"
#include "core/index/stats_job.h"

namespace dl {

enum class TensorHeader : std::uint8_t { Npy, Torch };

// Reads the header, then streams the payload through the statistics kernel (small files are read
// whole into `scratch`, one open and one read each).
StatsJobResult runTensorFileJob(const StatsJob& job, TensorHeader header, std::vector<std::uint8_t>& scratch);
// A headerless .bin: the name gives dtype and shape, the file size must match them.
StatsJobResult runRawBinJob(const StatsJob& job, const DumpFileName& name);

}  // namespace dl

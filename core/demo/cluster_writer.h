#pragma once
// Writes a simulated cluster run (ClusterTrace) as a MindSpore 2.4 kernel-by-kernel dump root
// (docs/formats.md 1.2, 1.4, 1.6, 1.7, 1.10): 2.3+ statistic.csv (trailing comma, user categories),
// op names = full scoped names with '/' -> '_', task id 0, logical streams 0 (compute) and 1
// (communication), one execution_order per rank (its stage's graph), rank table in .dump_metadata.
// Never writes outside `root`.
#include <cstddef>
#include <string>

#include "core/demo/cluster_trace.h"

namespace dl::demo {

struct ClusterWriteOptions {
    std::string netName = "Llama";
    std::string msVersion = "2.4.1";
    bool writeTensors = false;      // saved_data "full": .npy files next to statistic.csv
    bool stagesInRankTable = true;  // add "stage" to each hccl.json device entry
    bool timestamps = true;         // false: every timestamp 0 (order only from execution_order and messages)
    // op_debug_mode 3: only the ops whose output went Inf/NaN, and no Send/Receive or collective
    // (nothing in the dump links the ranks' clocks).
    bool overflowOnly = false;
    // The job was killed while writing: the last row of each rank's last statistic.csv is cut
    // in the middle (no line end), as a killed process leaves it.
    bool tornLastRow = false;
    // false: no execution_order/ folder (a dump copied without it): the op names, with the scope's
    // '/' spelled '_', are all there is to tell forward from backward.
    bool executionOrder = true;
};

bool writeClusterDump(const std::string& root, const ClusterTrace& trace, const ClusterWriteOptions& options,
                      std::size_t& filesWritten, std::string& error);

}  // namespace dl::demo

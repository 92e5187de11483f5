#pragma once
// The overflow analysis: classify every tensor, find the first overflowing iteration and, in it,
// the origin op (inputs in range, an output not; saturation and Opdebug records count), ordered
// across ranks by Send/Receive causality; then the chain across stages, persistence over
// iterations, the near-limit list and a CPU replay of the origin in fp16/bf16/fp32.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"
#include "core/util/progress.h"

namespace dl {

class RankDataflow;  // core/analysis/rank_dataflow.h

struct AnalysisOptions {
    std::optional<std::uint32_t> iteration;  // analyse this iteration instead of the first bad one
    std::string stages;                      // --stages SPEC ("0:0,1:1" or "0-1:0,2-3:1"); empty: infer
    double nearLimitThreshold = 0.5;         // share of 65504 (max|x| / 65504) that earns a near-limit warning
    std::size_t nearLimitMax = 100;          // entries kept in the near-limit list
    bool replay = true;                      // replay the origin op when its inputs were dumped
    bool readGraphIr = true;                 // explain same-rank hops by rank_N/graphs/*.ir's data edges
    // The graph IR reader to read through and leave filled, so a caller that goes on to draw the
    // graph (`graph`, the app's Graph view) does not parse the IR again; null: a private one.
    RankDataflow* dataflow = nullptr;
    std::stop_token stop;   // stopped: returns early with only `cancelled` set
    WorkCallback progress;  // ops classified of all ops (the bulk of the work)
};

// A stopped `options.stop` gives a result with `cancelled` set and nothing else.
AnalysisResult analyze(const DumpIndex& index, const AnalysisOptions& options = {});

}  // namespace dl

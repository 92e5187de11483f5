#pragma once
// Replays the origin op on the CPU in fp16, bf16 and fp32 from its dumped inputs, checks that
// fp16 reproduces the overflow and recommends the cheapest precision that removes it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/analysis_result.h"
#include "core/analysis/replay_kernels.h"
#include "core/model/dump_index.h"

namespace dl {

struct ReplayOptions {
    bool saturatingFp16 = false;             // the dump's mode: clamp to +/-65504 instead of inf
    double bf16Tolerance = 1e-2;             // max relative L2 error of bf16 against fp32 to recommend bf16
    std::uint64_t maxElements = 1ull << 27;  // per tensor; larger is not replayed
    double maxMacs = 4e9;                    // matmul work limit per precision
};

// Replays `opType` on in-memory inputs (as dumped, converted to float). `outShapes` are the
// dumped output shapes; `slot` is the output to judge; `dumped` (may be null) is that output as
// dumped, in `dumpedDtype`, used to pick between ambiguous readings and to check the replay.
ReplayResult replayOp(std::string_view opType, const std::vector<ReplayTensor>& inputs,
                      const std::vector<std::vector<std::int64_t>>& outShapes, std::size_t slot,
                      const ReplayTensor* dumped, DType dumpedDtype, const ReplayOptions& options);

// Loads the inputs of op `op` from the dump (root + "/" + file) and replays it, judging the
// output tensor `tensor` (kNoIndex: output 0). Unavailable (with the reason and a headroom-based
// recommendation, marked as not a replay) for ops outside the set or without dumped inputs.
ReplayResult replayFromIndex(const DumpIndex& index, std::uint32_t op, std::uint32_t tensor,
                             const ReplayOptions& options);

// The rule-of-thumb advice when no replay is possible, from the op's tensors' headroom.
std::string headroomRecommendation(const DumpIndex& index, std::uint32_t op);

}  // namespace dl

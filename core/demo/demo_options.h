#pragma once
// What a demo dump looks like: on-disk layout, overflow mode, scenario, numeric precision of the
// NormHead's SqrtGrad, iterations, clocks. The defaults reproduce the motivating case (fp16
// Baichuan2-like network, 4 pipeline stages, SqrtGrad in the NormHead backward overflows in
// iteration 5). Tests build their own variants from these options.
#include <cstdint>
#include <string>
#include <vector>

#include "core/demo/demo_kernels.h"
#include "core/util/dtype.h"

namespace dl::demo {

enum class DemoLayout {
    Ms22AsyncNpy,        // MindSpore 2.2 Ascend async "A+M": 8-field short names, CANN task ids, shared ts
    Ms24KernelByKernel,  // MindSpore 2.4 Ascend O0/O1: 9-field names, scoped names, task 0, ts per tensor
};

enum class DemoScenario {
    NormHeadBackward,  // the motivating case: first overflow = SqrtGrad of the NormHead backward (rank 3)
    ForwardOrigin,     // first overflow = a forward RmsNorm on rank 1 (the decoy pushed past 65504)
    Clean,             // no overflow anywhere; the near-limit decoy is still there
};

struct DemoOptions {
    DemoLayout layout = DemoLayout::Ms22AsyncNpy;
    OverflowMode mode = OverflowMode::Saturation;
    DemoScenario scenario = DemoScenario::NormHeadBackward;
    int iterations = 8;
    int overflowIteration = 5;  // NormHeadBackward: iteration whose SqrtGrad first passes 65504
    int decoyIteration = 2;     // iteration holding the ~40000 forward outlier
    // Precision the NormHead's SqrtGrad (and the square-grad Muls after it) run in. BFloat16 or
    // Float32 insert Cast ops around them (the fix), which shifts later -opN numbers.
    DType sqrtGradPrecision = DType::Float16;
    bool overflowOnly = false;    // op_debug_mode 3: only overflowing ops + Opdebug records (A+M)
    bool writeStatistics = true;  // statistic.csv next to the tensors (saved_data "full")
    std::int64_t baseTimestampUs = 1700000000000000;
    // Added to each rank's timestamps (rank clocks are not synchronised). Rank 2 lags 3 ms, so raw
    // timestamps put its (later) overflow before rank 3's origin.
    std::vector<std::int64_t> rankClockOffsetUs = {0, 850, -3000, 420};
    std::string netName = "Baichuan2";
    std::uint32_t graphId = 0;
    std::string msVersion;                            // empty: "2.2.10" / "2.4.1" by layout
    std::vector<std::string> statisticCategories = {  // Ms24KernelByKernel only
        "max", "min", "avg", "nan count", "negative inf count", "positive inf count", "l2norm"};
};

// What a written variant holds, for the CLI summary and for tests.
struct DemoVariantInfo {
    std::string culpritType;       // "SqrtGrad" (scenario-dependent)
    std::string culpritShortName;  // "SqrtGrad-op393"
    std::string culpritFullName;   // scoped name as in execution_order
    int culpritRank = -1;
    int firstOverflowIteration = -1;              // -1 when nothing overflowed
    std::vector<std::string> culpritOutputFiles;  // paths relative to the variant root
    std::string decoyOpFullName;                  // the forward op holding the near-limit value
    int decoyRank = -1;
    float decoyMaxAbs = 0;
    std::vector<float> lossPerIteration;
    std::size_t filesWritten = 0;
    std::uint64_t bytesWritten = 0;
};

}  // namespace dl::demo

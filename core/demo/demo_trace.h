#pragma once
// The record of one simulated training run: every operator execution on every rank with its
// input/output tensors, in execution order, plus the static per-rank graph (execution order).
#include <cstdint>
#include <string>
#include <vector>

#include "core/demo/demo_tensor.h"

namespace dl::demo {

enum class StreamKind : std::uint8_t { Compute = 0, Comm = 1 };

struct DemoOp {
    int rank = 0;
    int iteration = 0;
    std::uint32_t position = 0;  // index in the rank's execution order
    std::string type;            // "SqrtGrad"
    std::string fullName;        // "Gradients/Default/.../gradSqrt/SqrtGrad-op393"
    std::string shortName;       // "SqrtGrad-op393"
    StreamKind stream = StreamKind::Compute;
    std::uint32_t taskId = 0;    // CANN task id (same every iteration in sink mode)
    std::int64_t trueEndUs = 0;  // completion time on a common (true) clock
    std::vector<TensorP> inputs, outputs;
    bool overflow = false;  // the kernel produced inf/NaN or a clamped value
};

struct DemoTrace {
    int ranks = 0;
    int iterations = 0;
    std::vector<DemoOp> ops;                          // in execution order per rank and iteration
    std::vector<std::vector<std::string>> execOrder;  // [rank] -> full names
    std::vector<std::uint32_t> maxComputeTaskId;      // [rank]
    std::vector<float> lossPerIteration;
    std::string decoyFullName;
    int decoyRank = -1;
    float decoyMaxAbs = 0;
};

}  // namespace dl::demo

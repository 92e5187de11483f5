#pragma once
// CPU reference kernels for the ops the overflow replay covers. Kernels compute in float with
// double accumulators and do NOT round their results: the replay rounds inputs and outputs to
// the precision under test, which is how an fp16/bf16 kernel with fp32 internals behaves.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dl {

struct ReplayTensor {
    std::vector<std::int64_t> shape;
    std::vector<float> data;  // logical C order
    bool integer = false;     // an index/axis input: never rounded to the replay precision
};

std::uint64_t numElements(const std::vector<std::int64_t>& shape);

struct KernelHints {
    int transposeA = -1, transposeB = -1;  // MatMul/BatchMatMul: -1 infer from shapes
};

struct KernelRun {
    std::vector<ReplayTensor> outputs;
    std::vector<std::string> notes;  // inferred axes, assumed epsilons, ambiguities
    bool ambiguous = false;          // more than one reading of the shapes fits
};

// The canonical kernel name for an op type ("RealDiv" -> "Div", "RMSNorm" -> "RmsNorm",
// "LayerNormV3" -> "LayerNorm"), "" when the replay does not cover it.
std::string replayKernelName(std::string_view opType);

// Runs kernel `type` (any spelling replayKernelName accepts). `outShapes` are the dumped output
// shapes (may be empty) and drive axis and transpose inference. False with a reason when the
// inputs do not fit the op.
bool runKernel(std::string_view type, const std::vector<ReplayTensor>& in,
               const std::vector<std::vector<std::int64_t>>& outShapes, const KernelHints& hints, KernelRun& out,
               std::string& error);

// (transposeA, transposeB) pairs consistent with the shapes of a (batch) matmul.
std::vector<std::pair<bool, bool>> matmulTransposeCandidates(const std::vector<std::int64_t>& a,
                                                             const std::vector<std::int64_t>& b,
                                                             const std::vector<std::int64_t>& out);

// Axes reduced from `in` to `out` (keep_dims or squeezed). False when no deletion of axes maps
// one onto the other; `ambiguous` when several non-trivial choices fit.
bool inferReduceAxes(const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& out, std::vector<int>& axes,
                     bool& ambiguous);

// Normalisation kernels (replay_norm_kernels.cpp), called by runKernel.
bool runSoftmax(const std::vector<ReplayTensor>& in, bool grad, KernelRun& out, std::string& error);
bool runLayerNorm(const std::vector<ReplayTensor>& in, const std::vector<std::vector<std::int64_t>>& outShapes,
                  KernelRun& out, std::string& error);
bool runLayerNormGrad(const std::vector<ReplayTensor>& in, KernelRun& out, std::string& error);
bool runRmsNorm(const std::vector<ReplayTensor>& in, const std::vector<std::vector<std::int64_t>>& outShapes,
                KernelRun& out, std::string& error);
bool runRmsNormGrad(const std::vector<ReplayTensor>& in, KernelRun& out, std::string& error);

}  // namespace dl

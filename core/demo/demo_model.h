#pragma once
// The demo network and its training run. A Baichuan2-like fp16 network over 4 pipeline stages
// (rank r = stage r): rank 0 embeds tokens; every stage runs 2 decoder layers (RmsNorm, MatMul,
// FastGeLU, MatMul, residual Add) forward and backward; rank 3 adds the final RmsNorm, the
// NormHead (W / sqrt(sum W^2 + eps): Square, ReduceSum, Add, Sqrt, RealDiv, MatMul), the
// softmax cross-entropy loss and the head's backward including SqrtGrad; activations go r->r+1
// and gradients r+1->r through HCCL Send/Receive; every rank applies loss-scale unscaling and
// ApplyMomentum to its weights (the head also gets a strong weight decay, which shrinks the
// culprit row's norm y so that SqrtGrad's dy*0.5/y passes 65504 in the overflow iteration).
// Every value is computed with real fp16/bf16/fp32 rounding (demo_kernels.h).
#include <string>

#include "core/demo/demo_options.h"
#include "core/demo/demo_trace.h"

namespace dl::demo {

// Network constants (small on purpose: the whole run takes milliseconds).
inline constexpr int kRanks = 4;
inline constexpr int kLayersPerStage = 2;
inline constexpr int kBatch = 4;
inline constexpr int kHidden = 16;
inline constexpr int kVocab = 64;
inline constexpr int kCulpritToken = 17;  // frequent label whose head row's norm collapses
inline constexpr int kDecoyToken = 43;    // outlier token fed in the decoy iteration
inline constexpr int kMassiveDim = 5;     // hidden dimension carrying the outlier
inline constexpr float kLossScale = 8192.0f;
inline constexpr float kTargetDy = 47580.0f;  // |dy| of the culprit row in the overflow iteration

class DemoModel {
public:
    explicit DemoModel(DemoOptions options) : m_options(std::move(options)) {}
    // Calibrates the initial culprit row (a few fast probe runs), then runs and records.
    bool run(DemoTrace& trace, std::string& error);

private:
    DemoOptions m_options;
};

}  // namespace dl::demo

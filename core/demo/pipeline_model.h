#pragma once
// Internal to the pipeline simulator: the simulated model's sizes and constants and the MindSpore
// scope names its ops are recorded under, shared by pipeline_sim.cpp (set-up, schedule, run),
// pipeline_sim_record.cpp (recording ops and messages), pipeline_sim_units.cpp (a micro-batch's
// forward and backward) and pipeline_sim_optimizer.cpp (the optimizer step).
#include <cstddef>
#include <cstdint>
#include <string>

namespace dl::demo::pipeline_model {

inline constexpr int kTokens = 2, kHidden = 8, kVocab = 64;
inline constexpr int kOutlierToken = kVocab - 1;  // fed once, in the origin micro-batch
inline constexpr int kOutlierDim = 7;             // quiet in every other token
inline constexpr float kLossScale = 1024.f, kLr = 1e-4f, kMomentum = 0.9f, kNormEps = 1e-6f, kClipNorm = 1.0f;
inline constexpr std::int64_t kSendRecvLatencyUs = 37, kCollectiveLatencyUs = 25, kIterationGapUs = 200;
// Row-major index row * cols + col, computed in size_t (not in int, then widened).
inline constexpr std::size_t flat(int row, int cols, int col) {
    return std::size_t(row) * std::size_t(cols) + std::size_t(col);
}

inline const std::string kBase = "Default/network-PipelineCell/_backbone-LlamaForCausalLM";
inline const std::string kModel = kBase + "/model-LlamaModel";
inline const std::string kHead = kBase + "/lm_head-Linear";
inline const std::string kLoss = kBase + "/loss-CrossEntropyLoss";
inline const std::string kAccu = "Default/network-PipelineCell/accu_grads";
inline const std::string kReducer = "Default/grad_reducer-DistributedGradReducer";
inline const std::string kOptim = "Default/optimizer-Momentum";
inline const std::string kClip = "Default/optimizer-Momentum/clip_grad-ClipByGlobalNorm";

inline std::string layerScope(int layer) {
    return kModel + "/layers-CellList/" + std::to_string(layer) + "-LlamaDecodeLayer";
}
inline std::string grad(const std::string& scope, const std::string& fwdType) {
    return "Gradients/" + scope + "/grad" + fwdType;
}

}  // namespace dl::demo::pipeline_model

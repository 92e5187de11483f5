#pragma once
// A tiny fp16 training run on a PP x TP cluster, simulated op by op with per-rank clocks.
// Rank = stage * tp + lane (MindSpore numbers pipeline stages in blocks of
// device_num / pipeline_stages). Each stage runs one decoder layer (MatMul, FastGeLU, MatMul,
// AllReduce over its TP group when tp > 1, residual Add); stage 0 embeds tokens (Gather), the
// last stage adds the final RmsNorm, a NormHead (rows normalised: Square, ReduceSum, Add, Sqrt,
// RealDiv, MatMul; vocabulary split over the TP lanes) and a softmax cross-entropy whose sum of
// exponentials is an AllReduce over the TP group. Backward runs in reverse (under Gradients/,
// SqrtGrad in the head), activations go stage s -> s+1 and gradients back by HCCL Send/Receive,
// then every rank unscales its gradients (loss scale), optionally clips them by a global norm
// (AllReduce over all ranks) and applies ApplyMomentum per weight; the head also decays.
//
// Time: every op takes a few microseconds on its rank's clock; a Receive ends no earlier than
// its Send's start + latency, a collective ends at the same time on every member, after the last
// member arrived. Values are computed with real fp16/fp32 rounding (DemoKernels, INF/NAN mode),
// so a value becomes inf exactly where the arithmetic passes 65504 and inf/NaN propagate by IEEE
// rules. Every op records which earlier op handed it a bad value (ClusterOp::cause/badFrom).
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/demo/cluster_trace.h"
#include "core/demo/demo_kernels.h"

namespace dl::demo {

enum class ClusterOrigin : std::uint8_t {
    HeadSqrtGrad,     // the NormHead's SqrtGrad on the last stage, lane 0 (culprit row's norm collapses)
    ForwardResidual,  // stage 1's residual Add (an outlier token's activation passes 65504)
};

struct ClusterSpec {
    int pipelineStages = 4;
    int tensorParallel = 1;
    int iterations = 3;
    ClusterOrigin origin = ClusterOrigin::HeadSqrtGrad;
    int originIteration = 1;
    bool globalNorm = false;    // clip by global norm: AllReduce of the squared norms over all ranks
    float headRowScale = 1.0f;  // initial norm of the culprit head row (calibrated for HeadSqrtGrad)
    std::int64_t baseTimestampUs = 1700000000000000;
    std::vector<std::int64_t> rankClockOffsetUs;  // added to each rank's true time in written timestamps
};

class ClusterSim {
public:
    explicit ClusterSim(const ClusterSpec& spec);
    void run();

    ClusterTrace trace;
    // Per iteration: max |dy * 0.5 / y| over the culprit head row, computed in fp32 before rounding
    // (what SqrtGrad produces); used to calibrate headRowScale.
    std::vector<float> sqrtGradProbe;

private:
    struct Lane {  // one rank's weights and the forward values its backward needs
        TensorP w1, w2, acc1, acc2, dw1, dw2;
        TensorP x, h, a;
        TensorP head, headAcc, headGrad, hx, hn, hrstd, y, wn, e, p, onehot, dy;
    };

    int rankOf(int stage, int lane) const { return stage * m_s.tensorParallel + lane; }
    int rec(int rank, const std::string& scope, const std::string& type, std::vector<TensorP> in,
            std::vector<TensorP> out, ClusterOpKind kind = ClusterOpKind::Compute,
            const std::vector<TensorP>& alsoProduced = {});
    TensorP out(int op, std::size_t slot = 0) const { return trace.ops[std::size_t(op)].outputs.at(slot); }
    int place(int rank, const std::string& scope, const std::string& type);
    void link(ClusterOp& op, const std::vector<TensorP>& candidates);
    void send(int rank, int tag, bool backward, const TensorP& t);
    TensorP receive(int rank, int tag, bool backward);
    std::vector<TensorP> allReduce(const std::vector<int>& ranks, const std::vector<TensorP>& in,
                                   const std::string& scope);
    TensorP scalar(DType t, float v);

    void initParams();
    void forwardStage(int stage);
    void headForward(int stage);
    void headBackward(int stage);
    void backwardStage(int stage);
    std::vector<TensorP> unscale(int rank);
    void optimizer(int rank, const std::vector<TensorP>& grads);
    void stampTimestamps();

    ClusterSpec m_s;
    DemoKernels m_k;
    int m_iter = 0;
    TensorP m_emb, m_normF;
    std::vector<Lane> m_lanes;        // [rank]
    std::vector<TensorP> m_stageOut;  // [rank] last forward output / backward gradient
    std::vector<float> m_ids, m_labels;
    std::vector<std::vector<std::pair<std::string, std::string>>> m_graph;  // [stage] (type, full name)
    std::vector<std::uint32_t> m_opCounter;                                 // [stage]
    std::vector<std::int64_t> m_now;                                        // [rank] true clock
    std::vector<std::uint32_t> m_pos;                                       // [rank] position in the stage graph
    std::unordered_map<const DemoTensor*, int> m_producer;
    std::map<std::tuple<int, int, bool>, int> m_inFlight;  // (rank, tag, backward) -> Send op
    std::vector<std::vector<TensorP>> m_pendingGrad;       // [rank] unscaled gradients awaiting the global norm
};

}  // namespace dl::demo

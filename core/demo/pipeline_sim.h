#pragma once
// A pipeline-parallel training run at production shape, simulated op by op: PP x TP x DP ranks,
// each stage a block of decoder layers (per model chunk under the interleaved schedule), N
// micro-batches per iteration run by a GPipe, 1F1B or interleaved (virtual-pipeline) schedule,
// gradient accumulation over the micro-batches, then per rank the data-parallel gradient
// AllReduce, loss-scale unscaling, clip by a global norm over all ranks and ApplyMomentum.
//
// The layer is a SwiGLU feed-forward on tiny tensors (2 tokens x 8 hidden values): RmsNorm,
// gate and up "MatMul" (elementwise by the lane's weight vector: the simulator is about data
// flow, schedules and statistics, not linear algebra), SiLU, the SwiGLU Mul, down MatMul, the TP
// AllReduce of the partial sums, residual Add; its backward under Gradients/ with the SwiGLU
// backward Muls, the TP AllReduce of the input gradient, RmsNormGrad and the weight gradients
// accumulated in fp32. Every value is real fp16/fp32 arithmetic (DemoKernels, INF/NAN mode):
// an overflow starts exactly where a result passes 65504 and spreads by IEEE rules.
//
// The overflow: one rank's up-projection weight of one layer holds a large entry on a dimension
// only an outlier token uses; the outlier is fed in one micro-batch of `originIteration`, so that
// rank's SwiGLU-backward Mul (dgate = dm * up) passes 65504 there and nowhere else.
//
// Time: each rank has its own clock (ops take 6 us + size; a Receive ends no earlier than its
// Send's start + 37 us; a collective ends on every member 25 us after the last arrived). A stage's
// TP lanes run in lock step; among the stages whose next unit is ready, the one whose clock is
// earliest runs first, so the per-rank order is the schedule's and the timing follows from the
// dependencies. The trace is a ClusterTrace (cluster_trace.h): the same writer and the same
// ground-truth derivation as the small cluster scenarios.
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/demo/cluster_trace.h"
#include "core/demo/demo_kernels.h"

namespace dl::demo {

enum class PipelineSchedule : std::uint8_t { GPipe, OneFOneB, Interleaved };
const char* pipelineScheduleName(PipelineSchedule s);  // "gpipe", "1f1b", "interleaved"

struct PipelineSpec {
    int pipelineStages = 4, tensorParallel = 2, dataParallel = 1;
    int layersPerStage = 2;  // per model chunk
    int microBatches = 4;
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    int chunks = 2;  // model chunks per stage under Interleaved (else 1)
    int iterations = 4;
    int originIteration = 2;
    int originStage = 2, originLane = 1;  // in data-parallel replica 0
    int originMicroBatch = -1;            // -1: microBatches / 2
    int originLayer = -1;                 // layer of the origin stage's last chunk; -1: the middle one
    bool globalNorm = true;               // clip by global norm (an AllReduce over all ranks)
    int killedIteration = -1;             // the job is killed during this iteration (-1: it ran to the end)
    double killedFraction = 0.6;          // ... after this share of that iteration's wall time
    float upWeightSpike = 20.f;  // the origin layer's up weight on the outlier dimension (calibrated by the scenario)
    std::int64_t baseTimestampUs = 1700000000000000;
    std::vector<std::int64_t> rankClockOffsetUs;  // added to each rank's true time in written timestamps
};

// Ground truth of the Send/Receive traffic, from the event log.
struct PipelinePair {
    int sendOp = -1, recvOp = -1;  // indices into ClusterTrace::ops
};

class PipelineSim {
public:
    explicit PipelineSim(const PipelineSpec& spec);
    void run();

    ClusterTrace trace;
    std::vector<PipelinePair> pairs;  // every Send with the Receive it fed, in simulation order
    float dgateProbe = 0;             // max |dm * up| on the outlier dimension at the origin, before rounding

    int ranks() const { return m_pp * m_tp * m_dp; }
    // MindSpore numbers stages in blocks of device_num / pipeline_stages; inside a stage the
    // tensor-parallel lanes are consecutive: rank = stage * (dp * tp) + replica * tp + lane.
    int rankOf(int replica, int stage, int lane) const { return stage * m_dp * m_tp + replica * m_tp + lane; }

private:
    struct Unit {
        bool backward;
        int mb, chunk;
    };
    struct Saved {
        TensorP x, n, rstd, g, u, s, m;
    };  // one layer's forward values
    struct Weights {
        TensorP wg, wu, wd, ag, au, ad, mg, mu, md;
    };  // fp16 weights, fp32 gradient and momentum accumulators
    struct HeadState {
        TensorP wh, ah, mh;
    };

    void buildSchedules();
    bool ready(int replica, int stage) const;
    void runUnit(int replica, int stage, const Unit& u);
    void forwardUnit(int replica, int stage, int mb, int chunk);
    void backwardUnit(int replica, int stage, int mb, int chunk);
    void optimizerStep();
    void cutKilledIteration();
    void stampTimestamps();
    TensorP reduceTokens(const TensorP& a, const TensorP& b);
    TensorP accumulate(const TensorP& acc, const TensorP& g);

    int rec(int rank, const std::string& scope, const std::string& type, std::vector<TensorP> in,
            std::vector<TensorP> out, ClusterOpKind kind = ClusterOpKind::Compute);
    TensorP out(int op, std::size_t slot = 0) const { return trace.ops[std::size_t(op)].outputs.at(slot); }
    int place(int rank, const std::string& scope, const std::string& type);
    void link(ClusterOp& op, const std::vector<TensorP>& candidates);
    void send(int rank, int dest, int mb, int destVs, bool backward, const std::string& scope, const TensorP& t);
    TensorP receive(int rank, int mb, int vs, bool backward, const std::string& scope);
    std::vector<TensorP> allReduce(const std::vector<int>& ranks, const std::vector<TensorP>& in,
                                   const std::string& scope);
    TensorP scalar(DType t, float v) { return m_k.make(t, {}, {m_k.round(t, v)}); }
    int virtualStage(int stage, int chunk) const { return chunk * m_pp + stage; }
    int globalLayer(int stage, int chunk, int l) const {
        return virtualStage(stage, chunk) * m_spec.layersPerStage + l;
    }

    PipelineSpec m_spec;
    int m_pp, m_tp, m_dp, m_chunks;
    DemoKernels m_k;
    int m_iter = 0, m_originLayer = 0, m_originMb = 0;
    float m_lossSum = 0;
    TensorP m_emb, m_gamma;
    std::vector<std::vector<Unit>> m_schedule;                            // [stage]
    std::vector<std::size_t> m_next;                                      // [replica * pp + stage] next unit
    std::vector<std::map<std::tuple<int, int, int>, Weights>> m_weights;  // [rank] (chunk, layer, 0)
    std::vector<HeadState> m_head;                                        // [rank], last stage only
    std::map<std::tuple<int, int, int, int>, Saved> m_saved;              // (rank, mb, chunk, layer)
    std::map<std::tuple<int, int, int>, TensorP> m_headIn;                // (rank, mb, chunk) -> last hidden
    std::map<std::tuple<int, int, int>, TensorP> m_dyOf;                  // (rank, mb, chunk) -> head gradient
    std::vector<std::vector<float>> m_tokens;                             // [mb] token ids of the iteration
    std::vector<std::vector<float>> m_labels;
    std::vector<std::vector<std::pair<std::string, std::string>>> m_graph;  // [stage] (type, full name)
    std::vector<std::uint32_t> m_opCounter;                                 // [stage]
    std::vector<std::int64_t> m_now;                                        // [rank] true clock
    std::vector<std::uint32_t> m_pos;                                       // [rank] position in the stage graph
    std::unordered_map<const DemoTensor*, int> m_producer;
    std::map<std::tuple<int, int, int, bool>, int> m_inFlight;  // (dest, mb, its virtual stage, backward) -> Send op
    std::map<std::tuple<int, int, bool>, std::deque<int>> m_sentOn;  // (src, dest, backward) -> Sends not yet received
};

}  // namespace dl::demo

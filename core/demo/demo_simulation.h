#pragma once
// One simulated training run of the demo network (see demo_model.h). Probe runs (record=false)
// only collect the culprit row's numbers, used by DemoModel to calibrate the initial weights.
#include <array>
#include <map>
#include <string>
#include <vector>

#include "core/demo/demo_kernels.h"
#include "core/demo/demo_options.h"
#include "core/demo/demo_trace.h"

namespace dl::demo {

struct DemoCalibration {
    float alpha = 0.5f;          // how much the culprit head row points along the hidden states' mean
    float rowScale = 0.77f;      // initial norm of the culprit head row
    float decoyValue = 40000.f;  // outlier embedding entry fed in the decoy iteration
    bool forwardOrigin = false;  // first layer tips the outlier past 65504 (ForwardOrigin scenario)
    float headDecay = 0.84f;     // per-step weight-decay factor of the head weight
};

struct DemoProbe {
    std::vector<float> culpritDy, culpritY;  // per iteration, before SqrtGrad
};

class DemoSimulation {
public:
    DemoSimulation(const DemoOptions& options, const DemoCalibration& calib, bool record, DType sqrtPrecision);
    void run(int iterations);

    DemoTrace trace;
    DemoProbe probe;

private:
    struct Node {
        std::string type, fullName, shortName;
        StreamKind stream;
        std::uint32_t task;
    };
    struct LayerCache {
        TensorP x, n, rstd, h, a;
    };
    struct Layer {
        TensorP gamma, w1, w2, acc1, acc2, dw1, dw2;
        LayerCache c;
    };

    void initParams();
    TensorP rec(int rank, const std::string& scope, const std::string& type, std::vector<TensorP> in,
                std::vector<TensorP> out, StreamKind stream = StreamKind::Compute);
    void send(int rank, int tag, bool backward, const TensorP& t);
    TensorP receive(int rank, int tag, bool backward);
    TensorP forwardStage(int rank);
    TensorP layerForward(int rank, int l, const TensorP& x);
    TensorP layerBackward(int rank, int l, const TensorP& dOut);
    TensorP headForwardBackward(const TensorP& x);
    TensorP sqrtGradChain(const std::string& head, const TensorP& y, const TensorP& dy, const TensorP& w);
    void optimizer(int rank);
    void update(int rank, TensorP& w, TensorP& acc, const TensorP& grad, bool decay);
    TensorP scalar(DType t, float v);

    const DemoOptions& m_o;
    DemoCalibration m_cal;
    bool m_record;
    DType m_sqrtPrec;
    DemoKernels m_k;
    int m_iter = 0;

    TensorP m_emb, m_normF, m_head, m_headAcc, m_headGrad;
    std::array<std::array<Layer, 2>, 4> m_layers;
    TensorP m_lastHidden, m_lossMean;
    LayerCache m_finalNorm;
    std::vector<float> m_ids, m_labels;

    std::vector<std::vector<Node>> m_graph;  // static graph per rank (filled in iteration 0)
    std::vector<std::uint32_t> m_opCounter;
    std::vector<std::array<std::uint32_t, 2>> m_taskCounter;
    std::vector<std::int64_t> m_now;
    std::vector<std::uint32_t> m_pos;
    std::map<std::pair<int, bool>, std::pair<std::int64_t, TensorP>> m_inFlight;
};

}  // namespace dl::demo

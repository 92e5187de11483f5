#pragma once
// The event log of one simulated cluster run (cluster_sim.h): every operator execution on every
// rank with its tensors, its true (common-clock) start and end, the raw timestamps its rank's
// clock wrote, and which earlier executions handed it a bad (Inf/NaN) value. The ground-truth
// chain (cluster_truth.h) is derived from these links only.
#include <cstdint>
#include <string>
#include <vector>

#include "core/demo/demo_tensor.h"
#include "core/demo/demo_trace.h"

namespace dl::demo {

enum class ClusterOpKind : std::uint8_t { Compute, Send, Receive, Collective, Optimizer };

struct ClusterOp {
    int rank = 0, stage = 0, lane = 0;  // lane = index within the tensor-parallel group
    int replica = 0;                    // data-parallel replica (pipeline_sim.h)
    int iteration = 0;
    std::uint32_t position = 0;  // index in the stage graph's execution order
    std::string type;            // "SqrtGrad"
    std::string fullName;        // scoped name as in execution_order
    ClusterOpKind kind = ClusterOpKind::Compute;
    StreamKind stream = StreamKind::Compute;
    std::int64_t trueStartUs = 0, trueEndUs = 0;  // common clock, from the start of the run
    std::vector<TensorP> inputs, outputs;
    std::vector<std::int64_t> tensorTimestampUs;  // raw rank clock per dumped tensor: inputs, then outputs
    int tag = -1;                                 // Send/Receive: sr_tag
    bool backward = false;                        // under Gradients/
    int peer = -1;                                // Send: destination rank, Receive: source rank
    int collective = -1;                          // index into ClusterTrace::collectives
    bool badInput = false, badOutput = false;
    // The execution whose output was the earliest-produced bad value this one read (for a
    // Receive: the Send; for a collective: whichever member fed the earliest bad contribution);
    // -1 when nothing bad came in.
    int cause = -1;
    std::vector<int> badFrom;  // every execution that handed this one a bad value

    bool anomalous() const { return badInput || badOutput; }
    bool spontaneous() const { return badOutput && badFrom.empty(); }  // the arithmetic itself overflowed
};

struct ClusterTrace {
    int pipelineStages = 0, tensorParallel = 0, ranks = 0, iterations = 0;
    std::vector<ClusterOp> ops;                       // in the order the simulation ran them
    std::vector<std::vector<std::string>> execOrder;  // [stage] -> full names (one graph per stage)
    std::vector<std::vector<int>> collectives;        // [instance] -> member op indices
    // [rank] -> pipeline stage; empty: rank / tensorParallel (the small scenarios: no data parallelism)
    std::vector<int> stageOfRank;
    int stageOf(int rank) const { return stageOfRank.empty() ? rank / tensorParallel : stageOfRank[std::size_t(rank)]; }
    std::vector<float> lossPerIteration;
};

bool isBad(const DemoTensor& t);  // any NaN or +/-Inf element

}  // namespace dl::demo

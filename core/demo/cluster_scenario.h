#pragma once
// Multi-rank test dumps whose true causal order follows from a simulation (cluster_sim.h), not
// from typed answers: a PP x TP cluster trains a tiny fp16 network; an overflow starts where the
// arithmetic passes 65504 and spreads by IEEE rules through Send/Receive, AllReduce and weight
// updates. Each run is written as a MindSpore 2.4 kernel-by-kernel statistics dump
// (saved_data "statistic", 2.3+ statistic.csv) and returns the ground truth read from the
// simulation's own event log. For tests only (not part of `dumplens-cli demo`); see
// core/demo/README.md.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/demo/graph_ir_writer.h"

namespace dl::demo {

enum class ClusterScenario {
    // PP4: SqrtGrad of the NormHead backward on rank 3 overflows in iteration 1; ApplyMomentum
    // writes the inf into the head weight; in iteration 2 rank 3's loss is NaN and the backward
    // carries it 3 -> 2 -> 1 -> 0.
    BackwardNextIteration,
    // PP4: stage 1's residual Add passes 65504 in iteration 1 (an outlier token); forward Sends
    // carry it 1 -> 2 -> 3, the backward of the same iteration brings it back to 0 (reached last).
    ForwardThenBackward,
    // PP4 x TP2 (8 ranks, rank = stage * 2 + lane): SqrtGrad on rank 6 (lane 0 holds the culprit
    // vocabulary row) in iteration 1; in iteration 2 the softmax's TP AllReduce carries it to
    // rank 7 in the same step, then the backward goes {6,7} -> {4,5} -> {2,3} -> {0,1}.
    TensorParallel,
    // PP4 with clip-by-global-norm: rank 3's SqrtGrad overflows in iteration 1, the global-norm
    // AllReduce over all ranks hands the inf to ranks 0, 1, 2 at once.
    GlobalNorm,
};
const char* clusterScenarioName(ClusterScenario s);  // "backward_next_iteration", ...
std::vector<ClusterScenario> allClusterScenarios();

struct ClusterScenarioOptions {
    bool writeTensors = false;      // also write the .npy tensors (saved_data "full")
    bool stagesInRankTable = true;  // hccl.json devices carry "stage" (MindSpore's own table has none)
    bool timestamps = true;         // false: timestamps written as 0, as a dump that lost them
    bool overflowOnly = false;      // op_debug_mode 3: only ops with an Inf/NaN output, no comm ops
    bool executionOrder = true;     // false: no execution_order/ (names alone tell forward from backward)
    bool graphIr = false;           // also m_rank{r}/graphs/ms_output_trace_code_graph_0.ir (and truth.dataEdges)
    std::vector<std::int64_t> rankClockOffsetUs;  // empty: 0, +850, -3000, +420 (... -1500, +2200, +300, -700)
    std::int64_t baseTimestampUs = 1700000000000000;
    std::string netName = "Llama";
};

// How a chain step got its bad value.
enum class ClusterVia { Origin, SendReceive, Collective, SameRank, WeightUpdate };
const char* clusterViaName(ClusterVia v);  // "origin", "send_receive", "collective", "same_rank", "weight_update"

struct ClusterAnomaly {
    int rank = -1;
    int iteration = -1;
    std::string opType;
    std::string fullName;             // as in execution_order
    std::int64_t trueUs = 0;          // end of the op on the common clock (from the run's start)
    std::int64_t rawTimestampUs = 0;  // first timestamp the rank's clock wrote for it (the index's startUs)
};

struct ClusterChainStep {
    std::vector<int> ranks;              // ranks where this op went bad by this hop (TP peers together)
    std::vector<int> firstReached;       // those of `ranks` for which this is their first anomaly
    std::string opType, fullName;        // of the earliest rank
    std::vector<std::string> fullNames;  // per entry of `ranks` (stages compile their own graphs)
    int iteration = -1;
    std::int64_t trueUs = 0;                   // earliest end among `ranks`
    std::vector<std::int64_t> rawTimestampUs;  // per entry of `ranks`
    ClusterVia via = ClusterVia::Origin;
    std::string viaOp;          // the Send (send_receive), the collective, or the optimizer op (weight_update)
    int tag = -1;               // sr_tag of the Send/Receive pair
    std::vector<int> viaRanks;  // the sending rank(s), or the collective's members
    int causedBy = -1;          // index of the step the earliest bad value came from; -1 for the origin
    // Every step some bad value of this step came from without passing another step (causedBy
    // is one of them): an analyzer that names any of them is right.
    std::vector<int> possibleCauses;
};

// One Send and the Receive it fed, as the event log has them.
struct ClusterPairTruth {
    int sendRank = -1, recvRank = -1, iteration = -1;
    std::string sendName, recvName;  // full scoped names (as in execution_order)
    bool backward = false;
};

struct ClusterScenarioTruth {
    ClusterScenario scenario = ClusterScenario::BackwardNextIteration;
    int pipelineStages = 0, tensorParallel = 0, ranks = 0, iterations = 0;
    std::vector<int> stageOfRank;
    std::vector<std::int64_t> rankClockOffsetUs;
    ClusterAnomaly origin;
    std::vector<ClusterAnomaly> firstAnomaly;                       // [rank]; rank -1 when that rank never went bad
    std::vector<ClusterChainStep> chain;                            // ordered by trueUs
    std::vector<std::vector<std::size_t>> opsPerRankIteration;      // [rank][iteration]
    std::vector<std::vector<std::size_t>> tensorsPerRankIteration;  // [rank][iteration]
    std::size_t spontaneousOverflows = 0;  // ops whose own arithmetic overflowed on clean inputs
    std::vector<float> lossPerIteration;
    std::size_t filesWritten = 0;
    // Pipeline runs (pipeline_scenario.h): data parallelism, micro-batches, the job killed during
    // killedIteration (-1: not), every Send/Receive pair, the TP groups and each rank's replica.
    int dataParallel = 1, microBatches = 1, killedIteration = -1;
    std::vector<ClusterPairTruth> pairs;
    std::vector<std::vector<int>> tpGroups;
    std::vector<int> replicaOfRank;
    // With graphIr: (rank, iteration) -> the simulation's data edges between stage-graph positions
    // (which op output the tensor object each op read), the ground truth of the IR's edges.
    std::map<std::pair<int, int>, std::vector<KernelEdge>> dataEdges;
};

// Writes the graph IR of every rank and fills truth.dataEdges (graph_ir_writer.h).
bool writeGraphIrAndTruth(const std::string& root, const ClusterTrace& trace, ClusterScenarioTruth& truth,
                          std::string& error);

// Simulates `s` and writes it as a dump root at `root` (created; nothing is written outside it):
//   m_rank{r}/{net}/0/{iter}/statistic.csv (+ *.npy with writeTensors)
//   m_rank{r}/execution_order/ms_execution_order_graph_0.csv, ms_global_execution_order_graph_0.csv
//   m_rank{r}/.dump_metadata/{data_dump.json, config.json, hccl.json}
bool writeClusterScenario(const std::string& root, ClusterScenario s, ClusterScenarioTruth& truth, std::string& error);
bool writeClusterScenario(const std::string& root, ClusterScenario s, const ClusterScenarioOptions& options,
                          ClusterScenarioTruth& truth, std::string& error);

// Any cluster (ClusterSpec: PP x TP, origin, global norm, clock offsets) written the same way,
// for tests of dumps the scenarios above do not cover. Succeeds only when the simulation overflows
// where the spec says and nowhere else (the SqrtGrad case is calibrated to overflow in
// spec.originIteration first; a forward origin overflows on every TP lane of stage 1 together).
struct ClusterSpec;
bool writeClusterRun(const std::string& root, const ClusterSpec& spec, const ClusterScenarioOptions& options,
                     ClusterScenarioTruth& truth, std::string& error);

}  // namespace dl::demo

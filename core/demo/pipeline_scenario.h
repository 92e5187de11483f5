#pragma once
// Pipeline runs at production shape (pipeline_sim.h) written as MindSpore 2.4 kernel-by-kernel
// dumps, with the ground truth from the simulation's event log: the origin, the chain, every
// Send/Receive pair, the stage map, the TP groups and the data-parallel replicas. For tests and
// benchmarks only (not part of `dumplens-cli demo`); see core/demo/README.md.
#include <string>

#include "core/demo/cluster_scenario.h"
#include "core/demo/pipeline_sim.h"

namespace dl::demo {

// Simulates `spec` (calibrating the origin's up-weight spike so that exactly one op, the
// SwiGLU-backward Mul of the origin rank, overflows, in spec.originIteration) and writes it at
// `root` like writeClusterRun. False with a reason when the run does not tell the story the spec
// promises.
bool writePipelineRun(const std::string& root, const PipelineSpec& spec, const ClusterScenarioOptions& options,
                      ClusterScenarioTruth& truth, std::string& error);

// The rank offsets the pipeline runs use unless told: deterministic, within +/- maxUs.
std::vector<std::int64_t> pipelineClockOffsets(int ranks, std::int64_t maxUs);

}  // namespace dl::demo

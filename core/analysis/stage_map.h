#pragma once
// Which pipeline stage each rank runs: from --stages, the rank table, the Send/Receive
// topology or the ops each rank holds (the stage with the loss and the head is last).
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/analysis_result.h"
#include "core/analysis/comm_matcher.h"
#include "core/model/dump_index.h"

namespace dl {

// "0:0,1:1,2:2,3:3" or "0-1:0,2-3:1" (rank or rank range ':' stage). False with a reason on
// malformed text, a rank given twice or a negative/huge number.
bool parseStageSpec(std::string_view spec, StageMap& out, std::string& error);

// Best available stage map. `spec` (may be empty) overrides everything; a malformed spec is
// reported in `warnings` and ignored. Never fails: an unknown map has stageCount 0.
StageMap inferStageMap(const DumpIndex& index, const std::vector<CommOp>& comm, std::string_view spec,
                       std::vector<std::string>& warnings);

// Fills m.tpGroups (member sets of the model's collectives within one stage) and m.replicas
// (ranks joined by Send/Receive pairs and TP groups: one data-parallel pipeline each).
void describeParallelism(const DumpIndex& index, const CommMatch& match, StageMap& m);

// Ops only the last stage holds: the loss and the (normalised) LM head.
bool isLossOrHeadOp(const DumpIndex& index, const OpRecord& op);
// Ranks holding such an op: the same as isLossOrHeadOp over every op, testing each string once.
std::set<std::uint32_t> lossOrHeadRanks(const DumpIndex& index);

}  // namespace dl

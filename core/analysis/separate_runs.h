#pragma once
// Two runs in one folder (issue 27): a parent folder holding runA/rank_0/... and runB/rank_0/...
// (or two msprobe step trees, runA/step0/rank0 and runB/step0/rank0) gives two rank 0s that the
// index, the timeline and the analysis would silently take for one. A run's root is its rank
// folder's path above the first rank_N / device_N / rankN / stepN component; the folder holds
// separate runs when one rank number lies under two roots (roots with disjoint ranks are hosts of
// one run: host0/rank_0..7, host1/rank_8..15).
#include <string>
#include <vector>

#include "core/model/dump_index.h"

namespace dl {

// The root of the run a rank folder belongs to ("runA" for "runA/rank_0", "" for "rank_0" or
// "step0/rank0").
std::string runRootOf(const std::string& rankFolder);
// The roots of the separate runs under the index root, sorted ("." for the root itself); empty
// when it holds one run.
std::vector<std::string> separateRuns(const DumpIndex& index);
// "this folder holds 2 separate runs (runA, runB): ..." for the verdict; "" for one run.
std::string separateRunsWarning(const std::vector<std::string>& runs);

}  // namespace dl

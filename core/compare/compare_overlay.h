#pragma once
// What the compare views draw over two aligned runs: each op's partner in the other run, each
// op's comparison state, and the comparison row of each tensor, computed once so that the
// stacked timelines, the link strip and the aligned table agree.
#include <cstdint>
#include <vector>

#include "core/compare/run_comparison.h"
#include "core/query/op_state.h"

namespace dl {

// Ordered by severity like OpState (an op shows its worst tensor; the first divergence beats all),
// so the timeline's level-of-detail merge keeps the worst state of a bucket.
enum class CompareState : std::uint8_t { Agree = 0, NotCompared, Unmatched, Diverged, FirstDivergence };
inline constexpr int kCompareStateCount = 5;
const char* compareStateName(CompareState s);  // "agree", "no tensors", "only in this run", ...

struct CompareOverlay {
    std::vector<std::uint32_t> partnerA, partnerB;          // per op: the op in the other run, or kNoIndex
    std::vector<std::uint32_t> rowOfTensorA, rowOfTensorB;  // per tensor: comparison row, or kNoIndex
    // Per op and tensor, in the shape the timeline takes: OpState values carry CompareState
    // ordinals (same count, same severity order), so buildTimeline and its LOD are reused as is.
    OpStates statesA, statesB;

    CompareState stateA(std::uint32_t op) const { return CompareState(statesA.op[op]); }
    CompareState stateB(std::uint32_t op) const { return CompareState(statesB.op[op]); }
};

CompareOverlay buildCompareOverlay(const RunComparison& c, const DumpIndex& a, const DumpIndex& b);

}  // namespace dl

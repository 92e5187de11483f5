#pragma once
// The chain from the origin to every rank it reached: Send/Receive and collective hops in the
// first bad iteration, then, for ranks reached only later, the path through the weights: the
// optimizer that applied the bad gradient, the first anomaly of the next iteration, and the hops
// from there. Each step names the step it came from and through what.
#include <cstdint>
#include <vector>

#include "core/analysis/analysis_context.h"

namespace dl {

// The chain in causal order (see ChainStep): hops found earliest-arrival first within an
// iteration, tensor-parallel peers merged, then listed happens-before first and by time.
// `orderedByClock`: chainOrderedByClock(ctx), computed once by the caller.
std::vector<ChainStep> buildChain(const AnalysisContext& ctx, const OverflowPoint& origin, bool orderedByClock,
                                  std::size_t maxSteps = 128);

// True when every op has a timestamp, so the chain is ordered by the clock-aligned time where
// no link decides; otherwise by happens-before position (execution order and messages).
bool chainOrderedByClock(const AnalysisContext& ctx);

// True when no message or collective in the dump links some ranks (an overflow-only dump holds
// none) and the stage map places every rank: steps of unlinked ranks are then ordered by the
// pipeline's data flow (stage order), not by clocks that nothing relates; time only breaks ties
// inside one stage.
bool chainOrderedByFlow(const AnalysisContext& ctx);

// Ranks in the origin's stage (any rank when stages are unknown) whose op of the same name and
// type shows an anomaly in the same iteration: tensor-parallel peers that overflowed together.
std::vector<std::uint32_t> tensorParallelPeers(const AnalysisContext& ctx, std::uint32_t op);

}  // namespace dl

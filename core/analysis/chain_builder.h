#pragma once
// The chain from the origin to every stage it reached: Send/Receive and collective hops in the
// first bad iteration, then the first anomaly of each stage not yet reached in later iterations
// (damage that travelled through the weights). Tensor-parallel peers are merged into one step.
#include <cstdint>
#include <vector>

#include "core/analysis/analysis_context.h"

namespace dl {

std::vector<ChainStep> buildChain(const AnalysisContext& ctx, const OverflowPoint& origin, std::size_t maxSteps = 64);

// Ranks in the origin's stage (any rank when stages are unknown) whose op of the same name and
// type shows an anomaly in the same iteration: tensor-parallel peers that overflowed together.
std::vector<std::uint32_t> tensorParallelPeers(const AnalysisContext& ctx, std::uint32_t op);

}  // namespace dl

#pragma once
// Ordering anomalies across ranks whose clocks differ: per-rank clock offsets estimated from
// Send/Receive pairs (a Receive ends after its Send started), and happens-before through the
// pairs and collectives.
#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/analysis_context.h"

namespace dl {

// Fills ctx.clockOffsetUs (the lowest rank is the reference). Notes describe what was found.
void estimateClockOffsets(AnalysisContext& ctx, std::vector<std::string>& notes);

// True when `a` happens before `b` through execution order and communication within one
// iteration (or a's iteration is earlier).
bool happensBefore(const AnalysisContext& ctx, std::uint32_t a, std::uint32_t b);

enum class OrderEvidence { Causal, Clock, Heuristic };

// Whether `a` came first, and on which evidence. Same rank: execution order (Causal).
bool firstOf(const AnalysisContext& ctx, std::uint32_t a, std::uint32_t b, OrderEvidence& evidence);

}  // namespace dl

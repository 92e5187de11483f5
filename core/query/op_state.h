#pragma once
// The display state of every tensor and op (normal, near limit, saturated, inf/nan, origin), derived
// once from the statistics and the analysis so that the timeline, the table and the filters agree.
#include <cstdint>
#include <vector>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"

namespace dl {

// Ordered by severity: an op shows the worst state of its tensors, and Origin beats everything.
enum class OpState : std::uint8_t { Normal = 0, NearLimit, Saturated, InfNan, Origin };
inline constexpr int kOpStateCount = 5;
const char* opStateName(OpState s);  // "normal", "near limit", "saturated", "inf/nan", "origin"
inline constexpr std::uint32_t opStateBit(OpState s) { return 1u << static_cast<unsigned>(s); }
inline constexpr std::uint32_t kAllOpStates = (1u << kOpStateCount) - 1;

struct OpStates {
    std::vector<OpState> op;                   // per DumpIndex::ops
    std::vector<OpState> tensor;               // per DumpIndex::tensors
    std::uint64_t counts[kOpStateCount] = {};  // ops per state
};

// `analysis` may be null (index only). Near the limit: the analysis's near-limit tensors when it is
// given, else a finite tensor whose share of 65504 (max|x| / 65504) is nearLimitThreshold or more.
OpStates computeOpStates(const DumpIndex& index, const AnalysisResult* analysis, double nearLimitThreshold = 0.5);

}  // namespace dl

#pragma once
// Internal to the overflow analysis: the steps analyze() (overflow_analyzer.cpp) runs in order.
// overflow_classify.cpp holds the pass over all tensors, overflow_origin.cpp the iterations, the
// persistence and the origin, overflow_evidence.cpp the sentences on the chain and the stages.
#include <cstdint>
#include <optional>

#include "core/analysis/analysis_context.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/analysis/stage_map.h"

namespace dl::overflow_detail {

bool classifyAll(AnalysisContext& ctx, const AnalysisOptions& opt, AnalysisResult& res);
void buildRanges(AnalysisContext& ctx);
void iterationStatuses(const AnalysisContext& ctx, AnalysisResult& res);
void judgePersistence(const DumpIndex& idx, AnalysisResult& res);
std::uint32_t pickOrigin(const AnalysisContext& ctx, std::uint32_t iter, AnalysisResult& res);
void judgeReadability(const DumpIndex& idx, AnalysisResult& res);
std::optional<std::uint32_t> castValueMaker(const AnalysisContext& ctx, std::uint32_t castOp);
void describeChain(AnalysisResult& res);
void describeStages(const StageMap& m, AnalysisResult& res);

}  // namespace dl::overflow_detail

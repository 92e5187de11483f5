#pragma once
// Rendering an AnalysisResult: the "dumplens.analysis/1" JSON object and a readable verdict.
#include <string>

#include <nlohmann/json.hpp>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"

namespace dl {

nlohmann::json toJson(const DumpIndex& index, const AnalysisResult& result);
// Plain-text verdict: first overflow, chain stage by stage, replay table, recommendation,
// near-limit list, warnings (analysis_text.cpp).
std::string toText(const DumpIndex& index, const AnalysisResult& result);

}  // namespace dl

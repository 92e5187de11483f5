#pragma once
// Rendering an AnalysisResult: the "dumplens.analysis/1" JSON object and a readable verdict.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"

namespace dl {

nlohmann::json toJson(const DumpIndex& index, const AnalysisResult& result);
// The "first_overflow" and "chain" members of toJson alone (what a watch's overflow event carries).
nlohmann::json firstOverflowJson(const DumpIndex& index, const AnalysisResult& result);
nlohmann::json chainJson(const DumpIndex& index, const AnalysisResult& result);
// Every "op_index" and "tensor_index" in `j` (at any depth) passed through `op` / `tensor`: the
// JSON of an index cut down (first_overflow_inputs.h) numbered as the whole one's. False, with
// `j` partly renumbered, when one of them returns nullopt (a number the whole index cannot tell).
bool renumberIndices(nlohmann::json& j, const std::function<std::optional<std::uint64_t>(std::uint32_t)>& op,
                     const std::function<std::optional<std::uint64_t>(std::uint32_t)>& tensor);
// Plain-text verdict: first overflow, chain stage by stage, replay table, recommendation,
// near-limit list, warnings (analysis_text.cpp).
std::string toText(const DumpIndex& index, const AnalysisResult& result);

}  // namespace dl

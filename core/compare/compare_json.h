#pragma once
// Output of a run comparison: JSON (schema dumplens.compare/1), CSV (one row per matched
// tensor) and a readable text summary.
//
// JSON: {"schema":"dumplens.compare/1", "story": one line,
//        "first_divergence": null | {"rank","iteration","op_type","op_name","tensor","class"} (the first
//        diverged/nonfinite/shape/md5 row), "first_difference" (first row not identical),
//        "first_nonfinite_mismatch" (same form), "counts": {class: rows}, "precision": dtype | null,
//        "matched": matched tensors, "only_in_a"/"only_in_b": tensors without a counterpart,
//        "matched_ops", "ops_only_in_a", "ops_only_in_b", "exact_ops", "tolerant_ops", "pinned_ops",
//        "diverged", "from_data", "from_stats", "thresholds", "threshold_text",
//        "first_divergence_detail" (op_name_b, reason, order evidence, metrics) | null,
//        "unmatched_ops_a"/"unmatched_ops_b" (first 1000), "warnings", "rows": [...]}
// Every row carries "class" (tensor_verdict.h) beside "diverged". Metrics that do not apply are null.
#include <string>

#include "core/compare/run_comparison.h"

namespace dl {

std::string compareJson(const RunComparison& c, const DumpIndex& a, const DumpIndex& b);
std::string compareCsv(const RunComparison& c, const DumpIndex& a, const DumpIndex& b);
std::string compareText(const RunComparison& c, const DumpIndex& a, const DumpIndex& b);

}  // namespace dl

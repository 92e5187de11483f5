#pragma once
// Compares two runs: aligns their ops, computes metrics for every matched tensor (from tensor
// data when both sides have it, else from statistics), gives each pair a class (identical,
// within the precision of the runs' dtypes, diverged, nonfinite, shape, md5) and finds the first
// divergence: the earliest matched tensor, in run A's execution order, of a divergence class.
// Across ranks "earliest" follows Send/Receive causality (then corrected clocks), like the
// overflow analysis, because rank clocks are not synchronised.
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "core/compare/argument_diffs.h"
#include "core/compare/run_aligner.h"
#include "core/compare/tensor_metrics.h"
#include "core/compare/tensor_verdict.h"
#include "core/model/dump_index.h"
#include "core/util/progress.h"

namespace dl {

enum class CompareRules : std::uint8_t {
    Precision,  // default: relative to the values' scale and the dtypes compared
    Msprobe,    // msprobe's absolute "Accuracy Reached or Not" tests
};
const char* compareRulesName(CompareRules r);

// How a matched tensor pair is judged (tensor_verdict.h for the classes).
// Precision rules (default): a pair that is not identical is `precision` when its max abs err
// is within `ulps` ulps of the precision dtype at the pair's largest finite magnitude (or its
// cosine is within `precisionCosine` of 1 with a relative L2 error within the same bound), else
// `diverged`. The precision dtype is the coarsest floating dtype of the matched tensors of both
// runs (bf16 when either run computes in bf16: its rounding reaches every later op) unless set.
// Statistics-only pairs: max, min and mean within `ulps` ulps at the value range, L2 within
// `ulps` ulps at the larger norm; a Mean or L2 of an fp16/bf16 tensor also within the rounding of
// its reduction in that dtype (judgeTensor).
// Msprobe rules: msprobe's tests (check_accuracy in msprobe's compare: "No" when Cosine < 0.99
// with MaxAbsErr > 0.001, or Cosine < 0.9, or MaxAbsErr > 1), no precision bound; passing pairs
// are `agree`.
// Under either rules the absolute tests below apply when enabled (a negative value for minimums,
// +inf for maximums is off); NaN/Inf/saturation in one run only is `nonfinite` unless nanInf is off.
struct CompareThresholds {
    CompareRules rules = CompareRules::Precision;
    double ulps = 2;                                              // precision bound; +inf: off
    double precisionCosine = 1e-4;                                // 1 - cosine allowed with the relative L2 bound
    DType precision = DType::Unknown;                             // Unknown: derived from the runs' dtypes
    double minCosine = -std::numeric_limits<double>::infinity();  // data: cosine below this ...
    double absFloor = 0.001;  // ... while max abs err (or a statistic's abs diff) exceeds this
    double minCosineAlone = -std::numeric_limits<double>::infinity();  // data: cosine below this, whatever the error
    double maxAbsErr = std::numeric_limits<double>::infinity();        // data: max abs err above this
    double maxRelErr = std::numeric_limits<double>::infinity();        // data: max relative err above this
    double minOneThousandth = -1;                                      // data: one-thousandth err ratio below this
    double minFiveThousandth = -1;                                     // data: five-thousandths err ratio below this
    // Statistics: |a-b| / max(|a|,|b|) of max, min or L2 above this (a mean against the value
    // range). msprobe rules: 0.001 (fp16 rounding is 0.05 %, a bf16 op moves figures 0.1-0.4 %).
    double statsRel = std::numeric_limits<double>::infinity();
    bool nanInf = true;  // NaN/Inf/saturation disagreement is a divergence

    static CompareThresholds defaults(CompareRules r);
};

// "rules=msprobe,cosine=0.95,max_abs=off,stats_rel=0.05,nan_inf=off" (keys: rules, ulps,
// precision (auto, float16, bfloat16, float32, float64), precision_cosine, cosine, cosine_alone, abs_floor,
// max_abs, max_rel, one_thousandth, five_thousandth, stats_rel, nan_inf). A rules= key resets
// every other key to that rules' defaults first, wherever it stands. False with a reason.
bool parseThresholds(std::string_view spec, CompareThresholds& t, std::string& error);
// The thresholds in the form parseThresholds reads back (every key, "off" where a test is off).
std::string thresholdSpec(const CompareThresholds& t);
// The thresholds as text, e.g. "beyond 2 ulps of the precision dtype, NaN/Inf disagreement".
std::string describeThresholds(const CompareThresholds& t);

struct CompareOptions {
    CompareThresholds thresholds;
    bool useData = true;          // false: statistics only, even where tensor files exist
    std::vector<OpNamePin> pins;  // from a mapping file
    IterationChoice iterations;   // which iterations to pair (run_aligner.h)
    unsigned threads = 0;         // 0: all cores
    std::stop_token stop;         // stopped: `cancelled`, every row left Unknown
    WorkCallback progress;        // tensors compared of all, from workers, serialised
};

struct TensorComparison {
    TensorMetrics metrics;
    Verdict verdict = Verdict::Unknown;
    bool diverged = false;  // isDivergence(verdict)
    std::string note;       // why data was not compared (or NaN/Inf positions differ)
    std::string reason;     // what the verdict rests on (the test crossed, the ulps ...)
};

struct RunComparison {
    RunAlignment alignment;
    std::vector<TensorComparison> rows;   // one per alignment.tensors entry
    std::vector<std::string> md5A, md5B;  // per tensor of each run (msprobe_sidecar.h), empty when none
    CompareThresholds thresholds;
    DType precision = DType::Unknown;  // the precision dtype the verdicts used
    std::size_t diverged = 0, fromData = 0, fromStats = 0;
    std::array<std::size_t, kVerdictCount> counts{};  // rows per Verdict
    std::uint64_t bytesCompared = 0;                  // tensor payload bytes read, both runs
    std::int64_t firstDivergence = -1;                // row index of the first divergence class, -1 when none
    std::int64_t firstDifference = -1;                // first row that is not identical (nor unknown)
    std::int64_t firstNonFinite = -1;                 // first nonfinite row
    // Non-tensor arguments (msprobe dump.json) that differ between matched ops, and the one that
    // comes before the first tensor divergence (run A's order; -1 when none does): the first
    // divergence then, as a changed softmax dim is, before the output it changes.
    std::vector<ArgumentDifference> argumentDiffs;
    std::int64_t firstArgument = -1;
    std::string orderEvidence;  // how the first divergence was ordered across ranks
    std::string story;          // one line: how far the runs agree and what happens then
    std::vector<std::string> warnings;
    bool cancelled = false;
    double seconds = 0;
};

RunComparison compareRuns(const DumpIndex& a, const DumpIndex& b, const CompareOptions& options);

// Re-judges every row of `c` against new thresholds without recomputing metrics: the diverged
// flags, counts, reasons and the first divergence (the GUI's adjustable threshold).
void applyThresholds(const DumpIndex& a, const DumpIndex& b, const CompareThresholds& t, RunComparison& c);

// Applies the absolute tests of `t` (cosine, max_abs, ..., stats_rel, nan_inf) to one tensor's
// metrics (data metrics when computed, else the two runs' statistics); `reason` names the first
// test that failed. The precision bound is not part of it (judgeTensor).
bool crossesThreshold(const TensorMetrics& m, const TensorStats& a, const TensorStats& b, const CompareThresholds& t,
                      std::string& reason);

// The class of one pair. `precision`: the comparison's precision dtype (from the runs or t).
// `note`: what the comparison step said (shapes, unreadable data), used in the reason. Checksums
// (msprobe's md5, "" when unknown): equal ones mean identical bytes; different ones are a
// divergence like msprobe's md5 mode ("diff"), class md5 unless the statistics diverge too.
// `elementsA`/`elementsB` (0: unknown): the tensors' element counts. A Mean or L2 norm of an
// fp16/bf16 tensor may have been reduced in that dtype (msprobe computes statistics in the
// tensor's own dtype), so its bound grows by the reduction's rounding, (n-1) unit roundoffs.
Verdict judgeTensor(const TensorMetrics& m, const TensorStats& a, const TensorStats& b, DType dtypeA, DType dtypeB,
                    DType precision, const CompareThresholds& t, const std::string& note, std::string& reason,
                    std::string_view md5A = {}, std::string_view md5B = {}, std::uint64_t elementsA = 0,
                    std::uint64_t elementsB = 0);

}  // namespace dl

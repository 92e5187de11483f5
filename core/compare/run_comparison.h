#pragma once
// Compares two runs: aligns their ops, computes metrics for every matched tensor (from tensor
// data when both sides have it, else from statistics) and finds the first divergence: the
// earliest matched tensor, in run A's execution order, whose metrics cross a threshold.
// Across ranks "earliest" follows Send/Receive causality (then corrected clocks), like the
// overflow analysis, because rank clocks are not synchronised.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "core/compare/run_aligner.h"
#include "core/compare/tensor_metrics.h"
#include "core/index/dump_index.h"

namespace dl {

// A tensor diverges when any enabled test fails. Defaults follow msprobe's "Accuracy Reached or
// Not" (No when Cosine < 0.99 with MaxAbsErr > 0.001, or MaxAbsErr > 1); tests set to a
// negative value (minimums) or +inf (maximums) are off.
struct CompareThresholds {
    double minCosine = 0.99;          // data: cosine below this ...
    double absFloor = 0.001;          // ... while max abs err (or a statistic's abs diff) exceeds this
    double maxAbsErr = 1.0;           // data: max abs err above this
    double maxRelErr = std::numeric_limits<double>::infinity();   // data: max relative err above this
    double minOneThousandth = -1;     // data: one-thousandth err ratio below this
    double minFiveThousandth = -1;    // data: five-thousandths err ratio below this
    // Statistics: |a-b| / max(|a|,|b|) of max, min or L2 above this (a mean against the value
    // range). 0.001: fp16 rounding is 0.05 %, a bf16 op in the path moves figures by 0.1-0.4 %.
    double statsRel = 0.001;
    bool nanInf = true;               // NaN/Inf positions (data) or counts (statistics) disagree
};

// "cosine=0.95,max_abs=off,stats_rel=0.05,nan_inf=off" (keys: cosine, abs_floor, max_abs,
// max_rel, one_thousandth, five_thousandth, stats_rel, nan_inf). False with a reason.
bool parseThresholds(std::string_view spec, CompareThresholds& t, std::string& error);
// The thresholds in the form parseThresholds reads back (every key, "off" where a test is off).
std::string thresholdSpec(const CompareThresholds& t);
// The thresholds as text, e.g. "cosine < 0.99 (with max_abs > 0.001), max_abs > 1, ...".
std::string describeThresholds(const CompareThresholds& t);

struct CompareOptions {
    CompareThresholds thresholds;
    bool useData = true;              // false: statistics only, even where tensor files exist
    std::vector<OpNamePin> pins;      // from a mapping file
    unsigned threads = 0;             // 0: all cores
    std::stop_token stop;
};

struct TensorComparison {
    TensorMetrics metrics;
    bool diverged = false;
    std::string note;                 // why data was not compared (or NaN/Inf positions differ)
    std::string reason;               // the threshold crossed when diverged, else the note
};

struct RunComparison {
    RunAlignment alignment;
    std::vector<TensorComparison> rows;   // one per alignment.tensors entry
    CompareThresholds thresholds;
    std::size_t diverged = 0, fromData = 0, fromStats = 0;
    std::uint64_t bytesCompared = 0;      // tensor payload bytes read, both runs
    std::int64_t firstDivergence = -1;    // row index, -1 when none
    std::string orderEvidence;            // how the first divergence was ordered across ranks
    std::vector<std::string> warnings;
    bool cancelled = false;
    double seconds = 0;
};

RunComparison compareRuns(const DumpIndex& a, const DumpIndex& b, const CompareOptions& options);

// Re-judges every row of `c` against new thresholds without recomputing metrics: the diverged
// flags, counts, reasons and the first divergence (the GUI's adjustable threshold).
void applyThresholds(const DumpIndex& a, const DumpIndex& b, const CompareThresholds& t, RunComparison& c);

// Applies the thresholds to one tensor's metrics (data metrics when computed, else the two
// runs' statistics); `reason` names the first test that failed.
bool crossesThreshold(const TensorMetrics& m, const TensorStats& a, const TensorStats& b, const CompareThresholds& t,
                      std::string& reason);

// "input.0" / "output.1"
std::string ioSlotLabel(const TensorRecord& t);

}  // namespace dl

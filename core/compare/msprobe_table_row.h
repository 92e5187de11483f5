#pragma once
// One row of msprobe's compare table while it is built (msprobe_table.h), and the two table
// generations' rules that fill its judged cells: msprobe_table_v8.cpp (8.3) and
// msprobe_table_v26.cpp (26.x). The row's own facts (names, dtypes, statistics, checksums, tensor
// metrics) come from msprobe_table.cpp and msprobe_table_tensor.cpp.
#include <optional>
#include <string>
#include <vector>

#include "core/compare/msprobe_table.h"
#include "core/formats/msprobe/msprobe_dump.h"

namespace dl::msprobe_table {

inline constexpr const char* kNA = "N/A";
inline constexpr const char* kNan = "Nan";
inline constexpr const char* kUnsupported = "unsupported";
inline constexpr const char* kNoBench = "No bench data matched.";

struct Row {
    const MsprobeArg* npu = nullptr;
    const MsprobeArg* bench = nullptr;  // nullptr: no bench row matched
    std::string name;                   // NPU Name
    std::string reqA, reqB;             // "True", "False", "N/A"
    bool reqConsistent = true;
    // Tensor mode: Cosine, EucDist, MaxAbsErr, MaxRelativeErr, the two ratios (cells as text),
    // and the messages computing them gave (8.3's Err_message; 26.x drops them).
    std::vector<std::string> metrics;
    std::string metricErr;
    // Filled by the generation's rules.
    std::string diff[4], rel[4];  // statistics mode
    std::string result, err;      // Result / Accuracy Reached or Not, Err_message
    bool isOutput() const { return npu && npu->state == MsprobeArgState::Output; }
};

// The statistic as the table shows it: Python's str() of the value, NaN as "Nan".
std::string statText(const MsprobeValue& v);

// 8.3: statistics diffs and the Warning rule, check_accuracy, md5 pass/Different, and with
// `highlight` the red/yellow messages; over the rows of one dump.json entry.
void judgeEntryV8(std::vector<Row>& rows, MsprobeTableMode mode, bool highlight);
// 26.x: statistics diffs, then the checkers (indicator_analysis/algorithm.py) per entry:
// Result pass/warning/error and Err_message as a JSON list.
void judgeEntryV26(std::vector<Row>& rows, MsprobeTableMode mode);

}  // namespace dl::msprobe_table

namespace dl::msprobe_table {

// A tensor argument's data as the index found it (nullptr: no record).
struct ArgData {
    const DumpIndex* idx = nullptr;
    const TensorRecord* t = nullptr;
};

// Tensor mode's six metric cells and their messages (Row::metrics, Row::metricErr), as the
// generation computes them from the two saved tensors (msprobe_table_tensor.cpp).
void tensorCells(MsprobeGeneration g, const MsprobeArg& npu, const MsprobeArg* bench, ArgData a, ArgData b, Row& r);

}  // namespace dl::msprobe_table

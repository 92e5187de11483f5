#pragma once
// msprobe's compare table, row for row, so that a user can diff DumpLens's comparison against
// msprobe's own (`dumplens-cli compare A B --format msprobe-csv`). Built from the two runs'
// dump.json files like msprobe builds it (msprobe core/compare/acc_compare.py, utils.py,
// npy_compare.py, multiprocessing_compute.py, highlight.py; columns from core/common/const.py
// CompareConst): one row per argument of every entry of run A, tensors and non-tensors alike,
// matched with run B's argument of the same name and shape; tensor data compared where the dump
// saved it (task "tensor"), else statistics, or checksums (summary_mode "md5").
//
// Two table generations (docs/formats.md 3.9): msprobe 8.3 (Ascend-mstt, 8.3.3 checked) and 26.x
// (Ascend/msprobe, 26.2.0 checked). Deliberate differences: CSV for both (8.3 writes xlsx: no cell
// colours; with `highlight` its highlight messages are in Err_message as it writes them), no
// "\t" after 8.3's inf/nan cells (an Excel guard), and metrics from DumpLens's float64 loop
// (tensor_metrics.h) where msprobe computes some in float32, rounded like msprobe's format_value.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/compare/run_aligner.h"
#include "core/model/dump_index.h"

namespace dl {

enum class MsprobeTableMode : std::uint8_t {
    Tensor,      // msprobe's dump_mode "all": Cosine, EucDist, MaxAbsErr, ... from tensor data
    Statistics,  // "summary": Max/Min/Mean/L2norm diffs and relative errors
    Md5,         // "md5": CRC-32 per argument
};
const char* msprobeTableModeName(MsprobeTableMode m);

enum class MsprobeGeneration : std::uint8_t {
    V8_3,  // msprobe <= 8.3 (Ascend-mstt): "Accuracy Reached or Not", Warning rule, Different
    V26,   // msprobe 26.x (Ascend/msprobe): Result pass/warning/error, JSON-list Err_message
};
// "8.3" / "26"; parseMsprobeGeneration also takes "8", "8.3.3", "26.2.0" (major.minor decides).
const char* msprobeGenerationName(MsprobeGeneration g);
bool parseMsprobeGeneration(std::string_view text, MsprobeGeneration& out);

struct MsprobeTableOptions {
    MsprobeGeneration generation = MsprobeGeneration::V26;  // the newer one, as msprobe ships now
    bool highlight = false;  // 8.3's -hl: its red/yellow rule messages appended to Err_message
    IterationChoice iterations;
};

// msprobe's header for a mode: CompareConst.COMPARE_RESULT_HEADER / SUMMARY_COMPARE_RESULT_HEADER /
// MD5_COMPARE_RESULT_HEADER, then NPU_Stack_Info when run A has stack.json, then Data_name in
// tensor mode (acc_compare.py, CreateTable.make_result_df). 26.x: tensor mode's "Accuracy Reached
// or Not" is "Result", md5 mode gains Err_message.
std::vector<std::string> msprobeTableHeader(MsprobeTableMode mode, bool stack,
                                            MsprobeGeneration g = MsprobeGeneration::V26);

struct MsprobeTableReport {
    MsprobeTableMode mode = MsprobeTableMode::Statistics;
    MsprobeGeneration generation = MsprobeGeneration::V26;
    bool stack = false;
    std::size_t rows = 0, matched = 0;
    std::vector<std::string> warnings;  // dump.json pairs, unreadable files, modes
};

// Writes the table as CSV (header line, then one line per row) to `out`. Both runs must be
// msprobe dumps; dump.json files pair by rank and step (`iterations` as in run_aligner.h; runs
// that share no step pair their k-th steps, like msprobe compares any two dump.json). False
// with a reason naming the run or file.
bool writeMsprobeTableCsv(const DumpIndex& a, const DumpIndex& b, const MsprobeTableOptions& options, std::string& out,
                          MsprobeTableReport& report, std::string& error);

}  // namespace dl

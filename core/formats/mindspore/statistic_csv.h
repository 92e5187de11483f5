#pragma once
// Parses statistic.csv text written by MindSpore (1.6-2.2 fixed 20/21 columns, 2.3+ user-ordered
// categories with a trailing comma), its A+M path, and msprobe's C++ L2 writer (Input/Output,
// Format, unquoted "(2,3)" shapes). docs/formats.md 1.6 and 3.8.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/dump_index.h"
#include "core/stats/tensor_stats.h"
#include "core/util/dtype.h"

namespace dl {

// Bits of StatisticRow::nonFinite: what the Max/Min cells prove about the tensor (2.3+ writers
// let NaN/Inf propagate into Max/Min). Independent of whether count columns exist.
enum NonFiniteSeen : std::uint8_t {
    SeenNan = 1u << 0,     // Max or Min is nan / -nan
    SeenPosInf = 1u << 1,  // Max is +inf (or Min is +inf on a non-empty tensor)
    SeenNegInf = 1u << 2,  // Min is -inf (or Max is -inf on a non-empty tensor)
};

// The text fields are views into the parsed text (no copy per row): they stay valid while that text
// lives. StatisticCsvResult keeps its own copy of the text for its rows.
struct StatisticRow {
    std::uint32_t line = 0;  // 1-based line number in the file
    std::string_view opType;
    std::string_view opName;  // as in the tensor file names of that era
    std::uint32_t taskId = 0;
    std::uint32_t streamId = 0;
    std::int64_t timestampUs = 0;
    Io io = Io::Output;
    std::uint16_t slot = 0;
    std::uint64_t dataBytes = 0;  // "Data Size" (bytes); 0 when the column is absent
    DType dtype = DType::Unknown;
    std::string_view dtypeRaw;        // "float16", "FLOAT16", "unsupported(12)" ...
    std::string_view format;          // msprobe "Format" column; empty otherwise
    std::vector<std::int64_t> shape;  // "()" -> {} (scalar)
    bool hasShape = false;
    std::string_view md5;  // "MD5" / "MD5 Value" when present
    // Figures the row supports, with `known` bits. Max/Min/Avg/L2 are finite-only: a nan/inf cell
    // leaves the figure unknown and sets `nonFinite` instead. maxAbs is set when Max and Min are.
    TensorStats stats;
    std::uint8_t nonFinite = 0;  // NonFiniteSeen bits
    // Counts in `stats` that are only lower bounds ("at least 1"): when Max/Min show a NaN/Inf and
    // the file has no column for that count, the count is set to 1 with its known bit, so
    // `nanCount + infCount() > 0` answers "has inf/nan" without a CSV-specific check. Bits are
    // stat::NanCount / PosInfCount / NegInfCount; an exact count column always wins.
    std::uint32_t lowerBoundCounts = 0;

    bool hasNan() const { return (nonFinite & SeenNan) || (stats.has(stat::NanCount) && stats.nanCount > 0); }
    bool hasInf() const {
        return (nonFinite & (SeenPosInf | SeenNegInf)) || (stats.has(stat::PosInfCount) && stats.posInfCount > 0) ||
            (stats.has(stat::NegInfCount) && stats.negInfCount > 0);
    }
};

struct StatisticCsvWarning {
    std::uint32_t line = 0;  // 1-based; 0 for file-level remarks
    std::string reason;
    WarningSeverity severity = WarningSeverity::Unreadable;  // Note: the row or file was read in full
};

struct StatisticCsvResult {
    std::shared_ptr<const std::string> text;    // what the rows' views point into (stable across moves)
    std::vector<std::string> columns;           // header names as read
    std::vector<StatisticRow> rows;             // in file order
    std::vector<StatisticCsvWarning> warnings;  // malformed rows (skipped) and ignored columns
};

// Per-row callback form, for big files: `onRow` receives each parsed row (the object is reused,
// its views point into `text`; copy what you keep). Returns false only when no usable header was found (`error` set);
// malformed rows become warnings (at most `maxWarnings`, then one summary warning).
// `fixedLayouts` false reads every row through the general loop (tests compare the two paths).
bool parseStatisticCsv(std::string_view text, const std::function<void(StatisticRow&)>& onRow,
                       std::vector<std::string>& columns, std::vector<StatisticCsvWarning>& warnings,
                       std::string& error, std::size_t maxWarnings = 1000, bool fixedLayouts = true);
bool parseStatisticCsv(std::string_view text, StatisticCsvResult& out, std::string& error);

// A statistic.csv that grows while it is read (the watch): each feed parses only lines after the
// ones fed before, with the header's column map, the line numbers and the warnings kept from
// them. Feed whole lines (each ending in '\n'): the caller keeps a partial last line for the next
// feed. Rows and warnings are those parseStatisticCsv gives for the concatenated text.
class StatisticCsvStream {
public:
    explicit StatisticCsvStream(std::size_t maxWarnings = 1000);
    ~StatisticCsvStream();
    StatisticCsvStream(StatisticCsvStream&&) noexcept;
    StatisticCsvStream& operator=(StatisticCsvStream&&) noexcept;
    // False when the text so far is not a statistic.csv (first line no usable header); from then
    // on every feed is false and ok() says why.
    bool feed(std::string_view lines, const std::function<void(StatisticRow&)>& onRow);
    // What parseStatisticCsv would return for all lines fed: false with `error` when none was a header.
    bool ok(std::string& error) const;
    const std::vector<std::string>& columns() const;
    std::vector<StatisticCsvWarning> warnings() const;  // with the summary of those not listed
    std::uint32_t lines() const;                        // lines fed

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

// Number of '\n' in `text` (16 bytes a step): sizes the drafts of a file before it is parsed.
std::size_t countLines(std::string_view text);

// Reads a whole file and parses it (error names the path on I/O failure).
bool readStatisticCsv(const std::string& path, StatisticCsvResult& out, std::string& error);

}  // namespace dl

#pragma once
// The row parser of statistic.csv (Parser): the header's columns, the fixed fast path of a
// MindSpore row and the general path with its warnings. Internal to
// core/formats/mindspore/statistic_csv.cpp, apart from its line loop and entry points; a header so
// that the loop still inlines it (it runs on every row).
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/formats/mindspore/statistic_csv.h"
#include "core/formats/mindspore/statistic_csv_cells.h"
#include "core/io/csv_delimiter_scanner.h"

namespace dl {
namespace {  // NOLINT(google-build-namespaces): included by statistic_csv.cpp only

class Parser {
public:
    Parser(const std::function<void(StatisticRow&)>& onRow, std::vector<StatisticCsvWarning>& warnings,
           std::size_t maxWarnings)
        : m_onRow(&onRow), m_warnings(warnings), m_maxWarnings(maxWarnings) {}
    // A parser kept across reads of a growing file (StatisticCsvStream): each read its own callback.
    void setOnRow(const std::function<void(StatisticRow&)>& onRow) { m_onRow = &onRow; }
    std::size_t suppressed() const { return suppressed_; }

    void setHeader(const std::vector<std::string_view>& fields, std::vector<std::string>& names) {
        m_cols.clear();
        names.clear();
        m_shapeCol = SIZE_MAX;
        m_hasCol.fill(false);
        for (std::string_view f : fields) {
            names.emplace_back(trimCell(f));
            Col c = columnFor(f);
            if (c == Col::Shape) m_shapeCol = m_cols.size();
            if (c == Col::Ignored && !trimCell(f).empty()) note(0, "ignored unknown column '" + names.back() + "'");
            m_hasCol[std::size_t(c)] = true;
            m_cols.push_back(c);
        }
        // A 2.3+ header never ends with an empty name; drop one if the header itself had a trailing comma.
        while (!m_cols.empty() && names.back().empty()) {
            m_cols.pop_back();
            names.pop_back();
        }
        m_mindSporePrefix = m_fixedLayouts && m_shapeCol == kMindSporePrefix.size() - 1 && m_cols.size() > m_shapeCol &&
            std::equal(kMindSporePrefix.begin(), kMindSporePrefix.end(), m_cols.begin());
        m_statCols.clear();
        for (Col c : m_cols) m_statCols.push_back(statCol(c));
    }
    void setFixedLayouts(bool on) { m_fixedLayouts = on; }
    bool headerUsable() const { return has(Col::OpType) && has(Col::OpName) && has(Col::Io) && has(Col::Slot); }
    std::size_t shapeCol() const { return m_shapeCol; }

    // Parses the data line starting at `pos` cell by cell as the scanner finds its commas (no
    // vector of cells, no copies: the row's strings are views into `text`) and hands it to the
    // callback, or warns with the line number. Returns the position of the line's end (its '\n'
    // or the end of the text). Quoting as in splitLine below.
    std::size_t row(std::string_view text, std::size_t pos, DelimiterScanner& scan, std::uint32_t line) {
        std::size_t end;
        if (m_mindSporePrefix && mindSporeRow(text, pos, scan, line, end)) [[likely]]
            return end;
        return generalRow(text, pos, scan, line);
    }

    // The ten columns every MindSpore header (1.6-2.2 and 2.3+, formats.md 1.6) starts with, then
    // its statistics in any order.
    static constexpr std::array<Col, 10> kMindSporePrefix{Col::OpType,    Col::OpName, Col::TaskId, Col::StreamId,
                                                          Col::Timestamp, Col::Io,     Col::Slot,   Col::DataSize,
                                                          Col::DataType,  Col::Shape};

    // One cell as generalRow reads it (blanks skipped, "quoted" or, for the Shape, (parenthesised)),
    // its ',' or '\n' in `end`. False for an unclosed quote.
    template <bool IsShape>
    [[gnu::always_inline]] static bool take(const char* t, std::size_t n, std::size_t pos, DelimiterScanner& scan,
                                            std::string_view& v, std::size_t& end) {
        std::size_t start = pos;
        while (start < n && t[start] == ' ') ++start;
        const char open = start < n ? t[start] : 0;
        if (open == '"' || (IsShape && open == '(')) {
            const char close = open == '"' ? '"' : ')';
            std::size_t at = start + 1;
            while (at < n && t[at] != close && t[at] != '\n') ++at;
            if (at >= n || t[at] != close) return false;
            v = open == '"' ? std::string_view(t + start + 1, at - start - 1)
                            : std::string_view(t + start, at - start + 1);
            end = scan.next(at + 1);
        } else {
            end = scan.next(pos);
            v = std::string_view(t + start, end > start ? end - start : 0);
        }
        return true;
    }

    // A row of a MindSpore header: the ten prefix cells as a fixed sequence (no per-cell switch),
    // the statistics through cell(). False, with nothing handed on, for any row that leaves that
    // form (cell count, bad cell, unclosed quote, empty name): generalRow then reads it again and
    // words the warning.
    bool mindSporeRow(std::string_view text, std::size_t pos, DelimiterScanner& scan, std::uint32_t line,
                      std::size_t& end) {
        StatisticRow& r = m_row;
        resetKeepingCapacity(r);
        r.line = line;
        const char* t = text.data();
        const std::size_t n = text.size();
        Cell mxCell = Cell::Null, mnCell = Cell::Null;
        double mx = 0, mn = 0;
        std::string_view v;
        // Each prefix cell but the last must end in a ','; the loop below checks the rest.
        auto prefix = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return ((take<kMindSporePrefix[I] == Col::Shape>(t, n, pos, scan, v, end) &&
                     !cell(r, kMindSporePrefix[I], v, mxCell, mx, mnCell, mn) &&
                     (I + 1 == kMindSporePrefix.size() || (end < n && t[end] == ',' && (pos = end + 1, true)))) &&
                    ...);
        };
        if (!prefix(std::make_index_sequence<kMindSporePrefix.size()>{})) return false;
        const Col* cols = m_cols.data();
        const std::size_t ncols = m_cols.size();
        for (std::size_t i = kMindSporePrefix.size();; ++i) {
            const bool eol = end >= n || t[end] == '\n';
            if (i == ncols) {
                if (!eol) {  // a 2.3+ trailing comma: one more cell, blank, ending the line
                    if (!take<false>(t, n, end + 1, scan, v, end) || !trimCell(v).empty()) return false;
                    if (end < n && t[end] != '\n') return false;
                }
                break;
            }
            if (eol) return false;
            if (!take<false>(t, n, end + 1, scan, v, end)) return false;
            const StatCol& s = m_statCols[i];
            if (s.kind == StatCol::Count) {
                const Cell c = parseInt(v, r.stats.*s.count);
                if (c == Cell::Bad) return false;
                if (c == Cell::Value) r.stats.known |= s.bit;
            } else if (s.kind != StatCol::Other) {
                double d = 0;
                const Cell c = parseDouble(v, d);
                if (c == Cell::Bad) return false;
                if (s.kind == StatCol::Max)
                    mxCell = c, mx = d;
                else if (s.kind == StatCol::Min)
                    mnCell = c, mn = d;
                // As setFinite: non-finite Avg/L2 carry no usable figure.
                else if (c == Cell::Value && std::isfinite(d) && std::fabs(d) < kDblMaxSentinel)
                    r.stats.*s.value = d, r.stats.known |= s.bit;
            } else if (cell(r, cols[i], v, mxCell, mx, mnCell, mn)) {
                return false;
            }
        }
        if (r.opName.empty()) return false;
        applyRange(r, mxCell, mx, mnCell, mn);
        (*m_onRow)(r);
        return true;
    }

    // A statistics column as mindSporeRow reads it, with no switch: a count, a finite figure (Avg,
    // L2), Max or Min; Other (MD5, unknown) goes through cell().
    struct StatCol {
        enum Kind : std::uint8_t { Other, Count, Finite, Max, Min } kind = Other;
        std::uint32_t bit = 0;
        std::uint64_t TensorStats::*count = nullptr;
        double TensorStats::*value = nullptr;
    };
    static StatCol statCol(Col c) {
        switch (c) {
            case Col::Max:
                return {StatCol::Max};
            case Col::Min:
                return {StatCol::Min};
            case Col::Avg:
                return {StatCol::Finite, stat::Mean, nullptr, &TensorStats::mean};
            case Col::L2:
                return {StatCol::Finite, stat::L2, nullptr, &TensorStats::l2};
            case Col::Count:
                return {StatCol::Count, stat::Count, &TensorStats::count};
            case Col::NegCount:
                return {StatCol::Count, stat::NegCount, &TensorStats::negCount};
            case Col::PosCount:
                return {StatCol::Count, stat::PosCount, &TensorStats::posCount};
            case Col::NanCount:
                return {StatCol::Count, stat::NanCount, &TensorStats::nanCount};
            case Col::NegInfCount:
                return {StatCol::Count, stat::NegInfCount, &TensorStats::negInfCount};
            case Col::PosInfCount:
                return {StatCol::Count, stat::PosInfCount, &TensorStats::posInfCount};
            case Col::ZeroCount:
                return {StatCol::Count, stat::ZeroCount, &TensorStats::zeroCount};
            default:
                return {};
        }
    }

    // Any header, any row, with the warnings.
    std::size_t generalRow(std::string_view text, std::size_t pos, DelimiterScanner& scan, std::uint32_t line) {
        StatisticRow& r = m_row;
        resetKeepingCapacity(r);
        r.line = line;
        const char* t = text.data();
        const std::size_t n = text.size();
        const Col* cols = m_cols.data();
        const std::size_t ncols = m_cols.size();
        const char* bad = nullptr;  // the first bad cell's reason; later cells are only counted
        Cell mxCell = Cell::Null, mnCell = Cell::Null;
        double mx = 0, mn = 0;
        std::string_view extra;  // the cell after the last column (a 2.3+ trailing comma leaves it empty)
        bool quotedFirst = false;
        std::size_t i = 0;
        std::size_t end;
        for (;; ++i) {
            std::size_t start = pos;
            while (start < n && t[start] == ' ') ++start;
            const char open = start < n ? t[start] : 0;
            const char close = open == '"' ? '"' : (open == '(' && i == m_shapeCol) ? ')' : 0;
            std::string_view v;
            if (close) {
                std::size_t at = start + 1;
                while (at < n && t[at] != close && t[at] != '\n') ++at;
                if (at >= n || t[at] != close) {
                    warn(line, "unclosed quote or parenthesis");
                    return at;
                }
                v = open == '"' ? std::string_view(t + start + 1, at - start - 1)
                                : std::string_view(t + start, at - start + 1);
                if (i == 0) quotedFirst = true;
                end = scan.next(at + 1);
            } else {
                end = scan.next(pos);
                v = std::string_view(t + start, end > start ? end - start : 0);
            }
            if (i < ncols) {
                if (!bad) bad = cell(r, cols[i], v, mxCell, mx, mnCell, mn);
            } else if (i == ncols) {
                extra = v;
            }
            if (end >= n || t[end] == '\n') break;
            pos = end + 1;
        }
        std::size_t fields = i + 1;
        if (fields == 1 && !quotedFirst && trimCell(text.substr(pos, end - pos)).empty()) return end;  // blank line
        if (fields == ncols + 1 && trimCell(extra).empty()) fields = ncols;  // 2.3+ trailing comma
        if (fields != ncols) {
            warnFieldCount(line, fields);
            return end;
        }
        if (bad) {
            warn(line, bad);
            return end;
        }
        if (r.opName.empty()) {
            warn(line, "empty Op Name");
            return end;
        }
        applyRange(r, mxCell, mx, mnCell, mn);
        (*m_onRow)(r);
        return end;
    }

    [[gnu::cold, gnu::noinline]] void warnFieldCount(std::uint32_t line, std::size_t fields) {
        warn(line, "has " + std::to_string(fields) + " fields, header has " + std::to_string(m_cols.size()));
    }
    // warn: a row (or the file) that could not be read; note: read in full, how it was read.
    [[gnu::cold, gnu::noinline]] void warn(std::uint32_t line, std::string reason) {
        add(line, std::move(reason), WarningSeverity::Unreadable);
    }
    [[gnu::cold, gnu::noinline]] void note(std::uint32_t line, std::string reason) {
        add(line, std::move(reason), WarningSeverity::Note);
    }
    void add(std::uint32_t line, std::string reason, WarningSeverity severity) {
        if (m_warnings.size() - firstWarning_ < m_maxWarnings)
            m_warnings.push_back({line, std::move(reason), severity});
        else
            ++suppressed_;
    }
    void finish() {
        if (suppressed_)
            m_warnings.push_back(
                {0, std::to_string(suppressed_) + " more malformed rows not listed", WarningSeverity::Unreadable});
    }

private:
    bool has(Col c) const { return m_hasCol[std::size_t(c)]; }

    // Field by field, keeping the shape's buffer: no allocation per row once the longest shape has
    // been seen.
    static void resetKeepingCapacity(StatisticRow& r) {
        r.opType = {}, r.opName = {}, r.dtypeRaw = {}, r.format = {}, r.md5 = {}, r.shape.clear();
        r.taskId = 0, r.streamId = 0, r.timestampUs = 0, r.io = Io::Output, r.slot = 0, r.dataBytes = 0;
        r.dtype = DType::Unknown;
        r.hasShape = false;
        r.stats = TensorStats{};
        r.nonFinite = 0;
        r.lowerBoundCounts = 0;
    }

    static Cell parseIoCell(std::string_view v, Io& io) {
        if (v == "input" || v == "Input") {
            io = Io::Input;
            return Cell::Value;
        }
        if (v == "output" || v == "Output") {
            io = Io::Output;
            return Cell::Value;
        }
        return Cell::Bad;
    }

    void setDtype(StatisticRow& r, std::string_view raw) {
        if (raw != lastDtypeRaw_) {  // rows repeat a handful of dtypes: skip the allocating lookup
            lastDtypeRaw_ = raw;
            lastDtype_ = parseDTypeName(raw).value_or(DType::Unknown);
        }
        r.dtypeRaw = raw;
        r.dtype = lastDtype_;
    }

    // One cell into the row; the reason when it is malformed, else nullptr.
    [[gnu::always_inline]] const char* cell(StatisticRow& r, Col c, std::string_view v, Cell& mxCell, double& mx,
                                            Cell& mnCell, double& mn) {
        switch (c) {
            case Col::Ignored:
                return nullptr;
            case Col::OpType:
                r.opType = trimCell(v);
                return nullptr;
            case Col::OpName:
                r.opName = trimCell(v);
                return nullptr;
            case Col::TaskId:
                return parseInt(v, r.taskId) == Cell::Bad ? "Task ID is not a number" : nullptr;
            case Col::StreamId:
                return parseInt(v, r.streamId) == Cell::Bad ? "Stream ID is not a number" : nullptr;
            case Col::Timestamp:
                return parseInt(v, r.timestampUs) == Cell::Bad ? "Timestamp is not a number" : nullptr;
            case Col::Io:
                return parseIoCell(trimCell(v), r.io) != Cell::Value ? "IO is not input/output" : nullptr;
            case Col::Slot:
                return parseInt(v, r.slot) != Cell::Value ? "Slot is not a number" : nullptr;
            case Col::DataSize:
                return parseInt(v, r.dataBytes) == Cell::Bad ? "Data Size is not a number" : nullptr;
            case Col::DataType:
                setDtype(r, trimCell(v));
                return nullptr;
            case Col::Format:
                r.format = trimCell(v);
                return nullptr;
            case Col::Shape:
                if (isNullSpelling(trimCell(v))) return nullptr;
                if (!parseShape(v, r.shape)) return "Shape is not a (d0,d1,...) tuple";
                r.hasShape = true;
                return nullptr;
            case Col::Md5:
                r.md5 = trimCell(v);
                return nullptr;
            case Col::Max:
                mxCell = parseDouble(v, mx);
                return mxCell == Cell::Bad ? "Max Value is not a number" : nullptr;
            case Col::Min:
                mnCell = parseDouble(v, mn);
                return mnCell == Cell::Bad ? "Min Value is not a number" : nullptr;
            case Col::Avg:
                return setFinite(v, r.stats.mean, stat::Mean, r.stats) ? nullptr : "Avg Value is not a number";
            case Col::L2:
                return setFinite(v, r.stats.l2, stat::L2, r.stats) ? nullptr : "L2Norm Value is not a number";
            case Col::Count:
                return setCount(v, r.stats.count, stat::Count, r.stats) ? nullptr : "Count is not a count";
            case Col::NegCount:
                return setCount(v, r.stats.negCount, stat::NegCount, r.stats) ? nullptr
                                                                              : "Negative Zero Count is not a count";
            case Col::PosCount:
                return setCount(v, r.stats.posCount, stat::PosCount, r.stats) ? nullptr
                                                                              : "Positive Zero Count is not a count";
            case Col::NanCount:
                return setCount(v, r.stats.nanCount, stat::NanCount, r.stats) ? nullptr : "NaN Count is not a count";
            case Col::NegInfCount:
                return setCount(v, r.stats.negInfCount, stat::NegInfCount, r.stats)
                    ? nullptr
                    : "Negative Inf Count is not a count";
            case Col::PosInfCount:
                return setCount(v, r.stats.posInfCount, stat::PosInfCount, r.stats)
                    ? nullptr
                    : "Positive Inf Count is not a count";
            case Col::ZeroCount:
                return setCount(v, r.stats.zeroCount, stat::ZeroCount, r.stats) ? nullptr : "Zero Count is not a count";
        }
        return nullptr;
    }

    // False when the cell is malformed.
    static bool setFinite(std::string_view v, double& dst, std::uint32_t bit, TensorStats& s) {
        double d = 0;
        const Cell c = parseDouble(v, d);
        // Non-finite Avg/L2 carry no usable figure; the Max/Min cells carry the evidence.
        if (c == Cell::Value && std::isfinite(d) && std::fabs(d) < kDblMaxSentinel) {
            dst = d;
            s.known |= bit;
        }
        return c != Cell::Bad;
    }

    static bool setCount(std::string_view v, std::uint64_t& dst, std::uint32_t bit, TensorStats& s) {
        const Cell c = parseInt(v, dst);
        if (c == Cell::Value) s.known |= bit;
        return c != Cell::Bad;
    }

    // Max/Min: finite values become figures; nan/inf become evidence (see NonFiniteSeen).
    void applyRange(StatisticRow& r, Cell mxCell, double mx, Cell mnCell, double mn) {
        TensorStats& s = r.stats;
        const bool mxOk = mxCell == Cell::Value, mnOk = mnCell == Cell::Value;
        if ((mxOk && std::isnan(mx)) || (mnOk && std::isnan(mn))) r.nonFinite |= SeenNan;
        const bool emptyMarker = mxOk && mnOk && mx < mn;  // initial -inf/+inf or -DBL_MAX/+DBL_MAX
        const bool nonEmpty = (mnOk && !std::isnan(mn) && !emptyMarker) || (s.has(stat::Count) && s.count > 0);
        const bool nonEmptyMax = (mxOk && !std::isnan(mx) && !emptyMarker) || (s.has(stat::Count) && s.count > 0);
        if (mxOk && std::isinf(mx)) {
            if (mx > 0)
                r.nonFinite |= SeenPosInf;
            else if (nonEmpty)
                r.nonFinite |= SeenNegInf;  // max -inf: every element is -inf
        }
        if (mnOk && std::isinf(mn)) {
            if (mn < 0)
                r.nonFinite |= SeenNegInf;
            else if (nonEmptyMax)
                r.nonFinite |= SeenPosInf;
        }
        if (!emptyMarker) {
            if (mxOk && std::isfinite(mx) && std::fabs(mx) < kDblMaxSentinel) {
                s.max = mx;
                s.known |= stat::Max;
            }
            if (mnOk && std::isfinite(mn) && std::fabs(mn) < kDblMaxSentinel) {
                s.min = mn;
                s.known |= stat::Min;
            }
        }
        if (s.has(stat::Max | stat::Min)) {
            s.maxAbs = std::max(std::fabs(s.max), std::fabs(s.min));
            s.known |= stat::MaxAbs;
        }
        lowerBound(r, SeenNan, stat::NanCount, s.nanCount, Col::NanCount);
        lowerBound(r, SeenPosInf, stat::PosInfCount, s.posInfCount, Col::PosInfCount);
        lowerBound(r, SeenNegInf, stat::NegInfCount, s.negInfCount, Col::NegInfCount);
    }

    void lowerBound(StatisticRow& r, std::uint8_t seen, std::uint32_t bit, std::uint64_t& count, Col col) {
        if (!(r.nonFinite & seen) || has(col)) return;
        count = 1;
        r.stats.known |= bit | stat::NonFiniteLowerBound;
        r.lowerBoundCounts |= bit;
    }

    const std::function<void(StatisticRow&)>* m_onRow;
    std::vector<StatisticCsvWarning>& m_warnings;
    std::size_t m_maxWarnings;
    std::size_t firstWarning_ = m_warnings.size();
    std::size_t suppressed_ = 0;
    std::vector<Col> m_cols;
    std::array<bool, 32> m_hasCol{};
    std::size_t m_shapeCol = SIZE_MAX;
    bool m_fixedLayouts = true;
    bool m_mindSporePrefix = false;   // the header is a MindSpore layout: mindSporeRow first
    std::vector<StatCol> m_statCols;  // per column of m_cols
    StatisticRow m_row;
    std::string lastDtypeRaw_ = "\x01";
    DType lastDtype_ = DType::Unknown;
};

}  // namespace
}  // namespace dl

#include "core/io/statistic_csv.h"
#include "core/util/read_file.h"
#include "core/util/text.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>

// fast_float (Debian libfast-float-dev, header only) when installed: inlined, ~2x libstdc++'s
// from_chars for the short %g cells of statistic.csv; std::from_chars otherwise.
#if __has_include(<fast_float/fast_float.h>)
#include <fast_float/fast_float.h>
#define DUMPLENS_FAST_FLOAT 1
#endif

namespace dl {
namespace {

enum class Col : std::uint8_t {
    Ignored, OpType, OpName, TaskId, StreamId, Timestamp, Io, Slot, DataSize, DataType, Format, Shape,
    Max, Min, Avg, Count, NegCount, PosCount, NanCount, NegInfCount, PosInfCount, ZeroCount, L2, Md5,
};

struct ColName { std::string_view name; Col col; };
constexpr std::array<ColName, 29> kColumns{{
    {"op type", Col::OpType}, {"op name", Col::OpName}, {"task id", Col::TaskId},
    {"stream id", Col::StreamId}, {"timestamp", Col::Timestamp}, {"io", Col::Io},
    {"input/output", Col::Io}, {"slot", Col::Slot}, {"data size", Col::DataSize},
    {"data type", Col::DataType}, {"format", Col::Format}, {"shape", Col::Shape},
    {"max value", Col::Max}, {"min value", Col::Min}, {"avg value", Col::Avg},
    {"mean value", Col::Avg}, {"count", Col::Count},
    // MindSpore's names are misleading: they count elements < 0 and > 0 (tensor_summary.cc).
    {"negative zero count", Col::NegCount}, {"positive zero count", Col::PosCount},
    {"nan count", Col::NanCount}, {"negative inf count", Col::NegInfCount},
    {"positive inf count", Col::PosInfCount}, {"zero count", Col::ZeroCount},
    {"l2norm value", Col::L2}, {"l2 value", Col::L2}, {"l2norm", Col::L2},
    {"md5", Col::Md5}, {"md5 value", Col::Md5}, {"max", Col::Max},
}};

// DBL_MAX printed with 6 significant digits: MindSpore's initial max/min for empty tensors.
constexpr double kDblMaxSentinel = 1.79769e308;

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = char(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = char(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

Col columnFor(std::string_view name) {
    name = trim(name);
    for (const auto& c : kColumns)
        if (iequals(name, c.name)) return c.col;
    return Col::Ignored;
}

enum class Cell { Value, Null, Bad };

bool isNullSpelling(std::string_view s) {
    return s.empty() || iequals(s, "null") || iequals(s, "none") || s == "N/A";
}

Cell parseDouble(std::string_view s, double& v) {
    s = trim(s);
    if (isNullSpelling(s)) return Cell::Null;
    if (iequals(s, "true")) { v = 1; return Cell::Value; }
    if (iequals(s, "false")) { v = 0; return Cell::Value; }
    if (s.front() == '+') s.remove_prefix(1);
#ifdef DUMPLENS_FAST_FLOAT
    auto [p, ec] = fast_float::from_chars(s.data(), s.data() + s.size(), v);  // "1e999" -> inf, as below
#else
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
#endif
    if (p != s.data() + s.size()) return Cell::Bad;
    if (ec == std::errc::result_out_of_range) {  // "1e999": keep the sign, it is beyond any dtype
        v = (s.front() == '-') ? -HUGE_VAL : HUGE_VAL;
        return Cell::Value;
    }
    return ec == std::errc() ? Cell::Value : Cell::Bad;
}

template <class T>
Cell parseInt(std::string_view s, T& v) {
    s = trim(s);
    if (isNullSpelling(s)) return Cell::Null;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size()) return Cell::Value;
    double d = 0;  // device-mode writers may print counts as "2.0"
    if (parseDouble(s, d) == Cell::Value && std::isfinite(d) && d >= double(std::numeric_limits<T>::min()) &&
        d <= double(std::numeric_limits<T>::max()) && d == std::floor(d)) {
        v = T(d);
        return Cell::Value;
    }
    return Cell::Bad;
}

// "(2,3)", "()", "(2)", "(2,)", "[2, 3]" -> dims.
bool parseShape(std::string_view s, std::vector<std::int64_t>& dims) {
    dims.clear();
    s = trim(s);
    if (s.size() < 2 || !((s.front() == '(' && s.back() == ')') || (s.front() == '[' && s.back() == ']')))
        return false;
    s = s.substr(1, s.size() - 2);
    std::size_t pos = 0;
    while (pos < s.size()) {
        std::size_t c = s.find(',', pos);
        std::string_view d = trim(s.substr(pos, c == std::string_view::npos ? std::string_view::npos : c - pos));
        pos = (c == std::string_view::npos) ? s.size() : c + 1;
        if (d.empty()) {
            if (c == std::string_view::npos) break;  // trailing comma "(2,)"
            return false;
        }
        std::int64_t v = 0;
        auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
        if (ec != std::errc() || p != d.data() + d.size()) return false;
        dims.push_back(v);
    }
    return true;
}

class Parser {
public:
    Parser(const std::function<void(StatisticRow&)>& onRow, std::vector<StatisticCsvWarning>& warnings,
           std::size_t maxWarnings)
        : onRow_(onRow), warnings_(warnings), maxWarnings_(maxWarnings) {}

    void setHeader(const std::vector<std::string_view>& fields, std::vector<std::string>& names) {
        cols_.clear();
        names.clear();
        shapeCol_ = SIZE_MAX;
        hasCol_.fill(false);
        for (std::string_view f : fields) {
            names.emplace_back(trim(f));
            Col c = columnFor(f);
            if (c == Col::Shape) shapeCol_ = cols_.size();
            if (c == Col::Ignored && !trim(f).empty()) warn(0, "ignored unknown column '" + names.back() + "'");
            hasCol_[std::size_t(c)] = true;
            cols_.push_back(c);
        }
        // A 2.3+ header never ends with an empty name; drop one if the header itself had a trailing comma.
        while (!cols_.empty() && names.back().empty()) { cols_.pop_back(); names.pop_back(); }
    }
    bool headerUsable() const {
        return has(Col::OpType) && has(Col::OpName) && has(Col::Io) && has(Col::Slot);
    }
    std::size_t shapeCol() const { return shapeCol_; }

    void row(std::uint32_t line, std::vector<std::string_view>& f) {
        if (f.size() == cols_.size() + 1 && trim(f.back()).empty()) f.pop_back();  // 2.3+ trailing comma
        if (f.size() != cols_.size()) {
            warn(line, "has " + std::to_string(f.size()) + " fields, header has " + std::to_string(cols_.size()));
            return;
        }
        StatisticRow& r = row_;
        resetKeepingCapacity(r);  // a callback that does not move the row lets buffers be reused
        r.line = line;
        std::string bad;
        Cell ioCell = Cell::Null, slotCell = Cell::Null;
        double mx = 0, mn = 0;
        Cell mxCell = Cell::Null, mnCell = Cell::Null;
        for (std::size_t i = 0; i < f.size() && bad.empty(); ++i) {
            std::string_view v = f[i];
            switch (cols_[i]) {
            case Col::Ignored: break;
            case Col::OpType: r.opType = trim(v); break;
            case Col::OpName: r.opName = trim(v); break;
            case Col::TaskId: if (parseInt(v, r.taskId) == Cell::Bad) bad = "Task ID is not a number"; break;
            case Col::StreamId: if (parseInt(v, r.streamId) == Cell::Bad) bad = "Stream ID is not a number"; break;
            case Col::Timestamp: if (parseInt(v, r.timestampUs) == Cell::Bad) bad = "Timestamp is not a number"; break;
            case Col::Io: ioCell = parseIoCell(trim(v), r.io); if (ioCell != Cell::Value) bad = "IO is not input/output"; break;
            case Col::Slot: slotCell = parseInt(v, r.slot); if (slotCell != Cell::Value) bad = "Slot is not a number"; break;
            case Col::DataSize: if (parseInt(v, r.dataBytes) == Cell::Bad) bad = "Data Size is not a number"; break;
            case Col::DataType: setDtype(r, trim(v)); break;
            case Col::Format: r.format = trim(v); break;
            case Col::Shape:
                if (isNullSpelling(trim(v))) break;
                if (!parseShape(v, r.shape)) bad = "Shape is not a (d0,d1,...) tuple";
                r.hasShape = bad.empty();
                break;
            case Col::Md5: r.md5 = trim(v); break;
            case Col::Max: mxCell = parseDouble(v, mx); if (mxCell == Cell::Bad) bad = "Max Value is not a number"; break;
            case Col::Min: mnCell = parseDouble(v, mn); if (mnCell == Cell::Bad) bad = "Min Value is not a number"; break;
            case Col::Avg: setFinite(v, r.stats.mean, stat::Mean, r.stats, "Avg Value", bad); break;
            case Col::L2: setFinite(v, r.stats.l2, stat::L2, r.stats, "L2Norm Value", bad); break;
            case Col::Count: setCount(v, r.stats.count, stat::Count, r.stats, "Count", bad); break;
            case Col::NegCount: setCount(v, r.stats.negCount, stat::NegCount, r.stats, "Negative Zero Count", bad); break;
            case Col::PosCount: setCount(v, r.stats.posCount, stat::PosCount, r.stats, "Positive Zero Count", bad); break;
            case Col::NanCount: setCount(v, r.stats.nanCount, stat::NanCount, r.stats, "NaN Count", bad); break;
            case Col::NegInfCount: setCount(v, r.stats.negInfCount, stat::NegInfCount, r.stats, "Negative Inf Count", bad); break;
            case Col::PosInfCount: setCount(v, r.stats.posInfCount, stat::PosInfCount, r.stats, "Positive Inf Count", bad); break;
            case Col::ZeroCount: setCount(v, r.stats.zeroCount, stat::ZeroCount, r.stats, "Zero Count", bad); break;
            }
        }
        if (!bad.empty()) { warn(line, std::move(bad)); return; }
        if (r.opName.empty()) { warn(line, "empty Op Name"); return; }
        applyRange(r, mxCell, mx, mnCell, mn);
        onRow_(r);
    }

    void warn(std::uint32_t line, std::string reason) {
        if (warnings_.size() - firstWarning_ < maxWarnings_) warnings_.push_back({line, std::move(reason)});
        else ++suppressed_;
    }
    void finish() {
        if (suppressed_) warnings_.push_back({0, std::to_string(suppressed_) + " more malformed rows not listed"});
    }

private:
    bool has(Col c) const { return hasCol_[std::size_t(c)]; }

    // Field by field, keeping the strings' and the shape's buffers: no allocation per row once
    // the longest name has been seen.
    static void resetKeepingCapacity(StatisticRow& r) {
        r.opType.clear(), r.opName.clear(), r.dtypeRaw.clear(), r.format.clear(), r.md5.clear(), r.shape.clear();
        r.taskId = 0, r.streamId = 0, r.timestampUs = 0, r.io = Io::Output, r.slot = 0, r.dataBytes = 0;
        r.dtype = DType::Unknown;
        r.hasShape = false;
        r.stats = TensorStats{};
        r.nonFinite = 0;
        r.lowerBoundCounts = 0;
    }

    static Cell parseIoCell(std::string_view v, Io& io) {
        if (v == "input" || v == "Input") { io = Io::Input; return Cell::Value; }
        if (v == "output" || v == "Output") { io = Io::Output; return Cell::Value; }
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

    static void setFinite(std::string_view v, double& dst, std::uint32_t bit, TensorStats& s, const char* what,
                          std::string& bad) {
        double d = 0;
        Cell c = parseDouble(v, d);
        if (c == Cell::Bad) bad = std::string(what) + " is not a number";
        // Non-finite Avg/L2 carry no usable figure; the Max/Min cells carry the evidence.
        if (c == Cell::Value && std::isfinite(d) && std::fabs(d) < kDblMaxSentinel) { dst = d; s.known |= bit; }
    }

    static void setCount(std::string_view v, std::uint64_t& dst, std::uint32_t bit, TensorStats& s, const char* what,
                         std::string& bad) {
        Cell c = parseInt(v, dst);
        if (c == Cell::Bad) bad = std::string(what) + " is not a count";
        if (c == Cell::Value) s.known |= bit;
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
            if (mx > 0) r.nonFinite |= SeenPosInf;
            else if (nonEmpty) r.nonFinite |= SeenNegInf;  // max -inf: every element is -inf
        }
        if (mnOk && std::isinf(mn)) {
            if (mn < 0) r.nonFinite |= SeenNegInf;
            else if (nonEmptyMax) r.nonFinite |= SeenPosInf;
        }
        if (!emptyMarker) {
            if (mxOk && std::isfinite(mx) && std::fabs(mx) < kDblMaxSentinel) { s.max = mx; s.known |= stat::Max; }
            if (mnOk && std::isfinite(mn) && std::fabs(mn) < kDblMaxSentinel) { s.min = mn; s.known |= stat::Min; }
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
        r.stats.known |= bit;
        r.lowerBoundCounts |= bit;
    }

    const std::function<void(StatisticRow&)>& onRow_;
    std::vector<StatisticCsvWarning>& warnings_;
    std::size_t maxWarnings_;
    std::size_t firstWarning_ = warnings_.size();
    std::size_t suppressed_ = 0;
    std::vector<Col> cols_;
    std::array<bool, 32> hasCol_{};
    std::size_t shapeCol_ = SIZE_MAX;
    StatisticRow row_;
    std::string lastDtypeRaw_ = "\x01";
    DType lastDtype_ = DType::Unknown;
};

// Splits one line at commas. Double-quoted fields keep their commas; at `shapeCol` an unquoted
// "(2,3)" (msprobe C++ writer) is kept whole up to the closing ')'. Returns false on an unclosed group.
bool splitLine(std::string_view line, std::size_t shapeCol, std::vector<std::string_view>& out) {
    out.clear();
    std::size_t pos = 0;
    for (;;) {
        std::size_t start = pos;
        while (start < line.size() && line[start] == ' ') ++start;
        const char open = start < line.size() ? line[start] : 0;
        const char close = open == '"' ? '"' : (open == '(' && out.size() == shapeCol) ? ')' : 0;
        std::string_view field;
        if (close) {
            std::size_t end = line.find(close, start + 1);
            if (end == std::string_view::npos) return false;
            field = open == '"' ? line.substr(start + 1, end - start - 1) : line.substr(start, end - start + 1);
            pos = line.find(',', end + 1);
        } else {
            pos = line.find(',', pos);
            field = line.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start);
        }
        out.push_back(field);
        if (pos == std::string_view::npos) return true;
        ++pos;
    }
}

}  // namespace

bool parseStatisticCsv(std::string_view text, const std::function<void(StatisticRow&)>& onRow,
                       std::vector<std::string>& columns, std::vector<StatisticCsvWarning>& warnings,
                       std::string& error, std::size_t maxWarnings) {
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 BOM from hand-edited files
    Parser parser(onRow, warnings, maxWarnings);
    std::vector<std::string_view> fields;
    bool haveHeader = false;
    std::uint32_t lineNo = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const char* nl = static_cast<const char*>(std::memchr(text.data() + pos, '\n', text.size() - pos));
        std::size_t end = nl ? std::size_t(nl - text.data()) : text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        ++lineNo;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (trim(line).empty()) continue;
        const bool isHeader = line.starts_with("Op Type,") || line.starts_with("\"Op Type\",");
        if (!splitLine(line, isHeader ? SIZE_MAX : parser.shapeCol(), fields)) {
            parser.warn(lineNo, "unclosed quote or parenthesis");
            continue;
        }
        if (isHeader) {  // first header, or a repeated one from a concatenated file: (re)map columns
            parser.setHeader(fields, columns);
            if (!parser.headerUsable()) {
                error = "statistic.csv line " + std::to_string(lineNo) +
                        ": header lacks one of Op Type, Op Name, IO, Slot";
                return false;
            }
            haveHeader = true;
            continue;
        }
        if (!haveHeader) {
            error = "statistic.csv: first non-empty line is not a header starting with 'Op Type,'";
            return false;
        }
        parser.row(lineNo, fields);
    }
    if (!haveHeader) {
        error = "statistic.csv: no header line";
        return false;
    }
    parser.finish();
    return true;
}

bool parseStatisticCsv(std::string_view text, StatisticCsvResult& out, std::string& error) {
    out = StatisticCsvResult{};
    return parseStatisticCsv(
        text, [&](StatisticRow& r) { out.rows.push_back(std::move(r)); }, out.columns, out.warnings, error);
}

bool readStatisticCsv(const std::string& path, StatisticCsvResult& out, std::string& error) {
    std::string text;
    if (!readFileText(path, text, error)) return false;
    if (!parseStatisticCsv(text, out, error)) {
        error = path + ": " + error;
        return false;
    }
    return true;
}

}  // namespace dl

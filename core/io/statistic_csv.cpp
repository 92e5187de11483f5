#include "core/io/statistic_csv.h"
#include "core/util/read_file.h"
#include "core/util/text.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// fast_float (Debian libfast-float-dev, header only) when installed: inlined, ~2x libstdc++'s
// from_chars for the short %g cells of statistic.csv; std::from_chars otherwise.
#if __has_include(<fast_float/fast_float.h>)
#include <fast_float/fast_float.h>
#define DUMPLENS_FAST_FLOAT 1
#endif

namespace dl {
namespace {

// trim() of core/util/text.h (blanks, tabs, a stray CR) without its find_first_not_of calls: it
// runs on every cell of every row.
inline bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
inline std::string_view trimCell(std::string_view s) {
    std::size_t a = 0, b = s.size();
    while (a < b && isBlank(s[a])) ++a;
    while (b > a && isBlank(s[b - 1])) --b;
    return s.substr(a, b - a);
}
inline bool startsNumber(char c) { return (c >= '0' && c <= '9') || c == '-'; }

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
    name = trimCell(name);
    for (const auto& c : kColumns)
        if (iequals(name, c.name)) return c.col;
    return Col::Ignored;
}

enum class Cell { Value, Null, Bad };

bool isNullSpelling(std::string_view s) {
    return s.empty() || iequals(s, "null") || iequals(s, "none") || s == "N/A";
}

Cell parseDouble(std::string_view s, double& v) {
    s = trimCell(s);
    if (s.empty() || !startsNumber(s.front())) {  // a number starts with a digit or '-': no spelling to check
        if (isNullSpelling(s)) return Cell::Null;
        if (iequals(s, "true")) { v = 1; return Cell::Value; }
        if (iequals(s, "false")) { v = 0; return Cell::Value; }
        if (s.front() == '+') s.remove_prefix(1);
    }
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
    s = trimCell(s);
    if (s.empty() || !startsNumber(s.front()))
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
    s = trimCell(s);
    if (s.size() < 2 || !((s.front() == '(' && s.back() == ')') || (s.front() == '[' && s.back() == ']')))
        return false;
    s = s.substr(1, s.size() - 2);
    std::size_t pos = 0;
    while (pos < s.size()) {
        std::size_t c = s.find(',', pos);
        std::string_view d = trimCell(s.substr(pos, c == std::string_view::npos ? std::string_view::npos : c - pos));
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
            names.emplace_back(trimCell(f));
            Col c = columnFor(f);
            if (c == Col::Shape) shapeCol_ = cols_.size();
            if (c == Col::Ignored && !trimCell(f).empty()) note(0, "ignored unknown column '" + names.back() + "'");
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
        if (f.size() == cols_.size() + 1 && trimCell(f.back()).empty()) f.pop_back();  // 2.3+ trailing comma
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
        // Locals the compiler can keep in registers (the row's strings could alias f's members).
        const std::string_view* cells = f.data();
        const std::size_t n = f.size();
        const Col* cols = cols_.data();
        for (std::size_t i = 0; i < n; ++i) {
            if (!bad.empty()) break;
            const std::string_view v = cells[i];
            switch (cols[i]) {
            case Col::Ignored: break;
            case Col::OpType: r.opType = trimCell(v); break;
            case Col::OpName: r.opName = trimCell(v); break;
            case Col::TaskId: if (parseInt(v, r.taskId) == Cell::Bad) bad = "Task ID is not a number"; break;
            case Col::StreamId: if (parseInt(v, r.streamId) == Cell::Bad) bad = "Stream ID is not a number"; break;
            case Col::Timestamp: if (parseInt(v, r.timestampUs) == Cell::Bad) bad = "Timestamp is not a number"; break;
            case Col::Io: ioCell = parseIoCell(trimCell(v), r.io); if (ioCell != Cell::Value) bad = "IO is not input/output"; break;
            case Col::Slot: slotCell = parseInt(v, r.slot); if (slotCell != Cell::Value) bad = "Slot is not a number"; break;
            case Col::DataSize: if (parseInt(v, r.dataBytes) == Cell::Bad) bad = "Data Size is not a number"; break;
            case Col::DataType: setDtype(r, trimCell(v)); break;
            case Col::Format: r.format = trimCell(v); break;
            case Col::Shape:
                if (isNullSpelling(trimCell(v))) break;
                if (!parseShape(v, r.shape)) bad = "Shape is not a (d0,d1,...) tuple";
                r.hasShape = bad.empty();
                break;
            case Col::Md5: r.md5 = trimCell(v); break;
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

    // warn: a row (or the file) that could not be read; note: read in full, how it was read.
    void warn(std::uint32_t line, std::string reason) { add(line, std::move(reason), WarningSeverity::Unreadable); }
    void note(std::uint32_t line, std::string reason) { add(line, std::move(reason), WarningSeverity::Note); }
    void add(std::uint32_t line, std::string reason, WarningSeverity severity) {
        if (warnings_.size() - firstWarning_ < maxWarnings_)
            warnings_.push_back({line, std::move(reason), severity});
        else ++suppressed_;
    }
    void finish() {
        if (suppressed_)
            warnings_.push_back(
                {0, std::to_string(suppressed_) + " more malformed rows not listed", WarningSeverity::Unreadable});
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

// Positions of the next ',' or '\n' in the text, found 64 bytes at a time (SSE2 compares into a
// bit mask), so splitting a row into cells and finding its end is one pass over its bytes.
class DelimiterScanner {
public:
    explicit DelimiterScanner(std::string_view text) : m_p(text.data()), m_n(text.size()) { load(0); }
    // First ',' or '\n' at or after `pos`; size() when none.
    std::size_t next(std::size_t pos) {
        if (pos >= m_n) return m_n;
        if (pos < m_block || pos >= m_block + 64) load(pos & ~std::size_t(63));
        std::uint64_t m = m_mask & (~std::uint64_t(0) << (pos - m_block));
        while (!m) {
            if (m_block + 64 >= m_n) return m_n;
            load(m_block + 64);
            m = m_mask;
        }
        return m_block + std::size_t(__builtin_ctzll(m));
    }

private:
    void load(std::size_t block) {
        m_block = block;
        const char* p = m_p + block;
        char tail[64];
        if (block + 64 > m_n) {  // the last block: never read past the text
            std::memset(tail, 0, sizeof tail);
            std::memcpy(tail, p, m_n - block);
            p = tail;
        }
#if defined(__SSE2__)
        const __m128i comma = _mm_set1_epi8(','), nl = _mm_set1_epi8('\n');
        std::uint64_t m = 0;
        for (int k = 0; k < 4; ++k) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
            const int bits = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, comma), _mm_cmpeq_epi8(v, nl)));
            m |= std::uint64_t(std::uint16_t(bits)) << (16 * k);
        }
#else
        std::uint64_t m = 0;
        for (int k = 0; k < 64; ++k) m |= std::uint64_t(p[k] == ',' || p[k] == '\n') << k;
#endif
        m_mask = m;
    }
    const char* m_p;
    std::size_t m_n;
    std::size_t m_block = 0;
    std::uint64_t m_mask = 0;
};

std::size_t scanLineEnd(std::string_view text, std::size_t from) {
    const void* nl = std::memchr(text.data() + from, '\n', text.size() - from);
    return nl ? std::size_t(static_cast<const char*>(nl) - text.data()) : text.size();
}

// Splits the line starting at `pos` into cells at commas and returns the position of its end (its
// '\n' or the end of the text). Double-quoted cells keep their commas; at `shapeCol` an unquoted
// "(2,3)" (msprobe C++ writer) is kept whole up to the closing ')'. A quote or parenthesis is closed
// on its own line or `unclosed` is set. The text after a closing quote up to the next comma is dropped.
std::size_t splitLine(std::string_view text, std::size_t pos, DelimiterScanner& scan, std::size_t shapeCol,
                      std::vector<std::string_view>& out, bool& unclosed) {
    out.clear();
    unclosed = false;
    const char* t = text.data();
    for (;;) {
        std::size_t start = pos;
        while (start < text.size() && t[start] == ' ') ++start;
        const char open = start < text.size() ? t[start] : 0;
        const char close = open == '"' ? '"' : (open == '(' && out.size() == shapeCol) ? ')' : 0;
        std::size_t end;  // the ',' or '\n' after the cell
        if (close) {
            const std::size_t eol = scanLineEnd(text, start);
            const void* c = std::memchr(t + start + 1, close, eol - start - 1);
            if (!c) {
                unclosed = true;
                return eol;
            }
            const std::size_t at = std::size_t(static_cast<const char*>(c) - t);
            out.push_back(open == '"' ? text.substr(start + 1, at - start - 1) : text.substr(start, at - start + 1));
            end = scan.next(at + 1);
        } else {
            end = scan.next(pos);
            out.push_back(text.substr(start, end > start ? end - start : 0));
        }
        if (end >= text.size() || t[end] == '\n') return end;
        pos = end + 1;
    }
}

}  // namespace

bool parseStatisticCsv(std::string_view text, const std::function<void(StatisticRow&)>& onRow,
                       std::vector<std::string>& columns, std::vector<StatisticCsvWarning>& warnings,
                       std::string& error, std::size_t maxWarnings) {
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 BOM from hand-edited files
    Parser parser(onRow, warnings, maxWarnings);
    std::vector<std::string_view> fields;
    DelimiterScanner scan(text);
    bool haveHeader = false;
    std::uint32_t lineNo = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        ++lineNo;
        const std::string_view rest = text.substr(pos);
        const bool isHeader = rest.starts_with("Op Type,") || rest.starts_with("\"Op Type\",");
        bool unclosed = false;
        const std::size_t end = splitLine(text, pos, scan, isHeader ? SIZE_MAX : parser.shapeCol(), fields, unclosed);
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (trimCell(line).empty()) continue;
        if (unclosed) {
            parser.warn(lineNo, "unclosed quote or parenthesis");
            continue;
        }
        // A CR before the newline ends the last cell (a quoted last cell has lost it already).
        if (!fields.empty() && !fields.back().empty() && line.back() == '\r' &&
            fields.back().data() + fields.back().size() == line.data() + line.size())
            fields.back().remove_suffix(1);
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

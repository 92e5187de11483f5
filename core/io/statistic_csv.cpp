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
    return {s.data() + a, b - a};
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

// Clinger's fast path for the short %g cells writers print ("135.061", "-1.11155", "1e-05"): at
// most 19 digits whose value is at most 2^53 and a decimal exponent within +-22, so that the
// mantissa and the power of ten are exact doubles and one multiplication or division rounds
// correctly (strtod's answer). False for anything else (inf/nan spellings, long mantissas, big
// exponents, '+', blanks), which goes to the general parser.
constexpr double kPow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
inline bool isDigit(char c) { return unsigned(static_cast<unsigned char>(c)) - unsigned('0') <= 9u; }

inline bool parseShortDecimal(std::string_view s, double& v) {
    const char* p = s.data();
    const char* const e = p + s.size();
    const bool neg = p < e && *p == '-';
    p += neg;
    std::uint64_t m = 0;
    const char* const digits = p;
    while (p < e && isDigit(*p)) m = m * 10 + std::uint64_t(*p++ - '0');
    std::ptrdiff_t count = p - digits;
    bool any = count > 0;
    int exp10 = 0;
    if (p < e && *p == '.') {
        const char* const frac = ++p;
        while (p < e && isDigit(*p)) m = m * 10 + std::uint64_t(*p++ - '0');
        exp10 = -int(p - frac);
        count += p - frac;
        any = any || p != frac;
    }
    if (!any || count > 19) return false;  // no digits, or m may have wrapped
    if (p < e && (*p == 'e' || *p == 'E')) {
        ++p;
        const bool eneg = p < e && *p == '-';
        if (p < e && (*p == '-' || *p == '+')) ++p;
        const char* const ed = p;
        int x = 0;
        while (p < e && isDigit(*p) && x < 1000) x = x * 10 + (*p++ - '0');
        if (p == ed) return false;
        exp10 += eneg ? -x : x;
    }
    if (p != e || m > (std::uint64_t(1) << 53) || exp10 < -22 || exp10 > 22) return false;
    const double d = exp10 < 0 ? double(m) / kPow10[-exp10] : double(m) * kPow10[exp10];
    v = neg ? -d : d;
    return true;
}

inline Cell parseDouble(std::string_view s, double& v) {
    s = trimCell(s);
    if (parseShortDecimal(s, v)) return Cell::Value;
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

// Plain decimal digits (what every writer prints for ids, timestamps, sizes and counts), up to 19
// of them so that the value cannot wrap: no sign, no blanks, no exponent. Anything else is left to
// the general path below.
// Eight ASCII digits at once (little-endian loads; fast_float's SWAR form): false unless all
// eight bytes are '0'..'9'.
inline bool eightDigits(const char* p, std::uint64_t& out) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    if (((v + 0x4646464646464646ull) | (v - 0x3030303030303030ull)) & 0x8080808080808080ull) return false;
    v -= 0x3030303030303030ull;
    v = v * 10 + (v >> 8);
    v = ((v & 0x000000FF000000FFull) * 0x000F424000000064ull +
         ((v >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull) >> 32;
    out = std::uint32_t(v);
    return true;
#else
    std::uint64_t x = 0;
    for (int i = 0; i < 8; ++i) {
        const unsigned d = unsigned(static_cast<unsigned char>(p[i])) - unsigned('0');
        if (d > 9) return false;
        x = x * 10 + d;
    }
    out = x;
    return true;
#endif
}

template <class T>
inline bool parseDigits(std::string_view s, T& v) {
    if (s.empty() || s.size() > 19) return false;
    std::uint64_t x = 0;
    std::size_t i = 0;
    for (std::uint64_t eight; i + 8 <= s.size(); i += 8) {  // timestamps: 16 digits
        if (!eightDigits(s.data() + i, eight)) return false;
        x = x * 100000000ull + eight;
    }
    for (; i < s.size(); ++i) {
        const unsigned d = unsigned(static_cast<unsigned char>(s[i])) - unsigned('0');
        if (d > 9) return false;
        x = x * 10 + d;
    }
    if (x > std::uint64_t(std::numeric_limits<T>::max())) return false;
    v = T(x);
    return true;
}

template <class T>
Cell parseInt(std::string_view s, T& v) {
    s = trimCell(s);
    if (parseDigits(s, v)) return Cell::Value;
    if (s.empty() || !startsNumber(s.front()))
        if (isNullSpelling(s)) return Cell::Null;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size()) return Cell::Value;
    double d = 0;  // device-mode writers may print counts as "2.0"
    // Below 2^digits, not <= double(max): that rounds up to 2^63 / 2^64, whose conversion is undefined.
    if (parseDouble(s, d) == Cell::Value && std::isfinite(d) && d >= double(std::numeric_limits<T>::min()) &&
        d < std::ldexp(1.0, std::numeric_limits<T>::digits) && d == std::floor(d)) {
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
        std::size_t c = pos;
        while (c < s.size() && s[c] != ',') ++c;
        const std::string_view d = trimCell(s.substr(pos, c - pos));
        pos = c + 1;
        if (d.empty()) {
            if (c == s.size()) break;  // trailing comma "(2,)"
            return false;
        }
        std::int64_t v = 0;
        if (!parseDigits(d, v)) {
            auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
            if (ec != std::errc() || p != d.data() + d.size()) return false;
        }
        dims.push_back(v);
    }
    return true;
}

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
        if (block + 64 <= m_n) [[likely]]
            m_mask = mask64(m_p + block);
        else
            loadTail(block);
    }
    [[gnu::cold, gnu::noinline]] void loadTail(std::size_t block) {  // the last block: never read past the text
        char tail[64];
        std::memset(tail, 0, sizeof tail);
        std::memcpy(tail, m_p + block, m_n - block);
        m_mask = mask64(tail);
    }
    static std::uint64_t mask64(const char* p) {
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
        return m;
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

    // Parses the data line starting at `pos` cell by cell as the scanner finds its commas (no
    // vector of cells, no copies: the row's strings are views into `text`) and hands it to the
    // callback, or warns with the line number. Returns the position of the line's end (its '\n'
    // or the end of the text). Quoting as in splitLine below.
    std::size_t row(std::string_view text, std::size_t pos, DelimiterScanner& scan, std::uint32_t line) {
        StatisticRow& r = row_;
        resetKeepingCapacity(r);
        r.line = line;
        const char* t = text.data();
        const std::size_t n = text.size();
        const Col* cols = cols_.data();
        const std::size_t ncols = cols_.size();
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
            const char close = open == '"' ? '"' : (open == '(' && i == shapeCol_) ? ')' : 0;
            std::string_view v;
            if (close) {
                std::size_t at = start + 1;
                while (at < n && t[at] != close && t[at] != '\n') ++at;
                if (at >= n || t[at] != close) {
                    warn(line, "unclosed quote or parenthesis");
                    return at;
                }
                v = open == '"' ? std::string_view(t + start + 1, at - start - 1) : std::string_view(t + start, at - start + 1);
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
        onRow_(r);
        return end;
    }

    [[gnu::cold, gnu::noinline]] void warnFieldCount(std::uint32_t line, std::size_t fields) {
        warn(line, "has " + std::to_string(fields) + " fields, header has " + std::to_string(cols_.size()));
    }
    // warn: a row (or the file) that could not be read; note: read in full, how it was read.
    [[gnu::cold, gnu::noinline]] void warn(std::uint32_t line, std::string reason) {
        add(line, std::move(reason), WarningSeverity::Unreadable);
    }
    [[gnu::cold, gnu::noinline]] void note(std::uint32_t line, std::string reason) {
        add(line, std::move(reason), WarningSeverity::Note);
    }
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

    // One cell into the row; the reason when it is malformed, else nullptr.
    [[gnu::always_inline]] const char* cell(StatisticRow& r, Col c, std::string_view v, Cell& mxCell, double& mx, Cell& mnCell, double& mn) {
        switch (c) {
        case Col::Ignored: return nullptr;
        case Col::OpType: r.opType = trimCell(v); return nullptr;
        case Col::OpName: r.opName = trimCell(v); return nullptr;
        case Col::TaskId: return parseInt(v, r.taskId) == Cell::Bad ? "Task ID is not a number" : nullptr;
        case Col::StreamId: return parseInt(v, r.streamId) == Cell::Bad ? "Stream ID is not a number" : nullptr;
        case Col::Timestamp: return parseInt(v, r.timestampUs) == Cell::Bad ? "Timestamp is not a number" : nullptr;
        case Col::Io: return parseIoCell(trimCell(v), r.io) != Cell::Value ? "IO is not input/output" : nullptr;
        case Col::Slot: return parseInt(v, r.slot) != Cell::Value ? "Slot is not a number" : nullptr;
        case Col::DataSize: return parseInt(v, r.dataBytes) == Cell::Bad ? "Data Size is not a number" : nullptr;
        case Col::DataType: setDtype(r, trimCell(v)); return nullptr;
        case Col::Format: r.format = trimCell(v); return nullptr;
        case Col::Shape:
            if (isNullSpelling(trimCell(v))) return nullptr;
            if (!parseShape(v, r.shape)) return "Shape is not a (d0,d1,...) tuple";
            r.hasShape = true;
            return nullptr;
        case Col::Md5: r.md5 = trimCell(v); return nullptr;
        case Col::Max: mxCell = parseDouble(v, mx); return mxCell == Cell::Bad ? "Max Value is not a number" : nullptr;
        case Col::Min: mnCell = parseDouble(v, mn); return mnCell == Cell::Bad ? "Min Value is not a number" : nullptr;
        case Col::Avg: return setFinite(v, r.stats.mean, stat::Mean, r.stats) ? nullptr : "Avg Value is not a number";
        case Col::L2: return setFinite(v, r.stats.l2, stat::L2, r.stats) ? nullptr : "L2Norm Value is not a number";
        case Col::Count: return setCount(v, r.stats.count, stat::Count, r.stats) ? nullptr : "Count is not a count";
        case Col::NegCount:
            return setCount(v, r.stats.negCount, stat::NegCount, r.stats) ? nullptr : "Negative Zero Count is not a count";
        case Col::PosCount:
            return setCount(v, r.stats.posCount, stat::PosCount, r.stats) ? nullptr : "Positive Zero Count is not a count";
        case Col::NanCount:
            return setCount(v, r.stats.nanCount, stat::NanCount, r.stats) ? nullptr : "NaN Count is not a count";
        case Col::NegInfCount:
            return setCount(v, r.stats.negInfCount, stat::NegInfCount, r.stats) ? nullptr : "Negative Inf Count is not a count";
        case Col::PosInfCount:
            return setCount(v, r.stats.posInfCount, stat::PosInfCount, r.stats) ? nullptr : "Positive Inf Count is not a count";
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
        if (c == Cell::Value && std::isfinite(d) && std::fabs(d) < kDblMaxSentinel) { dst = d; s.known |= bit; }
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
        const bool isHeader = (rest[0] == 'O' || rest[0] == '"') &&
                              (rest.starts_with("Op Type,") || rest.starts_with("\"Op Type\","));
        if (haveHeader && !isHeader) {  // a data line: the hot path
            pos = parser.row(text, pos, scan, lineNo) + 1;
            continue;
        }
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
        error = "statistic.csv: first non-empty line is not a header starting with 'Op Type,'";
        return false;
    }
    if (!haveHeader) {
        error = "statistic.csv: no header line";
        return false;
    }
    parser.finish();
    return true;
}

namespace {
bool parseOwned(std::shared_ptr<const std::string> text, StatisticCsvResult& out, std::string& error) {
    out = StatisticCsvResult{};
    out.text = std::move(text);
    return parseStatisticCsv(
        *out.text, [&](StatisticRow& r) { out.rows.push_back(r); }, out.columns, out.warnings, error);
}
}  // namespace

bool parseStatisticCsv(std::string_view text, StatisticCsvResult& out, std::string& error) {
    return parseOwned(std::make_shared<const std::string>(text), out, error);
}

std::size_t countLines(std::string_view text) {
    std::size_t n = 0, i = 0;
#if defined(__SSE2__)
    // Byte counters (0 - matches) summed every 255 blocks; no popcount (not in baseline x86-64).
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (i + 16 <= text.size()) {
        __m128i acc = zero;
        for (int k = 0; k < 255 && i + 16 <= text.size(); ++k, i += 16)
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i)), nl));
        const __m128i sums = _mm_sad_epu8(acc, zero);
        n += std::size_t(_mm_cvtsi128_si32(sums)) + std::size_t(_mm_cvtsi128_si32(_mm_srli_si128(sums, 8)));
    }
#endif
    for (; i < text.size(); ++i) n += text[i] == '\n';
    return n;
}

bool readStatisticCsv(const std::string& path, StatisticCsvResult& out, std::string& error) {
    std::string text;
    if (!readFileText(path, text, error)) return false;
    if (!parseOwned(std::make_shared<const std::string>(std::move(text)), out, error)) {
        error = path + ": " + error;
        return false;
    }
    return true;
}

}  // namespace dl

#pragma once
// The cells of statistic.csv: column names, null spellings, numbers and shapes. Internal to
// core/formats/mindspore/statistic_csv.cpp; a header so that its row loop inlines them (they run on every cell
// of every row).
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

// fast_float (Debian libfast-float-dev, header only) when installed: inlined, ~2x libstdc++'s
// from_chars for the short %g cells of statistic.csv; std::from_chars otherwise.
#if __has_include(<fast_float/fast_float.h>)
#include <fast_float/fast_float.h>
#define DUMPLENS_FAST_FLOAT 1
#endif

// Internal linkage, as when this was part of statistic_csv.cpp: the same inlining of the row loop.
namespace dl {
namespace {  // NOLINT(google-build-namespaces): included by statistic_csv.cpp only

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
    Ignored,
    OpType,
    OpName,
    TaskId,
    StreamId,
    Timestamp,
    Io,
    Slot,
    DataSize,
    DataType,
    Format,
    Shape,
    Max,
    Min,
    Avg,
    Count,
    NegCount,
    PosCount,
    NanCount,
    NegInfCount,
    PosInfCount,
    ZeroCount,
    L2,
    Md5,
};

struct ColName {
    std::string_view name;
    Col col;
};
constexpr std::array<ColName, 29> kColumns{{
    {"op type", Col::OpType},
    {"op name", Col::OpName},
    {"task id", Col::TaskId},
    {"stream id", Col::StreamId},
    {"timestamp", Col::Timestamp},
    {"io", Col::Io},
    {"input/output", Col::Io},
    {"slot", Col::Slot},
    {"data size", Col::DataSize},
    {"data type", Col::DataType},
    {"format", Col::Format},
    {"shape", Col::Shape},
    {"max value", Col::Max},
    {"min value", Col::Min},
    {"avg value", Col::Avg},
    {"mean value", Col::Avg},
    {"count", Col::Count},
    // MindSpore's names are misleading: they count elements < 0 and > 0 (tensor_summary.cc).
    {"negative zero count", Col::NegCount},
    {"positive zero count", Col::PosCount},
    {"nan count", Col::NanCount},
    {"negative inf count", Col::NegInfCount},
    {"positive inf count", Col::PosInfCount},
    {"zero count", Col::ZeroCount},
    {"l2norm value", Col::L2},
    {"l2 value", Col::L2},
    {"l2norm", Col::L2},
    {"md5", Col::Md5},
    {"md5 value", Col::Md5},
    {"max", Col::Max},
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

bool isNullSpelling(std::string_view s) { return s.empty() || iequals(s, "null") || iequals(s, "none") || s == "N/A"; }

// Clinger's fast path for the short %g cells writers print ("135.061", "-1.11155", "1e-05"): at
// most 19 digits whose value is at most 2^53 and a decimal exponent within +-22, so that the
// mantissa and the power of ten are exact doubles and one multiplication or division rounds
// correctly (strtod's answer). False for anything else (inf/nan spellings, long mantissas, big
// exponents, '+', blanks), which goes to the general parser.
constexpr double kPow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
inline bool isDigit(char c) { return unsigned(static_cast<unsigned char>(c)) - unsigned('0') <= 9u; }

[[gnu::always_inline]] inline bool parseShortDecimal(std::string_view s, double& v) {
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

// The general path of parseDouble, out of line: the inlined fast path stays small in the row loop.
[[gnu::noinline]] Cell parseDoubleGeneral(std::string_view s, double& v) {
    if (s.empty() || !startsNumber(s.front())) {  // a number starts with a digit or '-': no spelling to check
        if (isNullSpelling(s)) return Cell::Null;
        if (iequals(s, "true")) {
            v = 1;
            return Cell::Value;
        }
        if (iequals(s, "false")) {
            v = 0;
            return Cell::Value;
        }
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

[[gnu::always_inline]] inline Cell parseDouble(std::string_view s, double& v) {
    s = trimCell(s);
    if (parseShortDecimal(s, v)) [[likely]]
        return Cell::Value;
    return parseDoubleGeneral(s, v);
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
         ((v >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull) >>
        32;
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
[[gnu::always_inline]] inline bool parseDigits(std::string_view s, T& v) {
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

// The general path of parseInt, out of line (see parseDoubleGeneral).
template <class T>
[[gnu::noinline]] Cell parseIntGeneral(std::string_view s, T& v) {
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

template <class T>
[[gnu::always_inline]] inline Cell parseInt(std::string_view s, T& v) {
    s = trimCell(s);
    if (parseDigits(s, v)) [[likely]]
        return Cell::Value;
    return parseIntGeneral(s, v);
}

// "(2,3)", "()", "(2)", "(2,)", "[2, 3]" -> dims.
bool parseShape(std::string_view s, std::vector<std::int64_t>& dims) {
    dims.clear();
    s = trimCell(s);
    if (s.size() < 2 || !((s.front() == '(' && s.back() == ')') || (s.front() == '[' && s.back() == ']'))) return false;
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

}  // namespace
}  // namespace dl

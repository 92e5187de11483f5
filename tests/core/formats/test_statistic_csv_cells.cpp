// statistic.csv cells against the C library: every number the parser's fast paths (digits-only
// integers, short decimals) accept or hand on must read as strtod / strtoull read the same text,
// in every column layout of docs/formats.md 1.6 / 3.8, with LF or CRLF line ends and quoted cells.
#include "core/formats/mindspore/statistic_csv.h"

#include <gtest/gtest.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace dl;

namespace {

std::string fmt(const char* f, double v, int p) {
    char buf[128];
    std::snprintf(buf, sizeof buf, f, p, v);
    return buf;
}

// A finite double in one of the spellings writers and hand edits produce.
std::string randomDouble(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> unit(1.0, 10.0);
    std::uniform_int_distribution<int> mag(-30, 30), prec(1, 17), mode(0, 9);
    const double v = (rng() & 1 ? -1.0 : 1.0) * unit(rng) * std::pow(10.0, mag(rng));
    switch (mode(rng)) {
        case 0:
            return fmt("%.*g", v, 6);  // MindSpore's %g
        case 1:
            return fmt("%.*g", v, prec(rng));  // any precision, 17 = round trip
        case 2:
            return fmt("%.*e", v, prec(rng));  // exponent with sign and 2+ digits
        case 3:
            return fmt("%.*f", std::fmod(v, 1e7), prec(rng) % 9);  // fixed, up to 8 decimals
        case 4:
            return std::to_string(std::int64_t(std::fmod(v, 1e15)));  // integral
        case 5: {  // more digits than a double holds, or than 19: the general path
            std::string s = (rng() & 1) ? "-" : "";
            for (int i = 0, n = 18 + int(rng() % 10); i < n; ++i) s += char('0' + rng() % 10);
            return s.insert(s.size() - 5, ".") + "e" + std::to_string(int(rng() % 40) - 20);
        }
        case 6: {  // exponents at and beyond the fast path's +-22
            const int e = 19 + int(rng() % 8);
            return std::to_string(1 + rng() % 999999) + ((rng() & 1) ? "e-" : "E+") + std::to_string(e);
        }
        case 7: {  // 2^53 and its neighbours (exact limit of the fast path)
            const std::uint64_t m = (std::uint64_t(1) << 53) - 2 + rng() % 5;
            return std::to_string(m) + ((rng() & 1) ? "" : "e-3");
        }
        case 8: {  // signs, zeros, a bare point
            static const char* kOdd[] = {"0",   "-0",   "0.0", "-0.0",  "+1.5",   "1.",   ".5",   "-.25",  "00012.5000",
                                         "1e0", "1E-0", "+0",  "65504", "-65504", "1e22", "1e23", "9e-22", "9e-23"};
            return kOdd[rng() % (sizeof kOdd / sizeof *kOdd)];
        }
        default:
            return " " + fmt("%.*g", v, 6) + " ";  // blanks around the cell
    }
}

// An unsigned count spelled as writers do, with the odd forms the general path takes.
std::string randomCount(std::mt19937_64& rng, std::uint64_t maxValue) {
    switch (rng() % 6) {
        case 0:
            return std::to_string(rng() % 1000);
        case 1:
            return std::to_string(maxValue == ~0ull ? rng() : rng() % (maxValue + 1));  // up to 20 digits
        case 2:
            return std::to_string(maxValue);
        case 3:
            return std::to_string(rng() % 100) + ".0";  // device mode
        case 4:
            return "00" + std::to_string(rng() % 100);
        default:
            return std::to_string(rng() % 100000000);
    }
}

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// The reference readings.
std::optional<double> refDouble(std::string_view cell) {
    const std::string s(trimmed(cell));
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return std::nullopt;
    return v;
}
template <class T>
std::optional<T> refInt(std::string_view cell) {
    const std::string s(trimmed(cell));
    if (s.empty()) return std::nullopt;
    if (s.find_first_not_of("0123456789") == std::string::npos) {
        errno = 0;
        const unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
        if (errno == ERANGE || v > std::uint64_t(std::numeric_limits<T>::max())) return std::nullopt;
        return T(v);
    }
    const auto d = refDouble(s);  // "2.0", "1e3"
    if (!d || !std::isfinite(*d) || *d != std::floor(*d) || *d < 0 || *d > double(std::numeric_limits<T>::max()))
        return std::nullopt;
    return T(*d);
}

bool sameBits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

struct Layout {
    const char* name;
    std::vector<std::string> columns;
    bool trailingComma;
    bool unquotedShape;  // msprobe C++ writer
};

std::vector<Layout> layouts() {
    const std::vector<std::string> base = {"Op Type", "Op Name", "Task ID",   "Stream ID", "Timestamp",
                                           "IO",      "Slot",    "Data Size", "Data Type", "Shape"};
    auto with = [&](std::vector<std::string> stats) {
        std::vector<std::string> c = base;
        c.insert(c.end(), stats.begin(), stats.end());
        return c;
    };
    const std::vector<std::string> ms22 = {"Max Value", "Min Value",           "Avg Value",
                                           "Count",     "Negative Zero Count", "Positive Zero Count",
                                           "NaN Count", "Negative Inf Count",  "Positive Inf Count",
                                           "Zero Count"};
    std::vector<std::string> ms2214 = ms22, dev = ms22;
    ms2214.push_back("MD5");
    dev.push_back("L2 Value");
    dev.push_back("MD5");
    // 2.3+: every category, in an order a user could list them.
    const std::vector<std::string> ms23all = {
        "L2Norm Value", "Zero Count", "Max Value",          "NaN Count", "Positive Zero Count", "MD5",
        "Min Value",    "Count",      "Negative Inf Count", "Avg Value", "Positive Inf Count",  "Negative Zero Count"};
    return {
        {"1.6-2.2 (20 columns)", with(ms22), false, false},
        {"2.2.14-2.3rc (21 columns, MD5)", with(ms2214), false, false},
        {"dev (L2 Value, MD5)", with(dev), false, false},
        {"2.3+ default", with({"Max Value", "Min Value", "L2Norm Value"}), true, false},
        {"2.3+ every category, user order", with(ms23all), true, false},
        {"msprobe C++ L2",
         {"Op Type", "Op Name", "Task ID", "Stream ID", "Timestamp", "Input/Output", "Slot", "Data Size", "Data Type",
          "Format", "Shape", "Max Value", "Min Value", "Avg Value", "L2Norm Value", "NaN Count", "Negative Inf Count",
          "Positive Inf Count", "MD5 Value"},
         false,
         true},
    };
}

bool isCount(const std::string& c) { return c.find("Count") != std::string::npos; }

struct Written {
    std::vector<std::string> cells;  // as written, by column
};

}  // namespace

// Rows of random cells in every layout, LF and CRLF, plain and quoted cells: each field read back
// equals what strtod / strtoull read from the same cell text (doubles bit for bit, -0 included).
TEST(StatisticCsvCells, EveryLayoutReadsAsTheCLibraryReadsItsCells) {
    std::mt19937_64 rng(20261201);
    for (const Layout& layout : layouts())
        for (const bool crlf : {false, true})
            for (const bool quoteAll : {false, true}) {
                SCOPED_TRACE(std::string(layout.name) + (crlf ? ", CRLF" : ", LF") + (quoteAll ? ", quoted" : ""));
                const char* eol = crlf ? "\r\n" : "\n";
                std::string text;
                for (std::size_t i = 0; i < layout.columns.size(); ++i) {
                    if (i) text += ',';
                    text += layout.columns[i];
                }
                text += eol;
                std::vector<Written> rows;
                for (int n = 0; n < 150; ++n) {
                    Written w;
                    for (const std::string& c : layout.columns) {
                        std::string v;
                        if (c == "Op Type")
                            v = "MatMul";
                        else if (c == "Op Name")
                            v = "Default_net-Cell_layers_" + std::to_string(n % 7) + "_MatMul-op" + std::to_string(n);
                        else if (c == "Task ID" || c == "Stream ID")
                            v = randomCount(rng, 0xffffffffull);
                        else if (c == "Timestamp")
                            v = randomCount(rng, 0x7fffffffffffffffull);
                        else if (c == "IO" || c == "Input/Output")
                            v = (n & 1) ? "input" : "output";
                        else if (c == "Slot")
                            v = std::to_string(n % 5);
                        else if (c == "Data Size")
                            v = randomCount(rng, ~0ull);
                        else if (c == "Data Type")
                            v = layout.unquotedShape ? "FLOAT16" : "float16";
                        else if (c == "Format")
                            v = "FRACTAL_NZ";
                        else if (c == "Shape") {
                            v = "(";
                            for (std::uint64_t d = 0, nd = rng() % 5; d < nd; ++d)
                                v += (d ? "," : "") + std::to_string(rng() % 100000);  // NOLINT
                            v += ")";
                        } else if (c == "MD5" || c == "MD5 Value")
                            v = "0123456789abcdef";
                        else if (isCount(c))
                            v = (rng() % 10 == 0) ? "" : randomCount(rng, ~0ull);
                        else
                            v = (rng() % 20 == 0) ? "null" : randomDouble(rng);
                        w.cells.push_back(v);
                    }
                    // Max >= Min, or the row would be an empty-tensor marker.
                    std::size_t mx = SIZE_MAX, mn = SIZE_MAX;
                    for (std::size_t i = 0; i < layout.columns.size(); ++i) {
                        if (layout.columns[i] == "Max Value") mx = i;
                        if (layout.columns[i] == "Min Value") mn = i;
                    }
                    if (mx != SIZE_MAX && mn != SIZE_MAX) {
                        const auto a = refDouble(w.cells[mx]), b = refDouble(w.cells[mn]);
                        if (a && b && *a < *b) std::swap(w.cells[mx], w.cells[mn]);
                    }
                    for (std::size_t i = 0; i < w.cells.size(); ++i) {
                        const bool shape = layout.columns[i] == "Shape";
                        const bool quote = quoteAll || (shape && !layout.unquotedShape);
                        if (i) text += ',';
                        if (quote) text += '"';
                        text += w.cells[i];
                        if (quote) text += '"';
                    }
                    text += layout.trailingComma ? "," : "";
                    text += eol;
                    rows.push_back(std::move(w));
                }
                StatisticCsvResult r;
                std::string err;
                ASSERT_TRUE(parseStatisticCsv(text, r, err)) << err;
                ASSERT_TRUE(r.warnings.empty()) << r.warnings[0].line << ": " << r.warnings[0].reason;
                ASSERT_EQ(r.rows.size(), rows.size());
                for (std::size_t n = 0; n < rows.size(); ++n) {
                    const StatisticRow& row = r.rows[n];
                    const TensorStats& s = row.stats;
                    ASSERT_EQ(row.line, n + 2);
                    for (std::size_t i = 0; i < layout.columns.size(); ++i) {
                        const std::string& c = layout.columns[i];
                        const std::string& cell = rows[n].cells[i];
                        const auto at = [&] { return "line " + std::to_string(n + 2) + ", " + c + " '" + cell + "'"; };
                        if (c == "Op Name")
                            EXPECT_EQ(row.opName, cell) << at();
                        else if (c == "Op Type")
                            EXPECT_EQ(row.opType, cell) << at();
                        else if (c == "Task ID")
                            EXPECT_EQ(row.taskId, refInt<std::uint32_t>(cell).value()) << at();
                        else if (c == "Stream ID")
                            EXPECT_EQ(row.streamId, refInt<std::uint32_t>(cell).value()) << at();
                        else if (c == "Timestamp")
                            EXPECT_EQ(row.timestampUs, refInt<std::int64_t>(cell).value()) << at();
                        else if (c == "Data Size")
                            EXPECT_EQ(row.dataBytes, refInt<std::uint64_t>(cell).value()) << at();
                        else if (c == "Data Type")
                            EXPECT_EQ(row.dtype, DType::Float16) << at();
                        else if (c == "Format")
                            EXPECT_EQ(row.format, cell) << at();
                        else if (c == "MD5" || c == "MD5 Value")
                            EXPECT_EQ(row.md5, cell) << at();
                        else if (c == "Shape") {
                            std::vector<std::int64_t> dims;
                            for (std::size_t p = 1; p + 1 < cell.size();) {
                                const std::size_t q = std::min(cell.find(',', p), cell.size() - 1);
                                dims.push_back(std::strtoll(cell.substr(p, q - p).c_str(), nullptr, 10));
                                p = q + 1;
                            }
                            EXPECT_TRUE(row.hasShape) << at();
                            EXPECT_EQ(row.shape, dims) << at();
                        } else if (isCount(c)) {
                            const auto v = refInt<std::uint64_t>(cell);
                            const std::uint64_t* got = c == "Count" ? &s.count
                                : c == "NaN Count"                  ? &s.nanCount
                                : c == "Negative Inf Count"         ? &s.negInfCount
                                : c == "Positive Inf Count"         ? &s.posInfCount
                                : c == "Zero Count"                 ? &s.zeroCount
                                : c == "Negative Zero Count"        ? &s.negCount
                                                                    : &s.posCount;
                            const std::uint32_t bit = c == "Count" ? stat::Count
                                : c == "NaN Count"                 ? stat::NanCount
                                : c == "Negative Inf Count"        ? stat::NegInfCount
                                : c == "Positive Inf Count"        ? stat::PosInfCount
                                : c == "Zero Count"                ? stat::ZeroCount
                                : c == "Negative Zero Count"       ? stat::NegCount
                                                                   : stat::PosCount;
                            EXPECT_EQ(s.has(bit), v.has_value()) << at();
                            if (v) {
                                EXPECT_EQ(*got, *v) << at();
                            }
                        } else if (c != "IO" && c != "Input/Output" && c != "Slot") {
                            const auto v = trimmed(cell) == "null" ? std::nullopt : refDouble(cell);
                            const double got = c == "Max Value" ? s.max
                                : c == "Min Value"              ? s.min
                                : c == "Avg Value"              ? s.mean
                                                                : s.l2;
                            const std::uint32_t bit = c == "Max Value" ? stat::Max
                                : c == "Min Value"                     ? stat::Min
                                : c == "Avg Value"                     ? stat::Mean
                                                                       : stat::L2;
                            ASSERT_EQ(s.has(bit), v.has_value()) << at();
                            if (v) {
                                const double want = *v;
                                EXPECT_TRUE(sameBits(got, want)) << at() << ": " << got << " vs strtod " << want;
                            }
                        }
                    }
                }
            }
}

// inf/nan spellings in Max and Min become evidence bits, never figures; what strtod reads decides
// which bit. Out-of-range literals keep their sign.
TEST(StatisticCsvCells, InfAndNanSpellingsBecomeEvidence) {
    const char* kSpellings[] = {"inf", "-inf", "+inf",  "INF",    "Infinity", "-Infinity", "nan",  "-nan",
                                "NaN", "NAN",  "1e999", "-1e999", "1e309",    " inf ",     "inf\r"};
    std::string text =
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value\n";
    for (const char* s : kSpellings) text += std::string("A,a,0,0,1,output,0,2,float16,\"(1)\",") + s + "," + s + "\n";
    StatisticCsvResult r;
    std::string err;
    ASSERT_TRUE(parseStatisticCsv(text, r, err)) << err;
    ASSERT_TRUE(r.warnings.empty()) << r.warnings[0].reason;
    ASSERT_EQ(r.rows.size(), std::size(kSpellings));
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
        SCOPED_TRACE(kSpellings[i]);
        const double v = refDouble(kSpellings[i]).value();
        const std::uint8_t want = std::isnan(v) ? SeenNan : v > 0 ? SeenPosInf : SeenNegInf;
        EXPECT_EQ(r.rows[i].nonFinite, want);
        EXPECT_FALSE(r.rows[i].stats.has(stat::Max));
        EXPECT_FALSE(r.rows[i].stats.has(stat::Min));
        EXPECT_TRUE(r.rows[i].hasNan() || r.rows[i].hasInf());
    }
}

// Integers the digits-only path must not take: past the type's range, signs, 20+ digits. A bad one
// drops its row with a warning naming the line and the column; the rest of the file parses.
TEST(StatisticCsvCells, IntegerEdgesAndOverflowNameTheLine) {
    std::string text =
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Count\n";
    struct Case {
        const char* task;
        const char* ts;
        const char* count;
        bool ok;
    };
    const Case kCases[] = {
        {"4294967295", "9223372036854775807", "18446744073709551615", true},  // each type's maximum
        {"0000000000000000000042", "0001", "000", true},                      // leading zeros past 19 digits
        {"7", "-5", "+3", true},                                              // signed timestamp, '+' count
        {" 12 ", "1733905458820741", "1e3", true},                            // blanks, exponent count
        {"4294967296", "1", "1", false},                                      // Task ID past u32
        {"1", "9223372036854775808", "1", false},                             // Timestamp past i64
        {"1", "1", "18446744073709551616", false},                            // Count past u64
        {"-1", "1", "1", false},                                              // negative id
        {"1", "1", "2.5", false},                                             // fractional count
        {"1", "12a", "1", false},
    };
    for (const Case& c : kCases)
        text += std::string("A,a,") + c.task + ",0," + c.ts + ",output,0,4,float32,\"()\",1," + c.count + "\n";
    StatisticCsvResult r;
    std::string err;
    ASSERT_TRUE(parseStatisticCsv(text, r, err)) << err;
    std::vector<std::uint32_t> okLines, warnedLines;
    for (std::size_t i = 0; i < std::size(kCases); ++i)
        (kCases[i].ok ? okLines : warnedLines).push_back(std::uint32_t(i + 2));
    std::vector<std::uint32_t> gotLines, gotWarned;
    for (const auto& row : r.rows) gotLines.push_back(row.line);
    for (const auto& w : r.warnings) gotWarned.push_back(w.line);
    EXPECT_EQ(gotLines, okLines);
    EXPECT_EQ(gotWarned, warnedLines);
    for (const auto& row : r.rows) {
        const Case& c = kCases[row.line - 2];
        EXPECT_EQ(row.taskId, refInt<std::uint32_t>(c.task).value());
        EXPECT_EQ(row.timestampUs, std::strtoll(c.ts, nullptr, 10));
        EXPECT_EQ(row.stats.count, refInt<std::uint64_t>(c.count).value());
    }
    EXPECT_NE(r.warnings[0].reason.find("Task ID"), std::string::npos);
    EXPECT_NE(r.warnings[1].reason.find("Timestamp"), std::string::npos);
    EXPECT_NE(r.warnings[2].reason.find("Count"), std::string::npos);
}

// The rows' text views outlive the parse call: the result keeps the text, and moving or copying
// the result keeps them valid (short texts live in the string object itself, so a plain member
// string would move them).
TEST(StatisticCsvCells, ResultRowsViewTextThatMovesWithTheResult) {
    StatisticCsvResult moved;
    {
        std::string text = "Op Type,Op Name,IO,Slot,Data Type\nA,b,input,0,int8\n";
        StatisticCsvResult r;
        std::string err;
        ASSERT_TRUE(parseStatisticCsv(text, r, err)) << err;
        text.assign(text.size(), 'x');  // the caller's text is gone
        moved = std::move(r);
    }
    const StatisticCsvResult copy = moved;
    ASSERT_EQ(copy.rows.size(), 1u);
    EXPECT_EQ(copy.rows[0].opType, "A");
    EXPECT_EQ(copy.rows[0].opName, "b");
    EXPECT_EQ(copy.rows[0].dtypeRaw, "int8");
}

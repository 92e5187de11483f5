// The MindSpore row function of statistic_csv.cpp against its general loop: every layout, on
// generated rows (good ones and ones that leave the fixed form and fall back), gives the same rows
// field by field and the same warnings through both paths.
#include "core/formats/mindspore/statistic_csv.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace dl;

namespace {
constexpr const char* kPrefix = "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape";

struct Parsed {
    std::vector<StatisticRow> rows;
    std::vector<StatisticCsvWarning> warnings;
    std::vector<std::string> columns;
};

Parsed parse(const std::string& text, bool fixedLayouts) {
    Parsed p;
    std::string err;
    EXPECT_TRUE(parseStatisticCsv(
        text, [&](StatisticRow& r) { p.rows.push_back(r); }, p.columns, p.warnings, err, 1000, fixedLayouts))
        << err;
    return p;
}

// One cell of a statistics column: mostly short decimals and plain counts, sometimes the spellings
// the general parsers handle (null, inf, nan, "2.0", blanks, exponents).
std::string statCell(const std::string& col, std::mt19937& rng) {
    const unsigned k = rng() % 16;
    const bool isCount = col.find("Count") != std::string::npos;
    if (col == "MD5") return k == 0 ? "" : "0123456789abcdef" + std::to_string(rng() % 1000);
    switch (k) {
        case 0:
            return "null";
        case 1:
            return isCount ? "2.0" : "inf";
        case 2:
            return isCount ? " 7 " : "-nan";
        case 3:
            return isCount ? "" : "1e-05";
        case 4:
            return isCount ? "12345678901234" : "1.79769e+308";
        default:
            if (isCount) return std::to_string(rng() % 100000);
            return std::to_string(int(rng() % 20000) - 10000) + "." + std::to_string(rng() % 1000);
    }
}

// Rows for `statCols` (header names after the ten fixed ones); every 7th row leaves the fixed form.
std::string makeFile(const std::vector<std::string>& statCols, bool trailingComma, int rows) {
    std::mt19937 rng(1234);
    std::string text = kPrefix;
    for (const auto& c : statCols) text += "," + c;
    text += trailingComma ? ",\n" : "\n";
    const char* dtypes[] = {"float16", "float32", "bfloat16", "int32"};
    for (int i = 0; i < rows; ++i) {
        std::vector<std::string> cells = {i % 5 ? "MatMul" : "\"Add\"",
                                          "Default/op" + std::to_string(i),
                                          std::to_string(rng() % 10),
                                          std::to_string(rng() % 4),
                                          std::to_string(1733905458820741ull + rng() % 1000),
                                          i % 2 ? "input" : "output",
                                          std::to_string(rng() % 3),
                                          std::to_string(rng() % 100000000),
                                          dtypes[rng() % 4],
                                          i % 3 ? "\"(1,4096," + std::to_string(rng() % 9000) + ")\"" : "\"()\""};
        for (const auto& c : statCols) cells.push_back(statCell(c, rng));
        switch (i % 7 == 6 ? (i / 7) % 8 : -1) {  // the fall-backs
            case 0:
                cells.pop_back();
                break;  // a cell short
            case 1:
                cells.push_back("42");
                break;  // a non-blank extra cell
            case 2:
                cells[2] = "x1";
                break;  // bad Task ID
            case 3:
                cells[1] = "  ";
                break;  // empty Op Name
            case 4:
                cells[9] = "\"(1,2";
                break;  // unclosed quote
            case 5:
                cells[5] = "sideways";
                break;  // bad IO
            case 6:
                cells[1] = "\"a,b\"";
                break;  // quoted comma, still a good row
            case 7:     // a bad last statistic
                if (!statCols.empty()) cells.back() = statCols.back().find("Count") != std::string::npos ? "-3" : "abc";
                break;
            default:
                break;
        }
        for (std::size_t c = 0; c < cells.size(); ++c) text += (c ? "," : "") + cells[c];
        text += trailingComma ? ",\n" : "\n";
        if (i % 11 == 10) text += "\n";  // a blank line
    }
    return text;
}

void expectSameRow(const StatisticRow& a, const StatisticRow& b) {
    SCOPED_TRACE("line " + std::to_string(a.line));
    EXPECT_EQ(a.line, b.line);
    EXPECT_EQ(a.opType, b.opType);
    EXPECT_EQ(a.opName, b.opName);
    EXPECT_EQ(a.taskId, b.taskId);
    EXPECT_EQ(a.streamId, b.streamId);
    EXPECT_EQ(a.timestampUs, b.timestampUs);
    EXPECT_EQ(a.io, b.io);
    EXPECT_EQ(a.slot, b.slot);
    EXPECT_EQ(a.dataBytes, b.dataBytes);
    EXPECT_EQ(a.dtype, b.dtype);
    EXPECT_EQ(a.dtypeRaw, b.dtypeRaw);
    EXPECT_EQ(a.format, b.format);
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.hasShape, b.hasShape);
    EXPECT_EQ(a.md5, b.md5);
    EXPECT_EQ(std::memcmp(&a.stats, &b.stats, sizeof a.stats), 0);  // bit for bit, NaN defaults included
    EXPECT_EQ(a.stats.known, b.stats.known);
    EXPECT_EQ(a.nonFinite, b.nonFinite);
    EXPECT_EQ(a.lowerBoundCounts, b.lowerBoundCounts);
}

void expectSamePaths(const std::vector<std::string>& statCols, bool trailingComma) {
    const std::string text = makeFile(statCols, trailingComma, 400);
    const Parsed fixed = parse(text, true), general = parse(text, false);
    ASSERT_EQ(fixed.rows.size(), general.rows.size());
    EXPECT_GT(general.rows.size(), 300u);  // most rows are good
    for (std::size_t i = 0; i < fixed.rows.size(); ++i) expectSameRow(fixed.rows[i], general.rows[i]);
    ASSERT_EQ(fixed.warnings.size(), general.warnings.size());
    EXPECT_GT(general.warnings.size(), 30u);  // the fall-backs warned
    for (std::size_t i = 0; i < fixed.warnings.size(); ++i) {
        EXPECT_EQ(fixed.warnings[i].line, general.warnings[i].line);
        EXPECT_EQ(fixed.warnings[i].reason, general.warnings[i].reason);
        EXPECT_EQ(fixed.warnings[i].severity, general.warnings[i].severity);
    }
    EXPECT_EQ(fixed.columns, general.columns);
}
}  // namespace

TEST(StatisticCsvLayouts, Ms16To22TwentyColumns) {
    expectSamePaths({"Max Value", "Min Value", "Avg Value", "Count", "Negative Zero Count", "Positive Zero Count",
                     "NaN Count", "Negative Inf Count", "Positive Inf Count", "Zero Count"},
                    false);
}

TEST(StatisticCsvLayouts, Ms22WithMd5) {
    expectSamePaths({"Max Value", "Min Value", "Avg Value", "Count", "Negative Zero Count", "Positive Zero Count",
                     "NaN Count", "Negative Inf Count", "Positive Inf Count", "Zero Count", "MD5"},
                    false);
}

TEST(StatisticCsvLayouts, Ms23DefaultCategories) { expectSamePaths({"Max Value", "Min Value", "L2Norm Value"}, true); }

TEST(StatisticCsvLayouts, Ms23UserOrderedCategories) {
    expectSamePaths({"Max Value", "Min Value", "Avg Value", "NaN Count", "Negative Inf Count", "Positive Inf Count",
                     "L2Norm Value"},
                    true);
    expectSamePaths({"Zero Count", "L2Norm Value", "MD5", "Count", "Min Value", "Positive Zero Count", "Max Value",
                     "Negative Zero Count", "Avg Value"},
                    true);
}

TEST(StatisticCsvLayouts, OtherColumnsAfterTheFixedTen) {
    expectSamePaths({"Format", "Max Value"}, false);  // not a statistics column: cell() reads it
    expectSamePaths({}, true);                        // the ten fixed columns alone
}

// DumpLens's --format msprobe-csv against msprobe's own tables of real captures
// (tests/data/real/msprobe, written by the mindstudio-probe 8.3.3 and 26.2.0 wheels; see its README):
// both table generations, all four modes, both pairs, every cell.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <optional>
#include <sstream>
#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/compare/compare_json.h"
#include "core/compare/msprobe_table.h"
#include "core/compare/run_comparison.h"
#include "core/formats/msprobe/msprobe_dump.h"
#include "core/index/dump_indexer.h"
#include "tests/core/cli_run.h"
#include "tests/core/compare/csv_cells.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {
using dltest::parseCsv;

const fs::path kReal = fs::path(DUMPLENS_SAMPLES_DIR) / ".." / "real" / "msprobe";

std::string readAll(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

fs::path expectedTable(const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".csv") return e.path();
    return {};
}

// A number in full (a trailing % on both sides aside), else nullopt.
std::optional<double> number(std::string s, bool percent) {
    if (percent) s.pop_back();
    if (s.empty() || s.front() == ' ') return std::nullopt;
    char* e = nullptr;
    const double v = std::strtod(s.c_str(), &e);
    if (e != s.c_str() + s.size()) return std::nullopt;
    return v;
}

// Equal text, or numbers within 1e-6 relative: 8.3.3's cells went through xlsx (16 digits, "1" for
// 1.0), and DumpLens sums in float64 where msprobe sums some metrics in float32.
bool sameCell(const std::string& want, const std::string& got) {
    if (want == got) return true;
    const bool pw = !want.empty() && want.back() == '%', pg = !got.empty() && got.back() == '%';
    if (pw != pg) return false;
    const auto a = number(want, pw), b = number(got, pg);
    if (!a || !b) return false;
    if (std::isinf(*a) || std::isinf(*b) || std::isnan(*a) || std::isnan(*b)) return false;
    return std::abs(*a - *b) <= 1e-6 * std::max(1.0, std::abs(*a));
}

// Every row of msprobe's table is DumpLens's row at the same place, every column of msprobe's is
// DumpLens's (and no other), and every cell equals msprobe's text (numbers within 1e-6 relative).
void expectSameTable(const std::string& version, const std::string& mode, const std::string& npu,
                     const std::string& bench) {
    SCOPED_TRACE(version + " " + mode + " " + npu + "-vs-" + bench);
    const fs::path d = kReal / "dumps" / version / mode;
    IndexOptions io;
    io.useCache = false;
    IndexReport rep;
    std::string error, csv;
    DumpIndex ia, ib;
    ASSERT_TRUE(indexDump((d / npu).string(), io, ia, rep, error)) << error;
    ASSERT_TRUE(indexDump((d / bench).string(), io, ib, rep, error)) << error;
    MsprobeTableOptions mo;
    ASSERT_TRUE(parseMsprobeGeneration(version, mo.generation));
    MsprobeTableReport tr;
    ASSERT_TRUE(writeMsprobeTableCsv(ia, ib, mo, csv, tr, error)) << error;
    const auto got = parseCsv(csv);
    const auto want = parseCsv(readAll(expectedTable(kReal / "tables" / version / mode / (npu + "-vs-" + bench))));
    ASSERT_GT(want.size(), 100u);
    ASSERT_EQ(got.size(), want.size());
    ASSERT_EQ(got[0], want[0]);  // the header, column for column
    std::size_t cells = 0, differ = 0;
    for (std::size_t i = 1; i < want.size(); ++i) {
        ASSERT_EQ(got[i].size(), want[0].size()) << "row " << i;
        for (std::size_t k = 0; k < want[0].size(); ++k) {
            ++cells;
            if (sameCell(want[i][k], got[i][k])) continue;
            if (++differ <= 20)
                ADD_FAILURE() << want[i][0] << " " << want[0][k] << ": msprobe \"" << want[i][k] << "\", DumpLens \""
                              << got[i][k] << "\"";
        }
    }
    EXPECT_EQ(differ, 0u) << "of " << cells << " cells";
    EXPECT_GT(cells, 2500u);
}

void expectSameTables(const std::string& version, const std::string& mode) {
    expectSameTable(version, mode, "fp16_overflow", "fp32_fix");
    expectSameTable(version, mode, "softmax_bad", "softmax_good");
}
}  // namespace

TEST(MsprobeReal, StatisticsL1TablesEqualMsprobe833) { expectSameTables("8.3.3", "statistics_L1"); }
TEST(MsprobeReal, StatisticsMixTablesEqualMsprobe833) { expectSameTables("8.3.3", "statistics_mix"); }
TEST(MsprobeReal, TensorTablesEqualMsprobe833) { expectSameTables("8.3.3", "tensor_L1"); }
TEST(MsprobeReal, Md5TablesEqualMsprobe833) { expectSameTables("8.3.3", "md5_L1"); }
TEST(MsprobeReal, StatisticsL1TablesEqualMsprobe2620) { expectSameTables("26.2.0", "statistics_L1"); }
TEST(MsprobeReal, StatisticsMixTablesEqualMsprobe2620) { expectSameTables("26.2.0", "statistics_mix"); }
TEST(MsprobeReal, TensorTablesEqualMsprobe2620) { expectSameTables("26.2.0", "tensor_L1"); }
TEST(MsprobeReal, Md5TablesEqualMsprobe2620) { expectSameTables("26.2.0", "md5_L1"); }

// msprobe's CLI takes a rank's dump.json; so does DumpLens (it stands for its folder): the table
// is the same one as of the folders.
TEST(MsprobeReal, CompareTakesDumpJsonPaths) {
    const std::string d = std::string(DUMPLENS_TEST_DATA_DIR) + "/real/msprobe/dumps/8.3.3/md5_L1/";
    const auto byJson =
        dltest::runCli("compare " + d + "softmax_bad/dump.json " + d + "softmax_good/dump.json --format msprobe-csv",
                       60, "2>/dev/null");
    const auto byFolder =
        dltest::runCli("compare " + d + "softmax_bad " + d + "softmax_good --format msprobe-csv", 60, "2>/dev/null");
    ASSERT_EQ(byJson.code, 0) << byJson.output;
    ASSERT_EQ(byFolder.code, 0) << byFolder.output;
    EXPECT_GT(std::count(byJson.output.begin(), byJson.output.end(), '\n'), 200);
    EXPECT_EQ(byJson.output, byFolder.output);
}

namespace {
DumpIndex indexOf(const fs::path& p) {
    IndexOptions io;
    io.useCache = false;
    IndexReport rep;
    std::string error;
    DumpIndex idx;
    EXPECT_TRUE(indexDump(p.string(), io, idx, rep, error)) << error;
    return idx;
}
}  // namespace

// The softmax pair differs only in softmax's dim (-2 vs -1), a non-tensor argument: it is the first
// divergence, named before the output it changes, in every mode and both msprobe versions. The
// fp16 pair's arguments (the scale 4096, eps, dims) are all equal.
TEST(MsprobeReal, DifferingArgumentIsTheFirstDivergence) {
    for (const char* version : {"8.3.3", "26.2.0"})
        for (const char* mode : {"statistics_L1", "statistics_mix", "tensor_L1", "md5_L1"}) {
            SCOPED_TRACE(std::string(version) + " " + mode);
            const fs::path d = kReal / "dumps" / version / mode;
            const DumpIndex a = indexOf(d / "softmax_bad"), b = indexOf(d / "softmax_good");
            const RunComparison c = compareRuns(a, b, {});
            ASSERT_GE(c.firstArgument, 0) << c.story;
            const ArgumentDifference& x = c.argumentDiffs[std::size_t(c.firstArgument)];
            EXPECT_EQ(a.strings.str(a.ops[x.op].name), "Functional.softmax.0.forward");
            EXPECT_EQ(x.label, "input.dim");
            EXPECT_EQ(x.a, "-2");
            EXPECT_EQ(x.b, "-1");
            EXPECT_EQ(c.argumentDiffs.size(), 2u);  // both softmax calls
            EXPECT_NE(c.story.find("input.dim is -2 in run A, -1 in run B"), std::string::npos) << c.story;
            EXPECT_NE(
                compareText(c, a, b).find("first divergence: rank 0 iteration 0 softmax Functional.softmax.0.forward "
                                          "input.dim [argument] -2 vs -1"),
                std::string::npos);
            const DumpIndex fa = indexOf(d / "fp16_overflow"), fb = indexOf(d / "fp32_fix");
            const RunComparison f = compareRuns(fa, fb, {});
            EXPECT_TRUE(f.argumentDiffs.empty());
            EXPECT_EQ(f.firstArgument, -1);
        }
}

// The fp16 run's scaled logits are finite (Max 14592) but msprobe's fp16 Mean and Norm of them
// overflowed: analyze keeps the clean verdict and says which statistic overflowed; the fp32 fix has none.
TEST(MsprobeReal, AnalyzeNamesStatisticsThatOverflowedInFp16) {
    for (const char* version : {"8.3.3", "26.2.0"}) {
        SCOPED_TRACE(version);
        const fs::path d = kReal / "dumps" / version / "statistics_L1";
        const DumpIndex a = indexOf(d / "fp16_overflow");
        const AnalysisResult r = analyze(a);
        EXPECT_FALSE(r.overflow);
        const std::string text = toText(a, r);
        // Counted in dump.json here: tensors with a +-Infinity Mean or Norm and finite Max and Min.
        std::string json = readAll(d / "fp16_overflow" / "dump.json");
        neutralizeNonFiniteTokens(json.data(), json.size());
        std::size_t expected = 0;
        for (std::size_t p = json.find("\"Max\""); p != std::string::npos; p = json.find("\"Max\"", p + 1)) {
            const std::size_t end = json.find('}', p);
            const std::string t = json.substr(p, end - p);
            const bool finiteRange =
                t.find("\"Max\": \"") == std::string::npos && t.find("\"Min\": \"") == std::string::npos;
            expected += finiteRange &&
                (t.find("\"Mean\": \"") != std::string::npos || t.find("\"Norm\": \"") != std::string::npos);
        }
        ASSERT_GT(expected, 0u);
        EXPECT_NE(text.find("Statistics overflowed: " + std::to_string(expected) + " tensor(s) hold finite values"),
                  std::string::npos)
            << text;
        EXPECT_NE(
            text.find(
                "first __mul__ Tensor.__mul__.0.forward output.0 (float16, Mean and L2 norm inf, largest |x| 14592)"),
            std::string::npos)
            << text;
        const DumpIndex fix = indexOf(d / "fp32_fix");
        EXPECT_EQ(toText(fix, analyze(fix)).find("Statistics overflowed"), std::string::npos);
    }
}

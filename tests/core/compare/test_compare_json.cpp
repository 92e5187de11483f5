// The streamed compare JSON: rows parse back with escapes, nulls and values.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/compare/compare_json.h"
#include "core/compare/run_comparison.h"
#include "tests/core/analysis_test_builder.h"

using namespace dl;
using dltest::IndexBuilder;

TEST(CompareJson, StreamedRowsParseWithEscapesNullsAndValues) {
    IndexBuilder a, b;
    const std::string odd = "Mul\"q\\x\n\tend";
    a.op(0, 0, "Mul", odd, {dltest::in(0, dltest::csvStats(-1, 3)), dltest::out(0, dltest::dataStats(2.0, 1))});
    b.op(0, 0, "Mul", odd, {dltest::in(0, dltest::csvStats(-1, 3.5)), dltest::out(0, dltest::dataStats(2.0))});
    const RunComparison c = compareRuns(a.idx, b.idx, {});
    const auto j = nlohmann::json::parse(compareJson(c, a.idx, b.idx));
    ASSERT_EQ(j["rows"].size(), 2u);
    const auto& r0 = j["rows"][0];
    EXPECT_EQ(r0["op_name_a"], odd);
    EXPECT_EQ(r0["tensor"], "input.0");
    EXPECT_EQ(r0["stats_a"]["max"], 3.0);
    EXPECT_EQ(r0["stats_b"]["max"], 3.5);
    EXPECT_TRUE(r0["stats_a"]["mean"].is_null());
    EXPECT_TRUE(r0["metrics"]["cosine"].is_null());
    EXPECT_DOUBLE_EQ(r0["metrics"]["max_rel_diff"].get<double>(), 0.5 / 3.5);
    EXPECT_TRUE(r0["md5_a"].is_null());
    EXPECT_EQ(r0["class"], verdictName(c.rows[0].verdict));
    EXPECT_EQ(r0["reason"], c.rows[0].reason);
    const auto& r1 = j["rows"][1];
    EXPECT_EQ(r1["class"], "nonfinite");
    EXPECT_EQ(r1["diverged"], true);
    EXPECT_EQ(r1["stats_a"]["inf"], 1);
    EXPECT_EQ(r1["metrics"]["nan_inf_mismatch"], true);
    EXPECT_EQ(j["first_divergence"]["op_name"], odd);
}

// Issue 26 point 11: a tensor whose Max is +inf (the index keeps the finite extreme beside the
// counts) reads "inf (finite X)" in the first-divergence text, never the finite value alone.
TEST(CompareJson, FirstDivergenceTextShowsInfinities) {
    dltest::IndexBuilder a, b;
    a.op(0, 0, "MatMul", "MatMul-op1", {dltest::out(0, dltest::dataStats(2.0))});
    b.op(0, 0, "MatMul", "MatMul-op1", {dltest::out(0, dltest::dataStats(2.0))});
    a.op(0, 0, "Mul", "Mul-op2", {dltest::out(0, dltest::dataStats(64256.0, 3))});  // 3 +inf beside finite 64256
    b.op(0, 0, "Mul", "Mul-op2", {dltest::out(0, dltest::dataStats(2.0))});
    const dl::RunComparison c = dl::compareRuns(a.idx, b.idx, {});
    ASSERT_GE(c.firstDivergence, 0);
    const std::string text = dl::compareText(c, a.idx, b.idx);
    const auto line = text.find("  A max ");
    ASSERT_NE(line, std::string::npos) << text;
    const std::string row = text.substr(line, text.find('\n', line) - line);
    EXPECT_EQ(row, "  A max inf (finite 64256) min -64256 | B max 2 min -2") << text;
}

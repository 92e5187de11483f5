// Op alignment between two runs: op numbers stripped, renumbered ops, scopes over coincident
// names, mapping-file pins.
#include <gtest/gtest.h>

#include "core/compare/run_aligner.h"
#include "tests/core/analysis_test_builder.h"

using namespace dl;
using dltest::IndexBuilder;

namespace {

std::string typeOf(const DumpIndex& idx, std::uint32_t op) { return idx.strings.str(idx.ops[op].type); }
std::string nameOf(const DumpIndex& idx, std::uint32_t op) { return idx.strings.str(idx.ops[op].name); }

}  // namespace

TEST(RunAligner, StripOpNumbers) {
    EXPECT_EQ(stripOpNumbers("Gradients/Default/gradSqrt/SqrtGrad-op154"), "Gradients/Default/gradSqrt/SqrtGrad");
    EXPECT_EQ(stripOpNumbers("Default_net-Net_Add-op12_x"), "Default_net-Net_Add_x");
    EXPECT_EQ(stripOpNumbers("a-opx-op"), "a-opx-op");
}

TEST(RunAligner, RenumberedOpsStillAlign) {
    // A Cast around SqrtGrad in run B shifts every later -opN (no scopes: names only).
    IndexBuilder a, b;
    auto t = [] {
        return std::vector<dltest::T>{dltest::in(0, dltest::dataStats(1)), dltest::out(0, dltest::dataStats(1))};
    };
    for (const char* n : {"MatMul-op1", "Add-op2", "SqrtGrad-op3", "Mul-op4", "Mul-op5"})
        a.op(0, 0, std::string(n).substr(0, std::string(n).find('-')), n, t());
    for (const char* n : {"MatMul-op1", "Add-op2", "Cast-op3", "SqrtGrad-op4", "Cast-op5", "Mul-op6", "Mul-op7"})
        b.op(0, 0, std::string(n).substr(0, std::string(n).find('-')), n, t());
    const RunAlignment al = alignRuns(a.idx, b.idx);
    ASSERT_EQ(al.ops.size(), 5u);
    EXPECT_EQ(al.exactOps, 2u);
    EXPECT_EQ(al.tolerantOps, 3u);
    EXPECT_EQ(nameOf(b.idx, al.ops[2].b), "SqrtGrad-op4");
    EXPECT_EQ(nameOf(b.idx, al.ops[3].b), "Mul-op6");
    EXPECT_EQ(nameOf(b.idx, al.ops[4].b), "Mul-op7");
    EXPECT_TRUE(al.onlyOpsA.empty());
    ASSERT_EQ(al.onlyOpsB.size(), 2u);
    for (std::uint32_t op : al.onlyOpsB) EXPECT_EQ(typeOf(b.idx, op), "Cast");
    EXPECT_EQ(al.tensors.size(), 10u);
    EXPECT_EQ(al.onlyTensorsB, 4u);
}

TEST(RunAligner, ScopesBeatCoincidentNames) {
    // Same name, different scope: MatMul-op9 is w2 in A but w1 in B; the scopes decide.
    IndexBuilder a, b;
    auto t = [] { return std::vector<dltest::T>{dltest::out(0, dltest::dataStats(1))}; };
    a.op(0, 0, "MatMul", "MatMul-op9", t(), 0, "net/w2/MatMul-op9");
    a.op(0, 0, "MatMul", "MatMul-op10", t(), 0, "net/w1/MatMul-op10");
    b.op(0, 0, "Cast", "Cast-op8", t(), 0, "net/w2/Cast-op8");
    b.op(0, 0, "MatMul", "MatMul-op11", t(), 0, "net/w2/MatMul-op11");
    b.op(0, 0, "MatMul", "MatMul-op9", t(), 0, "net/w1/MatMul-op9");
    const RunAlignment al = alignRuns(a.idx, b.idx);
    ASSERT_EQ(al.ops.size(), 2u);
    EXPECT_EQ(nameOf(b.idx, al.ops[0].b), "MatMul-op11");
    EXPECT_EQ(nameOf(b.idx, al.ops[1].b), "MatMul-op9");
    EXPECT_EQ(al.ops[1].kind, MatchKind::Tolerant);
}

TEST(RunAligner, MappingPins) {
    IndexBuilder a, b;
    auto t = [] { return std::vector<dltest::T>{dltest::out(0, dltest::dataStats(1))}; };
    a.op(0, 0, "FusedNorm", "FusedNorm-op1", t());
    a.op(0, 0, "Add", "Add-op2", t());
    b.op(0, 0, "RmsNorm", "RmsNorm-op1", t());
    b.op(0, 0, "Add", "Add-op2", t());
    RunAlignment plain = alignRuns(a.idx, b.idx);
    EXPECT_EQ(plain.ops.size(), 1u);
    EXPECT_EQ(plain.onlyOpsA.size(), 1u);

    std::vector<OpNamePin> pins;
    std::string error;
    ASSERT_TRUE(
        parseMappingText("name_a,name_b\n# comment\nFusedNorm-op1, RmsNorm-op1\nNope-op7,Add-op2\n", pins, error))
        << error;
    ASSERT_EQ(pins.size(), 2u);
    const RunAlignment al = alignRuns(a.idx, b.idx, pins);
    ASSERT_EQ(al.ops.size(), 2u);
    EXPECT_EQ(al.pinnedOps, 1u);
    EXPECT_EQ(al.ops[0].kind, MatchKind::Pinned);
    EXPECT_EQ(nameOf(b.idx, al.ops[0].b), "RmsNorm-op1");
    EXPECT_TRUE(al.onlyOpsA.empty());
    ASSERT_EQ(al.warnings.size(), 1u);  // "Nope-op7" is not in run A
    EXPECT_NE(al.warnings[0].find("Nope-op7"), std::string::npos);

    std::vector<OpNamePin> bad;
    EXPECT_FALSE(parseMappingText("a,b\nno comma here\n", bad, error));
    EXPECT_NE(error.find("line 2"), std::string::npos);
    EXPECT_FALSE(readMappingFile("/nonexistent/mapping.csv", bad, error));
}

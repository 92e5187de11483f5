// The compare table's rows: filtered by state and rank, sorted by a metric.
#include <gtest/gtest.h>

#include "core/compare/compare_rows.h"
#include "core/compare/run_comparison.h"
#include "tests/core/analysis_test_builder.h"
#include "tests/core/three_op_runs.h"

using namespace dl;
using dltest::IndexBuilder;
using dltest::threeOpRuns;

TEST(CompareRows, FilterAndSort) {
    IndexBuilder a, b;
    threeOpRuns(a, b, 1);
    const RunComparison c = compareRuns(a.idx, b.idx, {});
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, {}, CompareSortKey::Order, false),
              (std::vector<std::uint32_t>{0, 1, 2}));
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, {}, CompareSortKey::Order, true),
              (std::vector<std::uint32_t>{2, 1, 0}));
    CompareRowFilter f;
    f.divergedOnly = true;
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, f, CompareSortKey::Order, false), (std::vector<std::uint32_t>{1, 2}));
    f.text = "mul-OP";
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, f, CompareSortKey::Order, false), (std::vector<std::uint32_t>{2}));
    f = {};
    f.rank = 1;
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, f, CompareSortKey::Order, false), (std::vector<std::uint32_t>{2}));
    // Mul differs most (9 vs 2), MatMul not at all.
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, {}, CompareSortKey::StatsRelDiff, true),
              (std::vector<std::uint32_t>{2, 1, 0}));
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, {}, CompareSortKey::StatsRelDiff, false),
              (std::vector<std::uint32_t>{0, 1, 2}));
    // Statistics-only rows have no cosine: N/A sorts last and keeps execution order.
    EXPECT_EQ(selectCompareRows(c, a.idx, b.idx, {}, CompareSortKey::Cosine, false),
              (std::vector<std::uint32_t>{0, 1, 2}));
}

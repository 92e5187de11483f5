// Comparing two runs on hand-built indexes: the earliest divergence by execution order from
// statistics alone, and re-judging with new thresholds without recomputing the metrics.
#include <gtest/gtest.h>

#include "core/compare/run_comparison.h"
#include "tests/core/analysis_test_builder.h"
#include "tests/core/three_op_runs.h"

using namespace dl;
using dltest::IndexBuilder;
using dltest::threeOpRuns;

TEST(RunComparison, StatisticsOnlyFindsEarliestByExecutionOrder) {
    IndexBuilder a, b;
    threeOpRuns(a, b);
    const RunComparison c = compareRuns(a.idx, b.idx, {});
    EXPECT_EQ(c.fromStats, 3u);
    EXPECT_EQ(c.diverged, 2u);
    ASSERT_EQ(c.firstDivergence, 1);
    EXPECT_FALSE(c.rows[0].diverged);
    CompareOptions loose;
    std::string error;
    ASSERT_TRUE(parseThresholds("rules=msprobe,stats_rel=0.5", loose.thresholds, error));
    const RunComparison l = compareRuns(a.idx, b.idx, loose);
    EXPECT_EQ(l.firstDivergence, 2);  // 2.5 vs 2 is within 50 %
}

TEST(RunComparison, ApplyThresholdsRejudgesWithoutRecomputing) {
    IndexBuilder a, b;
    threeOpRuns(a, b);
    RunComparison c = compareRuns(a.idx, b.idx, {});
    ASSERT_EQ(c.firstDivergence, 1);
    CompareThresholds loose;
    std::string error;
    ASSERT_TRUE(parseThresholds("rules=msprobe,stats_rel=0.5", loose, error));
    applyThresholds(a.idx, b.idx, loose, c);
    EXPECT_EQ(c.firstDivergence, 2);
    EXPECT_EQ(c.diverged, 1u);
    EXPECT_EQ(c.rows[1].verdict, Verdict::Agree);
    EXPECT_EQ(c.rows[2].verdict, Verdict::Diverged);
    EXPECT_NE(c.rows[2].reason.find("relative difference"), std::string::npos);
    ASSERT_TRUE(parseThresholds("rules=msprobe,stats_rel=100", loose, error));
    applyThresholds(a.idx, b.idx, loose, c);
    EXPECT_EQ(c.firstDivergence, -1);
    EXPECT_EQ(c.diverged, 0u);
    EXPECT_EQ(describeThresholds(c.thresholds), describeThresholds(loose));
}

// Both runs are one iteration (0) and differ at its second op: no agreeing iteration came before,
// so the story must not say "identical until iteration 0" (a mock of MindSpore's CPU writer showed it).
TEST(RunComparison, StoryOfADivergenceInTheFirstIterationClaimsNoEarlierAgreement) {
    IndexBuilder a, b;
    threeOpRuns(a, b);
    const RunComparison c = compareRuns(a.idx, b.idx, {});
    ASSERT_EQ(c.firstDivergence, 1);
    EXPECT_EQ(c.story.find("until iteration 0"), std::string::npos) << c.story;
    EXPECT_EQ(c.story.find("Runs diverge in iteration 0, the first compared; "), 0u) << c.story;
}

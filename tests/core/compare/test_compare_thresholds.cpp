// Compare thresholds: parsing and describing a spec, msprobe's check_accuracy rules, and specs
// that round-trip through thresholdSpec.
#include <gtest/gtest.h>

#include <cmath>

#include "core/compare/run_comparison.h"

using namespace dl;

TEST(CompareThresholds, ParseAndDescribe) {
    CompareThresholds t;
    std::string error;
    ASSERT_TRUE(parseThresholds("cosine=0.95,max_abs=off,max_rel=0.01,nan_inf=off", t, error)) << error;
    EXPECT_DOUBLE_EQ(t.minCosine, 0.95);
    EXPECT_TRUE(std::isinf(t.maxAbsErr));
    EXPECT_DOUBLE_EQ(t.maxRelErr, 0.01);
    EXPECT_FALSE(t.nanInf);
    EXPECT_NE(describeThresholds(t).find("cosine < 0.95"), std::string::npos);
    EXPECT_EQ(describeThresholds(t).find(", max_abs >"), std::string::npos);
    EXPECT_FALSE(parseThresholds("bogus=1", t, error));
    EXPECT_NE(error.find("bogus"), std::string::npos);
    EXPECT_FALSE(parseThresholds("cosine=abc", t, error));
    EXPECT_FALSE(parseThresholds("cosine", t, error));
}

// msprobe's check_accuracy: "No" when cosine < 0.99 with max abs err > 0.001, when cosine < 0.9
// whatever the error, or when max abs err > 1.
TEST(CompareThresholds, MsprobeRulesAreCheckAccuracys) {
    const CompareThresholds ms = CompareThresholds::defaults(CompareRules::Msprobe);
    const TensorStats none;
    auto fails = [&](double cos, double maxAbs) {
        TensorMetrics m;
        m.fromData = true;
        m.cosine = cos, m.maxAbsErr = maxAbs, m.maxRelErr = 0, m.oneThousandthRatio = m.fiveThousandthRatio = 1;
        std::string reason;
        return crossesThreshold(m, none, none, ms, reason);
    };
    for (double cos : {0.5, 0.85, 0.95, 0.989, 0.995, 1.0})
        for (double maxAbs : {0.0, 0.0005, 0.01, 0.5, 2.0}) {
            const bool no = (cos < 0.99 && maxAbs > 0.001) || cos < 0.9 || maxAbs > 1;
            EXPECT_EQ(fails(cos, maxAbs), no) << cos << " " << maxAbs;
        }
}

TEST(CompareThresholds, SpecRoundTrips) {
    for (const char* spec : {"", "cosine=0.95,max_abs=off,max_rel=0.01,nan_inf=off", "one_thousandth=0.9,stats_rel=off",
                             "rules=msprobe", "ulps=8,precision=bfloat16", "precision=fp16,rules=precision"}) {
        CompareThresholds t, back;
        std::string error;
        ASSERT_TRUE(parseThresholds(spec, t, error)) << error;
        ASSERT_TRUE(parseThresholds(thresholdSpec(t), back, error)) << thresholdSpec(t) << ": " << error;
        EXPECT_EQ(thresholdSpec(back), thresholdSpec(t));
        EXPECT_EQ(describeThresholds(back), describeThresholds(t));
    }
    EXPECT_EQ(
        thresholdSpec({}),
        "rules=precision,ulps=2,precision=auto,precision_cosine=0.0001,cosine=off,cosine_alone=off,abs_floor=0.001,"
        "max_abs=off,max_rel=off,one_thousandth=off,five_thousandth=off,stats_rel=off,nan_inf=on");
    // msprobe's rules keep its absolute tests (and the old spelling of them).
    EXPECT_EQ(thresholdSpec(CompareThresholds::defaults(CompareRules::Msprobe)),
              "rules=msprobe,ulps=off,precision=auto,precision_cosine=0.0001,cosine=0.99,cosine_alone=0.9,abs_floor=0."
              "001,max_abs=1,"
              "max_rel=off,one_thousandth=off,five_thousandth=off,stats_rel=0.001,nan_inf=on");
    // rules= resets the other keys wherever it stands; the keys around it still apply.
    CompareThresholds t;
    std::string error;
    ASSERT_TRUE(parseThresholds("max_abs=5,rules=msprobe", t, error)) << error;
    EXPECT_EQ(t.rules, CompareRules::Msprobe);
    EXPECT_DOUBLE_EQ(t.maxAbsErr, 5);
    EXPECT_DOUBLE_EQ(t.minCosine, 0.99);
    EXPECT_TRUE(std::isinf(t.ulps));
    EXPECT_FALSE(parseThresholds("rules=strict", t, error));
    EXPECT_FALSE(parseThresholds("precision=int8", t, error));
}

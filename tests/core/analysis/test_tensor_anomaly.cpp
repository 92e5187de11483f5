#include <gtest/gtest.h>

#include <cmath>

#include "core/analysis/tensor_anomaly.h"
#include "tests/core/analysis_test_builder.h"

using namespace dl;
using namespace dltest;

namespace {

TensorAnomaly classify(T t) {
    IndexBuilder b;
    b.op(0, 0, "Mul", "Mul-op1", {t});
    return classifyTensor(b.idx, b.idx.tensors[0]);
}

}  // namespace

TEST(TensorAnomaly, InfAndNanModeCounts) {
    TensorAnomaly a = classify(out(0, dataStats(3.0, 4, 0)));
    EXPECT_EQ(a.kind, AnomalyKind::Inf);
    EXPECT_EQ(a.count, 4u);
    a = classify(out(0, dataStats(3.0, 0, 7)));
    EXPECT_EQ(a.kind, AnomalyKind::Nan);
    EXPECT_EQ(a.count, 7u);
    a = classify(out(0, dataStats(3.0, 2, 7)));
    EXPECT_EQ(a.kind, AnomalyKind::Inf) << "Inf outranks NaN: inf - inf is how the NaN appeared";
}

TEST(TensorAnomaly, SaturationPileUpWithData) {
    TensorAnomaly a = classify(out(0, dataStats(65504.0, 0, 0, 37)));
    EXPECT_EQ(a.kind, AnomalyKind::Saturated);
    EXPECT_EQ(a.count, 37u);
    EXPECT_FALSE(a.weak);
    EXPECT_DOUBLE_EQ(a.fp16MaxShare, 1.0);
}

TEST(TensorAnomaly, LegitimateLargeValueIsNotSaturation) {
    TensorAnomaly a = classify(out(0, dataStats(47580.0)));
    EXPECT_EQ(a.kind, AnomalyKind::None);
    EXPECT_NEAR(a.fp16MaxShare, 47580.0 / 65504.0, 1e-12);
    a = classify(out(0, csvStats(-60000, 60000)));
    EXPECT_EQ(a.kind, AnomalyKind::None);
}

TEST(TensorAnomaly, SingleValueAtLimitIsWeakSaturation) {
    TensorAnomaly a = classify(out(0, dataStats(65504.0, 0, 0, 1)));
    EXPECT_EQ(a.kind, AnomalyKind::Saturated);
    EXPECT_TRUE(a.weak);
}

TEST(TensorAnomaly, StatisticCsvOnlyMaxAtLimitIsStrongEvidence) {
    TensorAnomaly a = classify(out(0, csvStats(-3.0, 65504.0)));
    EXPECT_EQ(a.kind, AnomalyKind::Saturated);
    a = classify(out(0, csvStats(-65504.0, 2.0)));
    EXPECT_EQ(a.kind, AnomalyKind::Saturated);
}

TEST(TensorAnomaly, Fp32AboveFp16RangeIsHeadroomNotAnomaly) {
    // An fp32 tensor reaching 70000 is fine in fp32: only a headroom figure (>1), no anomaly.
    TensorAnomaly a = classify(out(0, dataStats(70000.0, 0, 0, 5), DType::Float32));
    EXPECT_EQ(a.kind, AnomalyKind::None);
    EXPECT_GT(a.fp16MaxShare, 1.0);
}

TEST(TensorAnomaly, NonFiniteCsvMaxWithoutCounts) {
    EXPECT_EQ(classify(out(0, csvStats(-1.0, INFINITY))).kind, AnomalyKind::Inf);
    EXPECT_EQ(classify(out(0, csvStats(NAN, NAN))).kind, AnomalyKind::Nan);
}

TEST(TensorAnomaly, HistogramSpecialBins) {
    IndexBuilder b;
    b.op(0, 0, "Mul", "Mul-op1", {out(0, csvStats(-1.0, 2.0))});
    Log2Histogram h;
    h.posInf = 3;
    h.exp[Log2Histogram::binOf(0)] = 10;
    h.encode(b.idx.histBytes);
    b.idx.tensors[0].flags |= HasHistogram;
    const TensorAnomaly a = classifyTensor(b.idx, b.idx.tensors[0]);
    EXPECT_EQ(a.kind, AnomalyKind::Inf);
    EXPECT_EQ(a.count, 3u);
}

TEST(TensorAnomaly, HistogramCountsValuesAtLimit) {
    IndexBuilder b;
    b.op(0, 0, "Mul", "Mul-op1", {out(0, csvStats(-65504.0, 65504.0))});
    Log2Histogram h;
    h.exp[Log2Histogram::binOf(15)] = 12;
    h.encode(b.idx.histBytes);
    b.idx.tensors[0].flags |= HasHistogram;
    const TensorAnomaly a = classifyTensor(b.idx, b.idx.tensors[0]);
    EXPECT_EQ(a.kind, AnomalyKind::Saturated);
    EXPECT_EQ(a.count, 12u);
}

TEST(TensorAnomaly, BoolAndUnknownStatsAreClean) {
    EXPECT_EQ(classify(out(0, dataStats(1.0, 0, 0), DType::Bool)).kind, AnomalyKind::None);
    TensorStats none;
    const TensorAnomaly a = classify(out(0, none));
    EXPECT_EQ(a.kind, AnomalyKind::None);
    EXPECT_EQ(a.fp16MaxShare, -1);
}

TEST(TensorAnomaly, OpdebugStatusDecoding) {
    OverflowRecord r;
    EXPECT_FALSE(opdebugReportsOverflow(r));
    EXPECT_EQ(describeOpdebug(r), "");
    r.aicoreStatus = 0x20;
    EXPECT_TRUE(opdebugReportsOverflow(r));
    EXPECT_EQ(describeOpdebug(r), "floating-point overflow");
    r.aicoreStatus = 0x100 | 0x10;
    EXPECT_NE(describeOpdebug(r).find("fp32->fp16"), std::string::npos);
    EXPECT_NE(describeOpdebug(r).find("integer add/sub/mul/mac overflow"), std::string::npos);
    r.aicoreStatus = 0x2;
    EXPECT_NE(describeOpdebug(r).find("0x2"), std::string::npos);
    r = OverflowRecord{};
    r.dhaAtomicStatus = 1;
    EXPECT_EQ(describeOpdebug(r), "atomic add overflow (DHA)");
}

TEST(TensorAnomaly, Labels) {
    IndexBuilder b;
    b.op(0, 0, "Mul", "Mul-op1", {in(1, dataStats(1.0)), out(2, dataStats(1.0))});
    EXPECT_EQ(tensorLabel(b.idx.tensors[0]), "input.1");
    EXPECT_EQ(tensorLabel(b.idx.tensors[1]), "output.2");
}

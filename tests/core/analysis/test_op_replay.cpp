#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/analysis/op_replay.h"
#include "core/analysis/tensor_anomaly.h"
#include "tests/core/analysis_test_builder.h"

using namespace dl;
using namespace dltest;

namespace {

ReplayTensor t(std::vector<std::int64_t> shape, std::vector<float> data) {
    return {std::move(shape), std::move(data), false};
}

std::vector<float> run(const std::string& type, const std::vector<ReplayTensor>& in,
                       const std::vector<std::vector<std::int64_t>>& outShapes = {}, std::size_t slot = 0,
                       std::vector<std::int64_t>* shapeOut = nullptr) {
    KernelRun r;
    std::string error;
    EXPECT_TRUE(runKernel(type, in, outShapes, KernelHints{}, r, error)) << type << ": " << error;
    if (r.outputs.size() <= slot) return {};
    if (shapeOut) *shapeOut = r.outputs[slot].shape;
    return r.outputs[slot].data;
}

void expectNear(const std::vector<float>& got, const std::vector<float>& want, double tol = 1e-5) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(double(want[i])))) << i;
}

// Central differences of sum(dy * f(x)) with respect to input `which`.
std::vector<float> numericGrad(const std::string& fwd, std::vector<ReplayTensor> in, std::size_t which,
                               const std::vector<float>& dy) {
    std::vector<float> g(in[which].data.size());
    for (std::size_t i = 0; i < g.size(); ++i) {
        const float h = 1e-2f, x0 = in[which].data[i];
        in[which].data[i] = x0 + h;
        const auto up = run(fwd, in);
        in[which].data[i] = x0 - h;
        const auto dn = run(fwd, in);
        in[which].data[i] = x0;
        double s = 0;
        for (std::size_t k = 0; k < dy.size(); ++k) s += double(dy[k]) * (double(up[k]) - dn[k]) / (2 * h);
        g[i] = float(s);
    }
    return g;
}

}  // namespace

// An fp16 result that overflowed to Inf where fp32 is finite has an infinite error against fp32;
// the finite elements alone (here exact) used to make its row read 0, next to "overflow YES".
TEST(OpReplay, InfOverflowHasInfiniteErrorAgainstFp32) {
    const ReplayTensor a = t({3}, {60000.f, 1.f, 2.f}), b = t({3}, {60000.f, 1.f, 2.f});
    ReplayResult r = replayOp("Add", {a, b}, {{3}}, 0, nullptr, DType::Float16, ReplayOptions{});
    ASSERT_TRUE(r.available) << r.unavailableReason;
    ASSERT_EQ(r.results.size(), 3u);
    ASSERT_TRUE(r.results[0].overflow);
    EXPECT_EQ(r.results[0].infCount, 1u);  // 120000 > 65504
    EXPECT_TRUE(std::isinf(r.results[0].relErrVsFp32)) << r.results[0].relErrVsFp32;
    EXPECT_FALSE(r.results[1].overflow);
    // bf16 keeps 120000 as 119808 (8 bits of mantissa); 2 and 4 are exact.
    const double want = std::sqrt((120000.0 - 119808.0) * (120000.0 - 119808.0) / (120000.0 * 120000.0 + 4 + 16));
    EXPECT_NEAR(r.results[1].relErrVsFp32, want, 1e-9);
    EXPECT_EQ(r.results[2].relErrVsFp32, 0.0);
}

TEST(OpReplay, SqrtGradMotivatingCaseOverflowsOnlyInFp16) {
    // NormHead backward: y = sqrt(sum W^2) small, dy reached 47580: dx = dy * 0.5 / y = 95160 > 65504.
    const ReplayTensor y = t({4}, {0.25f, 0.25f, 1.0f, 2.0f}), dy = t({4}, {47580.f, 1.f, 47580.f, 2.f});
    ReplayResult r = replayOp("SqrtGrad", {y, dy}, {{4}}, 0, nullptr, DType::Float16, ReplayOptions{});
    ASSERT_TRUE(r.available) << r.unavailableReason;
    ASSERT_EQ(r.results.size(), 3u);
    EXPECT_EQ(r.results[0].dtype, DType::Float16);
    EXPECT_TRUE(r.results[0].overflow);
    EXPECT_EQ(r.results[0].infCount, 1u);
    EXPECT_TRUE(std::isnan(r.results[0].maxAbs)) << "an inf result has no finite max";
    EXPECT_NEAR(r.results[0].maxAbsUnrounded, 95168.0, 1e-3);  // 47580 is stored as 47584 in fp16
    EXPECT_FALSE(r.results[1].overflow);
    EXPECT_NEAR(r.results[1].maxAbs, 95232.0, 1e-3);  // 95160 rounded to bf16
    EXPECT_LT(r.results[1].relErrVsFp32, 1e-2);
    EXPECT_FALSE(r.results[2].overflow);
    EXPECT_NEAR(r.results[2].maxAbs, 95160.0, 1e-3);
    EXPECT_TRUE(r.reproducesOverflow);
    EXPECT_TRUE(r.recommendationFromReplay);
    EXPECT_NE(r.recommendation.find("bfloat16"), std::string::npos) << r.recommendation;
}

TEST(OpReplay, SaturationModeClampsFp16) {
    ReplayOptions o;
    o.saturatingFp16 = true;
    ReplayResult r = replayOp("SqrtGrad", {t({1}, {0.25f}), t({1}, {47580.f})}, {{1}}, 0, nullptr, DType::Float16, o);
    ASSERT_TRUE(r.available);
    EXPECT_TRUE(r.results[0].overflow);
    EXPECT_EQ(r.results[0].saturatedCount, 1u);
    EXPECT_EQ(r.results[0].infCount, 0u);
    EXPECT_DOUBLE_EQ(r.results[0].maxAbs, 65504.0);
}

TEST(OpReplay, Bf16TooImpreciseRecommendsFp32) {
    // 1 + 2^-9 differences vanish in bf16 (7 mantissa bits): relative error exceeds the tolerance.
    ReplayOptions o;
    o.bf16Tolerance = 1e-4;
    ReplayResult r =
        replayOp("Mul", {t({2}, {300.f, 301.f}), t({2}, {300.f, 301.f})}, {{2}}, 0, nullptr, DType::Float16, o);
    ASSERT_TRUE(r.available);
    EXPECT_TRUE(r.results[0].overflow);  // 90000 > 65504
    EXPECT_FALSE(r.results[1].overflow);
    EXPECT_GT(r.results[1].relErrVsFp32, 1e-4);
    EXPECT_NE(r.recommendation.find("float32"), std::string::npos) << r.recommendation;
}

TEST(OpReplay, NoFp16OverflowIsNotPresentedAsProof) {
    ReplayResult r =
        replayOp("Add", {t({1}, {1.f}), t({1}, {2.f})}, {{1}}, 0, nullptr, DType::Float16, ReplayOptions{});
    ASSERT_TRUE(r.available);
    EXPECT_FALSE(r.reproducesOverflow);
    EXPECT_FALSE(r.recommendationFromReplay);
}

TEST(OpReplay, UnknownOpIsUnavailable) {
    ReplayResult r =
        replayOp("FlashAttentionScore", {t({1}, {1.f})}, {{1}}, 0, nullptr, DType::Float16, ReplayOptions{});
    EXPECT_FALSE(r.available);
    EXPECT_TRUE(r.results.empty());
    EXPECT_NE(r.unavailableReason.find("FlashAttentionScore"), std::string::npos);
}

TEST(OpReplay, ElementwiseKernels) {
    expectNear(run("RsqrtGrad", {t({1}, {2.f}), t({1}, {1.f})}), {-4.f});  // dy * -0.5 * y^3
    expectNear(run("Sqrt", {t({2}, {4.f, 9.f})}), {2.f, 3.f});
    expectNear(run("Rsqrt", {t({1}, {4.f})}), {0.5f});
    expectNear(run("RealDiv", {t({2}, {1.f, 3.f}), t({1}, {4.f})}), {0.25f, 0.75f});
    expectNear(run("Div", {t({1}, {1.f}), t({1}, {8.f})}), {0.125f});
    expectNear(run("Mul", {t({2}, {3.f, -2.f}), t({2}, {5.f, 4.f})}), {15.f, -8.f});
    std::vector<std::int64_t> shape;
    expectNear(run("Add", {t({2, 3}, {1, 2, 3, 4, 5, 6}), t({3}, {10, 20, 30})}, {}, 0, &shape),
               {11, 22, 33, 14, 25, 36});
    EXPECT_EQ(shape, (std::vector<std::int64_t>{2, 3}));
    expectNear(run("Sub", {t({2, 1}, {10, 20}), t({1, 2}, {1, 2})}), {9, 8, 19, 18});
    expectNear(run("Square", {t({2}, {-3.f, 0.5f})}), {9.f, 0.25f});
    expectNear(run("Exp", {t({2}, {0.f, 1.f})}), {1.f, float(M_E)});
    expectNear(run("Log", {t({2}, {1.f, float(M_E)})}), {0.f, 1.f});
    expectNear(run("Pow", {t({2}, {2.f, 3.f}), t({1}, {10.f})}), {1024.f, 59049.f});
    expectNear(run("Cast", {t({1}, {70000.f})}), {70000.f});
    KernelRun r;
    std::string error;
    EXPECT_FALSE(runKernel("Add", {t({2}, {1, 2}), t({3}, {1, 2, 3})}, {}, {}, r, error));
    EXPECT_FALSE(runKernel("Mul", {t({2}, {1, 2})}, {}, {}, r, error)) << "missing input";
}

TEST(OpReplay, CastToFp16OverflowsBf16DoesNot) {
    ReplayResult r = replayOp("Cast", {t({2}, {70000.f, 1.f})}, {{2}}, 0, nullptr, DType::Float16, ReplayOptions{});
    ASSERT_TRUE(r.available);
    EXPECT_TRUE(r.results[0].overflow);
    EXPECT_FALSE(r.results[1].overflow);
    EXPECT_FALSE(r.results[2].overflow);
}

TEST(OpReplay, Reductions) {
    const ReplayTensor x = t({2, 3}, {1, 2, 3, 4, 5, 6});
    std::vector<std::int64_t> shape;
    expectNear(run("ReduceSum", {x}, {{2}}, 0, &shape), {6, 15});
    EXPECT_EQ(shape, (std::vector<std::int64_t>{2}));
    expectNear(run("ReduceSum", {x}, {{3}}), {5, 7, 9});
    expectNear(run("ReduceMean", {x}, {{2, 1}}, 0, &shape), {2, 5});
    EXPECT_EQ(shape, (std::vector<std::int64_t>{2, 1}));
    expectNear(run("ReduceMean", {x}, {{}}), {3.5f});
    ReplayTensor axis = t({1}, {0.f});
    axis.integer = true;
    expectNear(run("ReduceSum", {x, axis}, {{3}}), {5, 7, 9});
    std::vector<int> axes;
    bool ambiguous = false;
    ASSERT_TRUE(inferReduceAxes({2, 2}, {2}, axes, ambiguous));
    EXPECT_TRUE(ambiguous);
    ASSERT_TRUE(inferReduceAxes({4, 2, 3}, {4, 3}, axes, ambiguous));
    EXPECT_FALSE(ambiguous);
    EXPECT_EQ(axes, std::vector<int>{1});
    EXPECT_FALSE(inferReduceAxes({4, 2}, {5}, axes, ambiguous));
}

TEST(OpReplay, SoftmaxAndGrad) {
    expectNear(run("Softmax", {t({1, 2}, {0.f, std::log(3.f)})}), {0.25f, 0.75f});
    expectNear(run("SoftmaxGrad", {t({1, 2}, {0.25f, 0.75f}), t({1, 2}, {1.f, 0.f})}), {0.1875f, -0.1875f});
}

TEST(OpReplay, MatMulTransposeInference) {
    const ReplayTensor a = t({2, 3}, {1, 2, 3, 4, 5, 6}), b = t({3, 2}, {1, 0, 0, 1, 1, 1});
    expectNear(run("MatMul", {a, b}, {{2, 2}}), {4, 5, 10, 11});
    // b given as [2,3] (transpose_b): the only reading that fits the [2,2] output.
    const ReplayTensor bt = t({2, 3}, {1, 0, 1, 0, 1, 1});
    expectNear(run("MatMul", {a, bt}, {{2, 2}}), {4, 5, 10, 11});
    EXPECT_EQ(matmulTransposeCandidates({2, 3}, {2, 3}, {2, 2}).size(), 1u);
    EXPECT_EQ(matmulTransposeCandidates({2, 2}, {2, 2}, {2, 2}).size(), 4u);
    // Square shapes are ambiguous: the dumped output picks the reading.
    const ReplayTensor sa = t({2, 2}, {1, 2, 3, 4}), sb = t({2, 2}, {5, 6, 7, 8});
    const ReplayTensor dumped = t({2, 2}, {17, 23, 39, 53});  // a @ b^T
    ReplayResult r = replayOp("MatMul", {sa, sb}, {{2, 2}}, 0, &dumped, DType::Float32, ReplayOptions{});
    ASSERT_TRUE(r.available);
    EXPECT_NEAR(r.maxDiffVsDump, 0.0, 1e-6);
    EXPECT_FALSE(r.notes.empty());
}

TEST(OpReplay, BatchMatMulBroadcastsBatch) {
    const ReplayTensor a = t({2, 1, 2}, {1, 2, 3, 4}), b = t({2, 1}, {10, 1});
    expectNear(run("BatchMatMul", {a, b}, {{2, 1, 1}}), {12, 34});
}

TEST(OpReplay, LayerNormForwardAndGrad) {
    const ReplayTensor x = t({1, 3}, {1, 2, 3}), g = t({3}, {1, 1, 1}), beta = t({3}, {0, 0, 0});
    const double s = std::sqrt(2.0 / 3.0 + 1e-7);
    expectNear(run("LayerNorm", {x, g, beta}), {float(-1 / s), 0.f, float(1 / s)});
    expectNear(run("LayerNorm", {x, g, beta}, {}, 1), {2.f});
    expectNear(run("LayerNorm", {x, g, beta}, {}, 2), {float(2.0 / 3.0)});
    // Grad against central differences of the forward kernel.
    const ReplayTensor x2 = t({2, 3}, {0.5f, -1.f, 2.f, 3.f, 1.f, -2.f}), g2 = t({3}, {1.5f, -0.5f, 2.f}),
                       b2 = t({3}, {0, 0, 0});
    const std::vector<float> dy = {1.f, 2.f, -1.f, 0.5f, -2.f, 1.f};
    const auto mean = run("LayerNorm", {x2, g2, b2}, {}, 1), var = run("LayerNorm", {x2, g2, b2}, {}, 2);
    const auto dx = run("LayerNormGrad", {x2, t({2, 3}, dy), t({2, 1}, var), t({2, 1}, mean), g2});
    expectNear(dx, numericGrad("LayerNorm", {x2, g2, b2}, 0, dy), 2e-2);
    expectNear(run("LayerNormGrad", {x2, t({2, 3}, dy), t({2, 1}, var), t({2, 1}, mean), g2}, {}, 1),
               numericGrad("LayerNorm", {x2, g2, b2}, 1, dy), 2e-2);
    expectNear(run("LayerNormGrad", {x2, t({2, 3}, dy), t({2, 1}, var), t({2, 1}, mean), g2}, {}, 2), {1.5f, 0.f, 0.f});
}

TEST(OpReplay, RmsNormForwardAndGrad) {
    const double r = 1.0 / std::sqrt(12.5 + 1e-6);
    expectNear(run("RMSNorm", {t({1, 2}, {3, 4}), t({2}, {1, 1})}), {float(3 * r), float(4 * r)});
    expectNear(run("RmsNorm", {t({1, 2}, {3, 4}), t({2}, {1, 1})}, {}, 1), {float(r)});
    const ReplayTensor x = t({2, 3}, {0.5f, -1.f, 2.f, 3.f, 1.f, -2.f}), g = t({3}, {1.5f, -0.5f, 2.f});
    const std::vector<float> dy = {1.f, 2.f, -1.f, 0.5f, -2.f, 1.f};
    const auto rstd = run("RmsNorm", {x, g}, {}, 1);
    const auto dx = run("RmsNormGrad", {t({2, 3}, dy), x, t({2, 1}, rstd), g});
    expectNear(dx, numericGrad("RmsNorm", {x, g}, 0, dy), 2e-2);
    expectNear(run("RmsNormGrad", {t({2, 3}, dy), x, t({2, 1}, rstd), g}, {}, 1), numericGrad("RmsNorm", {x, g}, 1, dy),
               2e-2);
}

TEST(OpReplay, KernelNames) {
    EXPECT_EQ(replayKernelName("RealDiv"), "Div");
    EXPECT_EQ(replayKernelName("LayerNormV3"), "LayerNorm");
    EXPECT_EQ(replayKernelName("RMSNormGrad"), "RmsNormGrad");
    EXPECT_EQ(replayKernelName("SoftmaxV2"), "Softmax");
    EXPECT_EQ(replayKernelName("Conv2D"), "");
    EXPECT_EQ(replayKernelName("__truediv__"), "Div");  // msprobe's Tensor.__truediv__
    EXPECT_EQ(replayKernelName("__rmul__"), "Mul");
    EXPECT_EQ(replayKernelName("__rsub__"), "");  // y - x: not the Sub kernel's order
}

TEST(OpReplay, FromIndexLoadsDumpedInputs) {
    const std::string dir = ::testing::TempDir() + "/dl_replay_" + std::to_string(::getpid());
    std::filesystem::create_directories(dir);
    IndexBuilder b;
    b.idx.root = dir;
    T y = in(0, dataStats(0.25)), dy = in(1, dataStats(47580.0)), dx = out(0, dataStats(3.0, 1));
    y.shape = dy.shape = dx.shape = {2};
    y.file = writeNpy(dir, "y.npy", DType::Float16, {2}, {0.25f, 1.f});
    dy.file = writeNpy(dir, "dy.npy", DType::Float16, {2}, {47580.f, 4.f});
    dx.file = writeNpy(dir, "dx.npy", DType::Float16, {2}, {INFINITY, 2.f});
    const std::uint32_t op = b.op(0, 0, "SqrtGrad", "SqrtGrad-op7", {y, dy, dx});
    ReplayResult r = replayFromIndex(b.idx, op, b.idx.ops[op].firstTensor + 2, ReplayOptions{});
    ASSERT_TRUE(r.available) << r.unavailableReason;
    EXPECT_TRUE(r.reproducesOverflow);
    EXPECT_NEAR(r.maxDiffVsDump, 0.0, 1e-6);
    EXPECT_NE(r.recommendation.find("bfloat16"), std::string::npos);

    // Stats-only inputs: no replay, and the advice says it is a rule of thumb.
    IndexBuilder s;
    const std::uint32_t op2 = s.op(0, 0, "SqrtGrad", "SqrtGrad-op7",
                                   {in(0, dataStats(0.25)), in(1, dataStats(47580.0)), out(0, dataStats(3.0, 1))});
    r = replayFromIndex(s.idx, op2, kNoIndex, ReplayOptions{});
    EXPECT_FALSE(r.available);
    EXPECT_FALSE(r.recommendationFromReplay);
    EXPECT_NE(r.recommendation.find("rule of thumb, not a replay"), std::string::npos);
    EXPECT_NE(r.recommendation.find("47580"), std::string::npos);
    std::filesystem::remove_all(dir);
}

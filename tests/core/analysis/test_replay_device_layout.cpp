// A raw CANN dump whose first overflow is a MatMul with FRACTAL_NZ inputs and output (issue 30
// point 5): analyze's replay reads the inputs in their original shape, without the padding (here
// 1000, which would change every product), and reproduces the dumped Inf elements, counted here
// in double from the logical matrices. Compare of the NZ run against the same values stored ND
// finds identical data.
#include <gtest/gtest.h>

#include <cmath>

#include "core/analysis/overflow_analyzer.h"
#include "core/compare/run_comparison.h"
#include "core/formats/cann/cann_dump_writer.h"
#include "core/index/dump_indexer.h"
#include "core/io/npy_writer.h"
#include "tests/core/index_uncached.h"
#include "tests/core/temp_dir.h"

using namespace dl;

namespace {

constexpr int M = 3, K = 20, N = 5;
constexpr float kPad = 1000.0f;

// (rows x cols) row-major -> FRACTAL_NZ (N1, M1, 16, 16), written from the layout's definition:
// stored[n1][m1][m0][n0] = x[m1*16 + m0][n1*16 + n0], padding elsewhere.
std::vector<float> toNz(const std::vector<float>& x, int rows, int cols, std::vector<std::uint64_t>& shape) {
    const int m1 = (rows + 15) / 16, n1 = (cols + 15) / 16;
    shape = {std::uint64_t(n1), std::uint64_t(m1), 16, 16};
    std::vector<float> s(std::size_t(n1 * m1 * 256), kPad);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            s[std::size_t(((c / 16) * m1 + r / 16) * 256 + (r % 16) * 16 + c % 16)] = x[r * cols + c];
    return s;
}

std::string fp16(const std::vector<float>& v) {
    std::string bytes, error;
    EXPECT_TRUE(encodeFloats(v, DType::Float16, bytes, error)) << error;
    return bytes;
}

struct Matrices {
    std::vector<float> a, b;
    std::vector<double> y;  // exact products (double)
};

// Integers, so fp16 holds the inputs and the finite outputs exactly; row 0 of A is 200s and
// columns 0 and 1 of B sum to 400 and 360, so y[0][0] = 80000 and y[0][1] = 72000 overflow fp16.
Matrices matrices() {
    Matrices m;
    m.a.resize(M * K);
    m.b.resize(K * N);
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k) m.a[i * K + k] = i == 0 ? 200.0f : float((i * 7 + k * 3) % 5 - 2);
    for (int k = 0; k < K; ++k)
        for (int j = 0; j < N; ++j) m.b[k * N + j] = j == 0 ? 20.0f : j == 1 ? 18.0f : float((k + 2 * j) % 7 - 3);
    m.y.assign(M * N, 0.0);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j)
            for (int k = 0; k < K; ++k) m.y[i * N + j] += double(m.a[i * K + k]) * m.b[k * N + j];
    return m;
}

void writeRun(const std::filesystem::path& root, bool nz) {
    const Matrices m = matrices();
    std::vector<float> y(m.y.begin(), m.y.end());
    auto spec = [&](Io io, const std::vector<float>& x, int rows, int cols) {
        CannTensorSpec s;
        s.io = io;
        s.dataType = 2;  // DT_FLOAT16
        s.originalShape = {std::uint64_t(rows), std::uint64_t(cols)};
        if (nz) {
            s.format = 29;
            s.payload = fp16(toNz(x, rows, cols, s.shape));
        } else {
            s.format = 2;
            s.shape = s.originalShape;
            s.payload = fp16(x);
        }
        return s;
    };
    dltest::writeFile(
        root / "rank_0/Net/0/0/MatMul.Default_MatMul-op3.1.1.1700000000000100",
        buildCannDumpFile({spec(Io::Input, m.a, M, K), spec(Io::Input, m.b, K, N), spec(Io::Output, y, M, N)},
                          "Default/MatMul-op3"));
}

DumpIndex indexOf(const std::filesystem::path& root) { return dltest::indexUncached(root.string(), 2); }

}  // namespace

TEST(ReplayDeviceLayout, NzOriginReplaysToTheDumpedOverflow) {
    dltest::TempDir dir;
    writeRun(dir.path, true);
    const DumpIndex idx = indexOf(dir.path);
    ASSERT_EQ(idx.ops.size(), 1u);
    const Matrices m = matrices();
    std::uint64_t overflowing = 0;
    for (double v : m.y) overflowing += std::fabs(v) >= 65520;  // rounds to Inf in fp16
    ASSERT_EQ(overflowing, 2u);

    const AnalysisResult r = analyze(idx);
    ASSERT_TRUE(r.overflow);
    ASSERT_TRUE(r.replay.has_value());
    const ReplayResult& rp = *r.replay;
    ASSERT_TRUE(rp.available) << rp.unavailableReason;
    EXPECT_TRUE(rp.reproducesOverflow) << rp.recommendation;
    ASSERT_EQ(rp.results.size(), 3u);
    EXPECT_EQ(rp.results[0].infCount, overflowing);
    EXPECT_TRUE(std::isnan(rp.results[0].maxAbs));  // NaN: Inf present
    EXPECT_FALSE(rp.results[2].overflow);           // fp32 holds 80000
    EXPECT_EQ(rp.results[2].maxAbsUnrounded, 80000.0);
    EXPECT_EQ(rp.maxDiffVsDump, 0.0);  // every finite element as dumped
    bool noted = false;
    for (const std::string& n : rp.notes)
        noted = noted || n.find("FRACTAL_NZ [1,2,16,16] -> ND [20,5]") != std::string::npos;
    EXPECT_TRUE(noted);
}

TEST(ReplayDeviceLayout, CompareOfNzAgainstNdFindsIdenticalData) {
    dltest::TempDir a, b;
    writeRun(a.path, true);
    writeRun(b.path, false);
    const DumpIndex ia = indexOf(a.path), ib = indexOf(b.path);
    CompareOptions o;
    o.useData = true;
    const RunComparison c = compareRuns(ia, ib, o);
    ASSERT_EQ(c.rows.size(), 3u);
    for (const TensorComparison& row : c.rows) {
        EXPECT_TRUE(row.metrics.fromData) << row.note;
        EXPECT_FALSE(row.metrics.shapeMismatch) << row.note;
        EXPECT_EQ(row.metrics.maxAbsErr, 0.0) << row.note;  // Inf pairs excluded, finite ones equal
        EXPECT_FALSE(row.diverged) << row.reason;
    }
    // The statistics of both runs agree too: the padding never entered them.
    for (std::size_t i = 0; i < ia.tensors.size(); ++i) {
        EXPECT_EQ(ia.stats(ia.tensors[i]).count, ib.stats(ib.tensors[i]).count);
        EXPECT_EQ(ia.stats(ia.tensors[i]).max, ib.stats(ib.tensors[i]).max);
        EXPECT_EQ(ia.stats(ia.tensors[i]).mean, ib.stats(ib.tensors[i]).mean);
    }
}

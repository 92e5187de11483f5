// Run comparison speed: two 100,000-tensor runs from their statistics (alignment + metrics +
// first divergence), the in-memory metrics kernel, and tensor-level metrics from .npy files
// (warm page cache). Files: $DUMPLENS_BENCH_DIR (default /tmp/dumplens_bench)/compare/.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/compare/compare_overlay.h"
#include "core/compare/compare_rows.h"
#include "core/compare/run_comparison.h"
#include "core/compare/time_map.h"
#include "core/io/npy_file.h"
#include "core/io/npy_writer.h"
#include "core/timeline/timeline_data.h"

namespace {

std::string benchDir() {
    const char* env = std::getenv("DUMPLENS_BENCH_DIR");
    return std::string(env && *env ? env : "/tmp/dumplens_bench") + "/compare";
}

dl::TensorStats stats(double scale) {
    dl::TensorStats s;
    s.min = -scale, s.max = scale, s.mean = scale * 0.01, s.l2 = scale * 30, s.maxAbs = scale;
    s.count = 1000;
    s.known = dl::stat::Min | dl::stat::Max | dl::stat::Mean | dl::stat::L2 | dl::stat::MaxAbs | dl::stat::Count |
        dl::stat::NanCount | dl::stat::PosInfCount | dl::stat::NegInfCount;
    return s;
}

// 4 ranks x 10 iterations x 1250 ops x 2 tensors = 100,000 tensors. With `shifted`, a Cast is
// inserted every 100 ops and later -opN numbers shift (the tolerant alignment path).
dl::DumpIndex statsRun(bool shifted, double drift) {
    dl::DumpIndex idx;
    static const char* types[] = {"MatMul", "Add", "RmsNorm", "FastGeLU", "Mul"};
    for (std::uint32_t rank = 0; rank < 4; ++rank) {
        idx.ranks.push_back({rank, "rank_" + std::to_string(rank), dl::DumpFormat::MindSporeNpy, "", ""});
        for (std::uint32_t it = 0; it < 10; ++it) {
            std::uint32_t pos = 0, num = 0;
            for (std::uint32_t k = 0; k < 1250; ++k) {
                auto addOp = [&](const std::string& type, int tensors, double scale) {
                    dl::OpRecord o;
                    o.type = idx.strings.intern(type);
                    o.name = idx.strings.intern(type + "-op" + std::to_string(num++));
                    o.scope = idx.strings.intern("Default/layer" + std::to_string(k / 25) + "/" + type + "-op" +
                                                 std::to_string(num));
                    o.rank = rank, o.iteration = it, o.execPos = pos++;
                    o.firstTensor = std::uint32_t(idx.tensors.size());
                    o.tensorCount = std::uint32_t(tensors);
                    for (int t = 0; t < tensors; ++t) {
                        dl::TensorRecord r;
                        r.op = std::uint32_t(idx.ops.size());
                        r.io = t == 0 ? dl::Io::Input : dl::Io::Output;
                        r.dtype = dl::DType::Float16;
                        r.ndim = 2;
                        r.shapeOffset = std::uint32_t(idx.dims.size());
                        idx.dims.insert(idx.dims.end(), {40, 25});
                        idx.setStats(r, stats(scale));
                        idx.tensors.push_back(r);
                    }
                    idx.ops.push_back(o);
                };
                if (shifted && k % 100 == 50) addOp("Cast", 1, 1.0);
                addOp(types[k % 5], 2, 1.0 + (k % 7) + (it > 5 ? drift : 0));
            }
        }
    }
    return idx;
}

void BM_CompareStats100k(benchmark::State& state) {
    const dl::DumpIndex a = statsRun(false, 0), b = statsRun(state.range(0) != 0, 0.5);
    dl::CompareOptions opt;
    opt.useData = false;
    std::size_t matched = 0;
    for (auto _ : state) {
        const dl::RunComparison c = dl::compareRuns(a, b, opt);
        matched = c.alignment.tensors.size();
        benchmark::DoNotOptimize(c.firstDivergence);
    }
    state.counters["tensors_a"] = double(a.tensors.size());
    state.counters["matched"] = double(matched);
}
BENCHMARK(BM_CompareStats100k)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// What the compare window does on top of compareRuns, for the 100,000-tensor shifted pair:
// 0 the overlay (partners and states), 1 the table's rows (diverged only, sorted by the largest
// statistics difference), 2 re-judging every row against new thresholds, 3 both runs' timelines
// of one iteration plus the time map that locks them.
void BM_CompareViews100k(benchmark::State& state) {
    const dl::DumpIndex a = statsRun(false, 0), b = statsRun(true, 0.5);
    dl::CompareOptions opt;
    opt.useData = false;
    dl::RunComparison c = dl::compareRuns(a, b, opt);
    const dl::CompareOverlay ov = dl::buildCompareOverlay(c, a, b);
    dl::CompareRowFilter diverged;
    diverged.divergedOnly = true;
    dl::CompareThresholds loose;
    loose.statsRel = 0.01;
    dl::TimelineOptions to;
    to.iteration = 7;
    for (auto _ : state) {
        switch (state.range(0)) {
            case 0:
                benchmark::DoNotOptimize(dl::buildCompareOverlay(c, a, b).partnerA.data());
                break;
            case 1:
                benchmark::DoNotOptimize(
                    dl::selectCompareRows(c, a, b, diverged, dl::CompareSortKey::StatsRelDiff, true).data());
                break;
            case 2:
                dl::applyThresholds(a, b, (state.iterations() & 1) ? loose : dl::CompareThresholds{}, c);
                benchmark::DoNotOptimize(c.firstDivergence);
                break;
            default: {
                const dl::TimelineData ta = dl::buildTimeline(a, nullptr, ov.statesA, to);
                const dl::TimelineData tb = dl::buildTimeline(b, nullptr, ov.statesB, to);
                benchmark::DoNotOptimize(dl::timeMapBetween(ta, tb, ov).knots());
            }
        }
    }
    state.counters["rows"] = double(c.rows.size());
}
BENCHMARK(BM_CompareViews100k)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MetricsKernel(benchmark::State& state) {
    const std::size_t n = std::size_t(state.range(0));
    std::vector<float> a(n), b(n);
    std::mt19937 rng(3);
    std::normal_distribution<float> nd(0, 2);
    for (std::size_t i = 0; i < n; ++i) a[i] = nd(rng), b[i] = a[i] * (1 + nd(rng) * 1e-3f);
    for (auto _ : state) {
        dl::TensorMetrics m;
        dl::computeDataMetrics(a.data(), b.data(), n, false, m);
        benchmark::DoNotOptimize(m.cosine);
    }
    state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(n * 8));
}
BENCHMARK(BM_MetricsKernel)->Arg(1 << 16)->Arg(1 << 22)->Arg(1 << 24)->UseRealTime();

// Two runs of `count` fp32 (or fp16) .npy tensors of `elements` values each, indexed by hand.
dl::DumpIndex npyRun(const std::string& dir, dl::DType dtype, int count, std::size_t elements, float noise) {
    std::filesystem::create_directories(dir);
    dl::DumpIndex idx;
    idx.root = dir;
    idx.ranks.push_back({0, "", dl::DumpFormat::PlainNpy, "", ""});
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0, 2);
    for (int k = 0; k < count; ++k) {
        const std::string name = "t" + std::to_string(k) + ".npy";
        const std::string path = dir + "/" + name;
        std::string error;
        if (!std::filesystem::exists(path)) {
            std::vector<float> v(elements);
            std::mt19937 vr{std::uint32_t(k)};
            for (float& x : v) x = nd(vr);
            for (float& x : v) x *= 1 + noise * nd(rng);
            std::string bytes;
            if (!dl::encodeFloats(v, dtype, bytes, error) ||
                !dl::writeNpyFile(path, dtype, {std::int64_t(elements)}, bytes, error))
                throw std::runtime_error(error);
        }
        dl::NpyHeader h;
        std::string error2;
        if (!dl::readNpyHeader(path, h, error2)) throw std::runtime_error(error2);
        dl::OpRecord o;
        o.type = idx.strings.intern("MatMul");
        o.name = idx.strings.intern("MatMul-op" + std::to_string(k));
        o.execPos = std::uint32_t(k);
        o.firstTensor = std::uint32_t(idx.tensors.size());
        o.tensorCount = 1;
        dl::TensorRecord r;
        r.op = std::uint32_t(idx.ops.size());
        r.dtype = dtype;
        r.ndim = 1;
        r.shapeOffset = std::uint32_t(idx.dims.size());
        idx.dims.push_back(std::int64_t(elements));
        idx.editSide(r).file = idx.strings.intern(name);
        r.flags = dl::HasData;
        idx.editSide(r).dataOffset = h.dataOffset;
        idx.editSide(r).dataBytes = h.dataBytes;
        idx.tensors.push_back(r);
        idx.ops.push_back(o);
    }
    return idx;
}

void BM_CompareData(benchmark::State& state) {
    const auto dtype = state.range(0) == 16 ? dl::DType::Float16 : dl::DType::Float32;
    const std::string tag = state.range(0) == 16 ? "f16" : "f32";
    const int count = 64;
    const std::size_t elements = std::size_t(1) << 20;
    const dl::DumpIndex a = npyRun(benchDir() + "/a_" + tag, dtype, count, elements, 0);
    const dl::DumpIndex b = npyRun(benchDir() + "/b_" + tag, dtype, count, elements, 1e-3f);
    std::uint64_t bytes = 0;
    for (auto _ : state) {
        const dl::RunComparison c = dl::compareRuns(a, b, {});
        bytes += c.bytesCompared;
        if (c.fromData != std::size_t(count)) state.SkipWithError("data not compared");
    }
    state.SetBytesProcessed(std::int64_t(bytes));
}
BENCHMARK(BM_CompareData)->Arg(32)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

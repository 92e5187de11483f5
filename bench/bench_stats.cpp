// Statistics throughput against plain read() of the same file (warm page cache).
// Files: $DUMPLENS_BENCH_DIR (default /tmp/dumplens_bench)/{f16,f32}_512M.bin, generated once.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/stats/stats_accumulator.h"
#include "core/stats/stats_kernels.h"
#include "core/util/half.h"

namespace {

constexpr std::uint64_t kFileBytes = 512ull << 20;

std::string benchDir() {
    const char* env = std::getenv("DUMPLENS_BENCH_DIR");
    return env && *env ? env : "/tmp/dumplens_bench";
}

// Activation-like data: mostly normal values, some tiny ones, a few zeros (no NaN/Inf).
std::vector<std::uint8_t> makeData(dl::DType t, std::size_t bytes, std::uint32_t seed) {
    std::vector<std::uint8_t> out(bytes);
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<float> pool(1 << 16);
    for (auto& x : pool) {
        x = normal(rng);
        if (rng() % 10 == 0) x *= 1e-5f;
        if (rng() % 50 == 0) x = 0;
    }
    const std::size_t esize = dl::dtypeSize(t);
    for (std::size_t i = 0; i < bytes / esize; ++i) {
        const float x = pool[(i * 2654435761u + (i >> 16)) & 0xffff];
        if (t == dl::DType::Float16) {
            const std::uint16_t h = dl::floatToHalf(x);
            std::memcpy(&out[i * 2], &h, 2);
        } else {
            std::memcpy(&out[i * 4], &x, 4);
        }
    }
    return out;
}

std::string benchFile(dl::DType t) {
    const std::string path = benchDir() + (t == dl::DType::Float16 ? "/f16_512M.bin" : "/f32_512M.bin");
    std::error_code ec;
    if (std::filesystem::file_size(path, ec) == kFileBytes) return path;
    std::filesystem::create_directories(benchDir());
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    const auto block = makeData(t, 64u << 20, 1);
    for (std::uint64_t done = 0; done < kFileBytes; done += block.size())
        f.write(reinterpret_cast<const char*>(block.data()), std::streamsize(block.size()));
    return path;
}

dl::DType typeArg(const benchmark::State& state) {
    return state.range(0) == 16 ? dl::DType::Float16 : dl::DType::Float32;
}

// Baseline: read() the whole file in 1 MiB chunks, touching nothing.
void BM_Read(benchmark::State& state) {
    const std::string path = benchFile(typeArg(state));
    std::vector<char> buf(std::size_t(state.range(1)));
    for (auto _ : state) {
        const int fd = ::open(path.c_str(), O_RDONLY);
        std::uint64_t total = 0;
        ssize_t r;
        while ((r = ::read(fd, buf.data(), buf.size())) > 0) total += std::uint64_t(r);
        ::close(fd);
        benchmark::DoNotOptimize(total);
    }
    state.SetBytesProcessed(std::int64_t(state.iterations() * kFileBytes));
}
BENCHMARK(BM_Read)
    ->ArgsProduct({{16, 32}, {1 << 20}})
    ->ArgNames({"bits", "chunk"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// computeFileStats over the same file: threads, read chunk size.
void BM_FileStats(benchmark::State& state) {
    const std::string path = benchFile(typeArg(state));
    dl::FileStatsOptions opt;
    opt.maxThreads = int(state.range(1));
    opt.chunkBytes = std::size_t(state.range(2));
    const dl::DType t = typeArg(state);
    for (auto _ : state) {
        dl::TensorStats s;
        dl::Log2Histogram h;
        std::string err;
        if (!dl::computeFileStats(path.c_str(), 0, kFileBytes, t, false, s, h, err, opt))
            state.SkipWithError(err.c_str());
        benchmark::DoNotOptimize(s);
    }
    state.SetBytesProcessed(std::int64_t(state.iterations() * kFileBytes));
}
BENCHMARK(BM_FileStats)
    ->ArgsProduct({{16, 32}, {1, 2}, {256 << 10, 1 << 20, 8 << 20}})
    ->ArgNames({"bits", "threads", "chunk"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The kernel alone on a 1 MiB buffer (L2-resident): compute ceiling, SIMD vs scalar.
void BM_Kernel(benchmark::State& state) {
    const dl::DType t = typeArg(state);
    const auto data = makeData(t, 1u << 20, 2);
    const bool prev = dl::kernels::simdEnabled();
    dl::kernels::setSimdEnabled(state.range(1) != 0);
    for (auto _ : state) {
        dl::StatsAccumulator acc;
        acc.add(data.data(), data.size() / dl::dtypeSize(t), t);
        benchmark::DoNotOptimize(acc.stats());
    }
    dl::kernels::setSimdEnabled(prev);
    state.SetBytesProcessed(std::int64_t(state.iterations() * data.size()));
}
BENCHMARK(BM_Kernel)->ArgsProduct({{16, 32}, {0, 1}})->ArgNames({"bits", "simd"});

}  // namespace

BENCHMARK_MAIN();

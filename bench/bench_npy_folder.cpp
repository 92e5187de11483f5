// Statistics over a folder of .npy files, to compare with scripts/numpy_stats_baseline.py.
// Folder: $DUMPLENS_BENCH_NPY_DIR, or one generated under /tmp/dumplens_bench/npy_folder
// (400 files: fp16 and fp32, 16 KiB to 4 MiB each, ~330 MiB in all).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/io/npy_file.h"
#include "core/stats/stats_accumulator.h"
#include "core/util/half.h"

namespace fs = std::filesystem;

namespace {

void writeNpy(const fs::path& p, const char* descr, std::size_t n, const std::vector<std::uint8_t>& payload) {
    std::string dict =
        std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + std::to_string(n) + ",), }";
    const std::size_t pad = 64 - (10 + dict.size() + 1) % 64;
    dict += std::string(pad, ' ') + "\n";
    const char head[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, char(dict.size() & 0xff), char(dict.size() >> 8)};
    std::ofstream f(p, std::ios::binary);
    f.write(head, sizeof head);
    f << dict;
    f.write(reinterpret_cast<const char*>(payload.data()), std::streamsize(payload.size()));
}

fs::path folder() {
    if (const char* env = std::getenv("DUMPLENS_BENCH_NPY_DIR"); env && *env) return env;
    const fs::path dir = "/tmp/dumplens_bench/npy_folder";
    if (fs::exists(dir / "done")) return dir;
    fs::create_directories(dir);
    std::mt19937 rng(42);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int i = 0; i < 400; ++i) {
        const bool half = i % 2 == 0;
        const std::size_t bytes = std::size_t(16) << 10 << (rng() % 9);  // 16 KiB .. 4 MiB
        const std::size_t n = bytes / (half ? 2 : 4);
        std::vector<std::uint8_t> payload(bytes);
        for (std::size_t k = 0; k < n; ++k) {
            const float x = normal(rng) * (k % 97 == 0 ? 1e-5f : 1.0f);
            if (half) {
                const std::uint16_t h = dl::floatToHalf(x);
                std::memcpy(&payload[2 * k], &h, 2);
            } else {
                std::memcpy(&payload[4 * k], &x, 4);
            }
        }
        char name[64];
        std::snprintf(name, sizeof name, "t%d.%s.npy", i, half ? "float16" : "float32");
        writeNpy(dir / name, half ? "<f2" : "<f4", n, payload);
    }
    std::ofstream(dir / "done") << "ok\n";
    return dir;
}

void BM_NpyFolderStats(benchmark::State& state) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(folder()))
        if (e.path().extension() == ".npy") files.push_back(e.path().string());
    std::uint64_t bytes = 0;
    for (const auto& f : files) bytes += fs::file_size(f);
    for (auto _ : state) {
        for (const auto& f : files) {
            dl::NpyHeader h;
            dl::TensorStats s;
            dl::Log2Histogram hist;
            std::string err;
            if (!dl::readNpyHeader(f, h, err) ||
                !dl::computeFileStats(f.c_str(), h.dataOffset, h.dataBytes, h.dtype, h.bigEndian, s, hist, err)) {
                state.SkipWithError(err.c_str());
                return;
            }
            benchmark::DoNotOptimize(s);
        }
    }
    state.SetBytesProcessed(std::int64_t(state.iterations() * bytes));
    state.counters["files_per_s"] =
        benchmark::Counter(double(files.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_NpyFolderStats)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

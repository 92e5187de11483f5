// `dumplens-cli compare` end to end on msprobe dumps of the sizes issue 14 measured msprobe 8.3.3
// on: a 1,989-entry tensor dump (~264 MB of .npy per run) and a 100,000-entry statistics dump
// (md5 per tensor). Each iteration does what the CLI does: index both runs (no cache), compare,
// write the output (text, CSV, JSON or msprobe's table). Files are written once under
// $DUMPLENS_BENCH_DIR (default /tmp/dumplens_bench)/compare_msprobe/.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sys/resource.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/compare/compare_json.h"
#include "core/compare/msprobe_table.h"
#include "core/compare/run_comparison.h"
#include "core/index/dump_indexer.h"
#include "core/io/npy_writer.h"

namespace fs = std::filesystem;

namespace {

std::string benchDir() {
    const char* env = std::getenv("DUMPLENS_BENCH_DIR");
    return std::string(env && *env ? env : "/tmp/dumplens_bench") + "/compare_msprobe";
}

double peakRssMb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_maxrss) / 1024.0;
}

std::string tensorJson(const char* dtype, const std::vector<std::int64_t>& shape, double mx, double mn, double mean,
                       double norm, const std::string& extra) {
    std::string s = fmt::format("{{\"type\": \"torch.Tensor\", \"dtype\": \"{}\", \"shape\": [", dtype);
    for (std::size_t i = 0; i < shape.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", shape[i]);
    auto n = [](double v) {
        return std::isinf(v) ? std::string(v > 0 ? "Infinity" : "-Infinity") : fmt::format("{}", v);
    };
    return s + "], \"Max\": " + n(mx) + ", \"Min\": " + n(mn) + ", \"Mean\": " + n(mean) + ", \"Norm\": " + n(norm) +
        ", \"requires_grad\": false" + extra + "}";
}

// 1,989 entries of one fp32 input and one output of 30 x 553 values (2 x 66 KB), plus an int
// argument: 2 x 132 MB = 264 MB of .npy per run. Run B moves every value by ~1e-4 relative and
// drifts from entry 1,500 on.
const std::string& tensorPair() {
    static const std::string root = [] {
        const std::string r = benchDir() + "/tensor";
        const int entries = 1989;
        const std::vector<std::int64_t> shape{30, 553};
        const std::size_t n = 30 * 553;
        for (const char* run : {"a", "b"}) {
            const fs::path dir = fs::path(r) / run / "step0/rank0";
            if (fs::exists(dir / "dump.json")) continue;
            fs::create_directories(dir / "dump_tensor_data");
            std::string data;
            std::vector<float> v(n);
            std::string bytes, error;
            for (int k = 0; k < entries; ++k) {
                const std::string name = fmt::format("Functional.linear.{}.forward", k);
                std::string args[2];
                for (int io = 0; io < 2; ++io) {
                    std::mt19937 base(std::uint32_t(k * 2 + io)), noise(std::uint32_t(k * 2 + io + 7777));
                    // One distribution per engine: a shared one caches its second value across engines.
                    std::normal_distribution<float> gBase(0, 1), gNoise(0, 1);
                    const bool isB = run[0] == 'b';
                    double mx = -1e300, mn = 1e300, sum = 0, sq = 0;
                    for (float& x : v) {
                        x = gBase(base);
                        if (isB) x *= 1 + (k >= 1500 ? 0.05f : 1e-4f) * gNoise(noise);
                        mx = std::max(mx, double(x)), mn = std::min(mn, double(x)), sum += x, sq += double(x) * x;
                    }
                    const std::string file = name + (io ? ".output.0.npy" : ".input.0.npy");
                    if (!dl::encodeFloats(v, dl::DType::Float32, bytes, error) ||
                        !dl::writeNpyFile((dir / "dump_tensor_data" / file).string(), dl::DType::Float32, shape, bytes,
                                          error))
                        throw std::runtime_error(error);
                    args[io] = tensorJson("Float32", shape, mx, mn, sum / double(n), std::sqrt(sq),
                                          ", \"data_name\": \"" + file + "\"");
                }
                data += fmt::format(
                    "{}\"{}\": {{\"input_args\": [{}, {{\"type\": \"int\", \"value\": 1}}], \"output\": [{}]}}",
                    k ? ", " : "", name, args[0], args[1]);
            }
            std::ofstream(dir / "dump.json")
                << "{\"task\": \"tensor\", \"level\": \"L1\", \"framework\": \"mindspore\", "
                   "\"dump_data_dir\": \""
                << (dir / "dump_tensor_data").string() << "\", \"data\": {" << data << "}}";
        }
        return r;
    }();
    return root;
}

// 100,000 entries of one input and one output (with md5), like scripts/make_msprobe_stats_pair.py:
// run B's figures move by one bf16 rounding from entry 50,000 on, its checksums from there too.
const std::string& statsPair() {
    static const std::string root = [] {
        const std::string r = benchDir() + "/stats";
        const int entries = 100000;
        for (const char* run : {"a", "b"}) {
            const fs::path dir = fs::path(r) / run / "step0/rank0";
            if (fs::exists(dir / "dump.json")) continue;
            fs::create_directories(dir);
            const bool isB = run[0] == 'b';
            std::string data;
            data.reserve(std::size_t(entries) * 600);
            for (int k = 0; k < entries; ++k) {
                double mx = 1.5 + k % 97, mn = -0.5 - k % 13, mean = 0.01 * (k % 7), norm = 10.0 + k % 31;
                const bool moved = isB && k >= entries / 2;
                if (moved) mx *= 1 + std::ldexp(1.0, -8);
                const std::string in =
                    tensorJson("torch.float16", {8, 48, 48}, mx, mn, mean, norm,
                               fmt::format(", \"md5\": \"{:08x}\"", (k * 2654435761u) ^ (moved ? 1u : 0u)));
                const std::string out =
                    tensorJson("torch.float16", {8, 48, 48}, mx * 2, mn, mean, norm,
                               fmt::format(", \"md5\": \"{:08x}\"", (k * 40503u + 7u) ^ (moved ? 1u : 0u)));
                data += fmt::format(
                    "{}\"Functional.linear.{}.forward\": {{\"input_args\": [{}], \"input_kwargs\": {{}}, "
                    "\"output\": [{}]}}",
                    k ? ", " : "", k, in, out);
            }
            std::ofstream(dir / "dump.json")
                << "{\"task\": \"statistics\", \"level\": \"L1\", \"framework\": \"pytorch\", "
                   "\"dump_data_dir\": null, \"data\": {"
                << data << "}}";
        }
        return r;
    }();
    return root;
}

// 0 text, 1 CSV, 2 JSON, 3 msprobe's table.
void runCli(benchmark::State& state, const std::string& root) {
    const std::string a = root + "/a/step0", b = root + "/b/step0";
    std::size_t bytes = 0, matched = 0;
    for (auto _ : state) {
        dl::IndexOptions io;
        io.useCache = false;
        dl::IndexReport rep;
        std::string error;
        dl::DumpIndex ia, ib;
        if (!dl::indexDump(a, io, ia, rep, error) || !dl::indexDump(b, io, ib, rep, error)) {
            state.SkipWithError(error.c_str());
            return;
        }
        std::string out;
        if (state.range(0) == 3) {
            dl::MsprobeTableReport r;
            if (!dl::writeMsprobeTableCsv(ia, ib, {}, out, r, error)) {
                state.SkipWithError(error.c_str());
                return;
            }
            matched = r.matched;
        } else {
            const dl::RunComparison c = dl::compareRuns(ia, ib, {});
            out = state.range(0) == 0 ? dl::compareText(c, ia, ib)
                : state.range(0) == 1 ? dl::compareCsv(c, ia, ib)
                                      : dl::compareJson(c, ia, ib);
            matched = c.alignment.tensors.size();
        }
        bytes = out.size();
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["output_MB"] = double(bytes) / 1e6;
    state.counters["matched"] = double(matched);
    state.counters["peak_rss_MB"] = peakRssMb();
}

void BM_CliCompareMsprobeTensor1989(benchmark::State& state) { runCli(state, tensorPair()); }
BENCHMARK(BM_CliCompareMsprobeTensor1989)->Arg(0)->Arg(3)->Iterations(2)->Unit(benchmark::kSecond)->UseRealTime();

void BM_CliCompareMsprobeStats100k(benchmark::State& state) { runCli(state, statsPair()); }
BENCHMARK(BM_CliCompareMsprobeStats100k)->DenseRange(0, 3)->Iterations(2)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

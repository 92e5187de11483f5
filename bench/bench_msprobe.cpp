// Other formats: a 100 MB msprobe dump.json (Python json.dump indent=1 layout, NaN/Infinity
// tokens) parsed with simdjson (used) and nlohmann (the alternative measured), the same folder
// through indexDump, and a folder of raw CANN dump files through indexDump.
//   DUMPLENS_BENCH_JSON_MB (default 100), DUMPLENS_BENCH_RAW_FILES (default 10000).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/formats/cann/cann_dump_writer.h"
#include "core/formats/msprobe/msprobe_dump.h"
#include "core/index/dump_indexer.h"
#include "core/io/npy_writer.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

std::size_t envOr(const char* name, std::size_t fallback) {
    const char* e = std::getenv(name);
    return e ? std::size_t(std::atoll(e)) : fallback;
}

void tensorJson(std::string& s, const char* indent, std::size_t i, const char* dtype, bool nonFinite) {
    char buf[512];
    const double v = double(i % 977) * 0.013 - 3.1;
    std::snprintf(
        buf, sizeof buf,
        "%s{\n%s \"type\": \"torch.Tensor\",\n%s \"dtype\": \"%s\",\n%s \"shape\": [\n%s  4,\n%s  %zu\n%s ],\n"
        "%s \"Max\": %s,\n%s \"Min\": %s,\n%s \"Mean\": %.17g,\n%s \"Norm\": %.17g,\n%s \"requires_grad\": true\n%s}",
        indent, indent, indent, dtype, indent, indent, indent, 64 + i % 4096, indent, indent,
        nonFinite ? "NaN" : std::to_string(v + 4).c_str(), indent,
        nonFinite ? "-Infinity" : std::to_string(v - 4).c_str(), indent, v, indent, v * v + 1, indent, indent);
    s += buf;
}

// step0/rank0/dump.json of about `mb` megabytes; entries alternate API, comm and module forms.
const std::string& jsonDump() {
    static const std::string root = [] {
        const std::size_t mb = envOr("DUMPLENS_BENCH_JSON_MB", 100);
        const std::string dir = "/tmp/dumplens_bench/msprobe_" + std::to_string(mb) + "mb";
        if (fs::exists(dir + "/complete")) return dir;
        fs::remove_all(dir);
        fs::create_directories(dir + "/step0/rank0");
        std::string s =
            "{\n \"task\": \"statistics\",\n \"level\": \"mix\",\n \"framework\": \"pytorch\",\n"
            " \"dump_data_dir\": null,\n \"data\": {\n";
        for (std::size_t i = 0; s.size() < mb * 1000000; ++i) {
            if (i) s += ",\n";
            const std::size_t k = i % 4;
            s += k == 0  ? "  \"Functional.linear." + std::to_string(i) + ".forward\": {\n   \"input_args\": [\n"
                : k == 1 ? "  \"Distributed.all_reduce." + std::to_string(i) + ".forward\": {\n   \"input_args\": [\n"
                : k == 2 ? "  \"Module.module.layers." + std::to_string(i % 40) + ".mlp.ParallelMlp.backward." +
                    std::to_string(i) + "\": {\n   \"input\": [\n"
                         : "  \"Tensor.__add__." + std::to_string(i) + ".forward\": {\n   \"input_args\": [\n";
            tensorJson(s, "    ", i, "torch.float16", i % 50 == 0);
            s += k == 2 ? "\n   ],\n   \"output\": [\n"
                        : ",\n    {\n     \"type\": \"int\",\n     \"value\": 1\n    }\n   ],\n   \"input_kwargs\": "
                          "{},\n   \"output\": [\n";
            tensorJson(s, "    ", i + 1, "torch.float16", false);
            s += "\n   ]\n  }";
        }
        s += "\n }\n}";
        std::ofstream(dir + "/step0/rank0/dump.json", std::ios::binary) << s;
        std::ofstream(dir + "/complete") << "ok";
        return dir;
    }();
    return root;
}

std::string readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

void BM_MsprobeParseSimdjson(benchmark::State& state) {
    const std::string original = readAll(jsonDump() + "/step0/rank0/dump.json");
    std::size_t entries = 0, tensors = 0;
    for (auto _ : state) {
        state.PauseTiming();
        std::string text = original;
        state.ResumeTiming();
        MsprobeDump d;
        std::string error;
        if (!parseMsprobeDumpJson(text, d, error)) state.SkipWithError(error.c_str());
        entries = d.entries.size();
        tensors = 0;
        for (const auto& e : d.entries) tensors += e.tensors.size();
    }
    state.counters["entries"] = double(entries);
    state.counters["tensors"] = double(tensors);
    state.SetBytesProcessed(std::int64_t(state.iterations() * original.size()));
}
BENCHMARK(BM_MsprobeParseSimdjson)->Unit(benchmark::kMillisecond)->UseRealTime();

// The alternative: nlohmann DOM over the same (token-neutralised) text, no entry walk at all.
void BM_MsprobeParseNlohmannDomOnly(benchmark::State& state) {
    std::string text = readAll(jsonDump() + "/step0/rank0/dump.json");
    neutralizeNonFiniteTokens(text.data(), text.size());
    for (auto _ : state) {
        auto j = nlohmann::json::parse(text, nullptr, false);
        benchmark::DoNotOptimize(j);
    }
    state.SetBytesProcessed(std::int64_t(state.iterations() * text.size()));
}
BENCHMARK(BM_MsprobeParseNlohmannDomOnly)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

// One uncached index of `root` on state.range(0) threads (errors end the benchmark).
DumpIndex indexUncached(benchmark::State& state, const std::string& root) {
    DumpIndex idx;
    IndexReport report;
    IndexOptions o;
    o.useCache = false;
    o.threads = unsigned(state.range(0));
    std::string error;
    if (!indexDump(root, o, idx, report, error)) state.SkipWithError(error.c_str());
    return idx;
}

void BM_MsprobeIndexDump(benchmark::State& state) {
    const std::string root = jsonDump();
    std::size_t ops = 0;
    for (auto _ : state) ops = indexUncached(state, root).ops.size();
    state.counters["ops"] = double(ops);
}
BENCHMARK(BM_MsprobeIndexDump)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// rank_{r}/Net/0/0/ raw CANN files: fp16 input (4096), bf16 input (4096), NZ fp16 output
// (original 100 x 200, device 13 x 7 x 16 x 16).
const std::string& rawDump() {
    static const std::string root = [] {
        const std::size_t n = envOr("DUMPLENS_BENCH_RAW_FILES", 10000);
        const std::string dir = "/tmp/dumplens_bench/cann_raw_" + std::to_string(n);
        if (fs::exists(dir + "/complete")) return dir;
        fs::remove_all(dir);
        std::vector<float> v(13 * 7 * 256);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i % 1000) * 0.01f - 5;
        std::string f16, bf16, error;
        encodeFloats(v, DType::Float16, f16, error);
        encodeFloats(std::vector<float>(v.begin(), v.begin() + 4096), DType::BFloat16, bf16, error);
        const std::string bytes = buildCannDumpFile({{Io::Input, 2, 2, {4096}, {4096}, f16.substr(0, 8192)},
                                                     {Io::Input, 27, 2, {4096}, {4096}, bf16},
                                                     {Io::Output, 2, 29, {13, 7, 16, 16}, {100, 200}, f16}},
                                                    "Default/MatMul");
        for (std::size_t i = 0; i < n; ++i) {
            const std::string d = dir + "/rank_" + std::to_string(i % 4) + "/Net/0/" + std::to_string(i / 4000);
            if (i % 4000 < 4) fs::create_directories(d);
            std::ofstream(d + "/MatMul.Default_MatMul-op" + std::to_string(i) + "." + std::to_string(i) + ".2." +
                              std::to_string(1700000000000000 + i),
                          std::ios::binary)
                << bytes;
        }
        std::ofstream(dir + "/complete") << "ok";
        return dir;
    }();
    return root;
}

void BM_CannRawIndexDump(benchmark::State& state) {
    const std::string root = rawDump();
    std::size_t tensors = 0;
    for (auto _ : state) tensors = indexUncached(state, root).tensors.size();
    state.counters["tensors"] = double(tensors);
    state.counters["files/s"] = benchmark::Counter(double(tensors / 3), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_CannRawIndexDump)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

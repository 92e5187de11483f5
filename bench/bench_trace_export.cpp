// The trace export (core/export/trace_events.h) of a big dump: time, MB/s and the memory it takes
// beyond the index, to show it streams. The index (a .dlx or a dump folder, from the cache) is
// opened and analysed once; each benchmark resets the kernel's resident high-water mark
// (/proc/self/clear_refs) before it runs, so `extra_peak_mb` is the export's own peak over the
// resident set it started from (the index, the analysis and the op states).
//   build/ci/bench/bench_pipeline_dump /tmp/tr/d10m --mb 203 --layers 23
//   build/ci/app/dumplens-cli index /tmp/tr/d10m/dump -o /tmp/tr/d10m.dlx
//   DUMPLENS_BENCH_INDEX=/tmp/tr/d10m.dlx DUMPLENS_BENCH_OUT=/tmp/tr build/ci/bench/bench_trace_export
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/analysis/overflow_analyzer.h"
#include "core/export/trace_events.h"
#include "core/index/dump_indexer.h"
#include "core/query/op_state.h"

namespace {

// VmRSS / VmHWM of this process in MiB.
double statusMb(const char* key) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) return std::atof(line.c_str() + std::string(key).size()) / 1024.0;
    return 0;
}

void resetPeak() { std::ofstream("/proc/self/clear_refs") << "5"; }

struct Opened {
    dl::DumpIndex index;
    dl::AnalysisResult analysis;
    dl::OpStates states;
    double rssMb = 0;  // once all three are resident
};

Opened* opened() {
    static std::unique_ptr<Opened> o = [] {
        auto x = std::make_unique<Opened>();
        const char* p = std::getenv("DUMPLENS_BENCH_INDEX");
        if (!p) return std::unique_ptr<Opened>();
        dl::IndexReport report;
        std::string error;
        dl::IndexOptions io;
        if (!dl::indexDump(p, io, x->index, report, error)) {
            std::fprintf(stderr, "%s\n", error.c_str());
            return std::unique_ptr<Opened>();
        }
        x->analysis = dl::analyze(x->index);
        x->states = dl::computeOpStates(x->index, &x->analysis, x->analysis.nearLimitThreshold);
        x->rssMb = statusMb("VmRSS:");
        return x;
    }();
    return o.get();
}

void report(benchmark::State& state, const Opened& x, const dl::TraceExportSummary& sum, double peakMb) {
    state.SetBytesProcessed(std::int64_t(sum.bytes) * state.iterations());
    state.counters["ops"] = double(sum.slices);
    state.counters["output_mb"] = double(sum.bytes) / 1048576.0;
    state.counters["index_rss_mb"] = x.rssMb;
    state.counters["extra_peak_mb"] = peakMb - x.rssMb;
}

// Into a file (DUMPLENS_BENCH_OUT, default /tmp), as `dumplens-cli export-trace` writes it.
void BM_ExportTraceFile(benchmark::State& state) {
    Opened* x = opened();
    if (!x) return state.SkipWithError("set DUMPLENS_BENCH_INDEX to a .dlx or dump folder");
    const char* dir = std::getenv("DUMPLENS_BENCH_OUT");
    const std::string out = std::string(dir ? dir : "/tmp") + "/bench_trace_export.json";
    dl::TraceExportSummary sum;
    resetPeak();
    for (auto _ : state) {
        std::string error;
        if (!dl::exportTraceFile(out, x->index, &x->analysis, x->states, {}, sum, error))
            return state.SkipWithError(error.c_str());
    }
    report(state, *x, sum, statusMb("VmHWM:"));
    std::filesystem::remove(out);
}

// The writer alone: a sink that only counts.
void BM_ExportTraceNullSink(benchmark::State& state) {
    Opened* x = opened();
    if (!x) return state.SkipWithError("set DUMPLENS_BENCH_INDEX to a .dlx or dump folder");
    dl::TraceExportSummary sum;
    const dl::TraceSink sink = [](const char* d, std::size_t n, std::string&) {
        benchmark::DoNotOptimize(d);
        benchmark::DoNotOptimize(n);
        return true;
    };
    resetPeak();
    for (auto _ : state) {
        std::string error;
        if (!dl::writeTraceEvents(x->index, &x->analysis, x->states, {}, sink, sum, error))
            return state.SkipWithError(error.c_str());
    }
    report(state, *x, sum, statusMb("VmHWM:"));
}

}  // namespace

BENCHMARK(BM_ExportTraceFile)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_ExportTraceNullSink)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK_MAIN();

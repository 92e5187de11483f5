// What the app does with a big index after opening it, step by step, on a real .dlx or cached
// dump (issue 13: the 10M-row statistics dump): reopen, analyze, op states, timeline build, table
// filters and a sort. Peak RSS (the process's high-water mark so far) is a counter.
//   python3 bench/make_statistic_dump.py /tmp/d10m 10000000
//   dumplens-cli index /tmp/d10m -o /tmp/d10m.dlx
//   DUMPLENS_BENCH_INDEX=/tmp/d10m.dlx build/ci/bench/bench_open_index
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "core/analysis/overflow_analyzer.h"
#include "core/index/dump_indexer.h"
#include "core/query/op_filter.h"
#include "core/query/op_state.h"
#include "core/timeline/timeline_data.h"

namespace {

double peakRssMb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_maxrss) / 1024.0;
}

// CPU seconds of the whole process (all threads: Google Benchmark's CPU column counts only the
// calling thread, not the TBB workers).
double processCpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Process CPU ms per iteration of the benchmark loop, as a counter.
struct CpuMeter {
    benchmark::State& state;
    double start = processCpuSeconds();
    ~CpuMeter() { state.counters["cpu_all_ms"] = (processCpuSeconds() - start) * 1000.0 / double(state.iterations()); }
};

std::string indexPath() {
    const char* p = std::getenv("DUMPLENS_BENCH_INDEX");
    return p ? p : "";
}

struct Opened {
    dl::DumpIndex index;
    dl::AnalysisResult analysis;
    dl::OpStates states;
};

// Loaded once for every benchmark but the reopen itself.
Opened* opened() {
    static std::unique_ptr<Opened> o = [] {
        auto x = std::make_unique<Opened>();
        dl::IndexReport report;
        std::string error;
        if (indexPath().empty() || !dl::indexDump(indexPath(), {}, x->index, report, error))
            return std::unique_ptr<Opened>();
        dl::AnalysisOptions ao;
        ao.replay = false;
        x->analysis = dl::analyze(x->index, ao);
        x->states = dl::computeOpStates(x->index, &x->analysis, x->analysis.nearLimitThreshold);
        return x;
    }();
    return o.get();
}

bool skip(benchmark::State& state, Opened* o) {
    if (o) return false;
    state.SkipWithError("set DUMPLENS_BENCH_INDEX to a .dlx file or an indexed dump folder");
    return true;
}

void finish(benchmark::State& state, const Opened& o) {
    state.counters["tensors"] = double(o.index.tensors.size());
    state.counters["peak_rss_mb"] = peakRssMb();
}

void BM_Reopen(benchmark::State& state) {
    if (indexPath().empty()) {
        state.SkipWithError("set DUMPLENS_BENCH_INDEX");
        return;
    }
    std::size_t tensors = 0;
    CpuMeter cpu{state};
    for (auto _ : state) {
        dl::DumpIndex index;
        dl::IndexReport report;
        std::string error;
        if (!dl::indexDump(indexPath(), {}, index, report, error)) {
            state.SkipWithError(error.c_str());
            return;
        }
        tensors = index.tensors.size();
    }
    state.counters["tensors"] = double(tensors);
    state.counters["peak_rss_mb"] = peakRssMb();
}

void BM_Analyze(benchmark::State& state) {
    Opened* o = opened();
    if (skip(state, o)) return;
    CpuMeter cpu{state};
    for (auto _ : state) benchmark::DoNotOptimize(dl::analyze(o->index));
    finish(state, *o);
}

void BM_OpStates(benchmark::State& state) {
    Opened* o = opened();
    if (skip(state, o)) return;
    CpuMeter cpu{state};
    for (auto _ : state)
        benchmark::DoNotOptimize(dl::computeOpStates(o->index, &o->analysis, o->analysis.nearLimitThreshold));
    finish(state, *o);
}

void BM_TimelineBuild(benchmark::State& state) {
    Opened* o = opened();
    if (skip(state, o)) return;
    std::size_t bytes = 0;
    CpuMeter cpu{state};
    for (auto _ : state) {
        const dl::TimelineData t = dl::buildTimeline(o->index, &o->analysis, o->states, {});
        bytes = t.memoryBytes();
    }
    state.counters["timeline_mb"] = double(bytes) / 1048576.0;
    finish(state, *o);
}

// range(0): 0 text "sqrtgrad", 1 regex "Gradients_.*SqrtGrad", 2 inf/nan tensors only, 3 rank 6.
void BM_Filter(benchmark::State& state) {
    Opened* o = opened();
    if (skip(state, o)) return;
    dl::OpFilter f;
    switch (state.range(0)) {
        case 0:
            f.text = "sqrtgrad";
            break;
        case 1:
            f.text = "Gradients_.*SqrtGrad";
            f.regex = true;
            break;
        case 2:
            f.stateMask = dl::opStateBit(dl::OpState::InfNan);
            break;
        default:
            f.rank = 6;
            break;
    }
    const dl::QueryContext ctx{o->index, o->states, &o->analysis.stages};
    std::vector<std::uint32_t> rows;
    CpuMeter cpu{state};
    for (auto _ : state) {
        std::string error;
        if (!dl::filterRows(ctx, f, rows, error)) {
            state.SkipWithError(error.c_str());
            return;
        }
    }
    state.counters["rows"] = double(rows.size());
    finish(state, *o);
}

// Sort of every row by Max |x| (descending), the table's heaviest column sort.
void BM_SortMaxAbs(benchmark::State& state) {
    Opened* o = opened();
    if (skip(state, o)) return;
    const dl::QueryContext ctx{o->index, o->states, &o->analysis.stages};
    std::vector<std::uint32_t> all;
    std::string error;
    dl::filterRows(ctx, {}, all, error);
    CpuMeter cpu{state};
    for (auto _ : state) {
        state.PauseTiming();
        std::vector<std::uint32_t> rows = all;
        state.ResumeTiming();
        dl::sortRows(ctx, rows, dl::OpColumn::MaxAbs, true);
    }
    finish(state, *o);
}

}  // namespace

BENCHMARK(BM_Reopen)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();
BENCHMARK(BM_Analyze)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_OpStates)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_TimelineBuild)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();
BENCHMARK(BM_Filter)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_SortMaxAbs)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();

BENCHMARK_MAIN();

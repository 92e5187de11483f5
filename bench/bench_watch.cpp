// `dumplens-cli watch` under load (issue 29): a fleet of writer threads emulating R ranks lands
// small MindSpore .npy files (8 fp16 values, one open-write-close each, as the dump writers do;
// names and bytes made before the clock starts) into a watched folder at a target rate while
// dl::watchDump follows it on another thread of the same process (watch_fleet.h).
//   BM_WriterAlone: the fleet with nobody watching (the baseline: what the writer can do here).
//   BM_WatchOverflowLatency: per run, clean files at the rate, then one file holding an Inf on
//     whichever rank comes next, clean files on; the latency is from the writer's last byte of that
//     file to the "overflow" event (p50/p99 over the runs), and the watcher's CPU while the files
//     land (process CPU less the writers' own threads); each event checked against `analyze`.
//   BM_WatchIdleCpu: the watcher's CPU over 3 s of no file landing, after it indexed 5,000 files.
//   BM_WatchSoak: N files landing at the rate; resident size at N/10, N/5, N/2 and N, the watcher's
//     CPU, then the first overflow's latency and peak; and the index's own bytes.
// The incremental index alone (batches, statistic.csv appends, memory): bench_watch_index.cpp.
// Reproduce: cmake --build build/ci --target bench_watch && build/ci/bench/bench_watch
// (docs/PERFORMANCE.md "Watch").
#include <string>
#include <vector>

#include "bench/watch_fleet.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/index/dump_indexer.h"

namespace {

using namespace watch_bench;

void BM_WriterAlone(benchmark::State& state) {
    const int ranks = int(state.range(0)), writers = int(state.range(1));
    const std::uint64_t n = std::uint64_t(state.range(2));
    for (auto _ : state) {
        Scratch s;
        Fleet fleet(s.root / "dump", ranks, writers);
        const double c0 = cpuSecondsSelf();
        const auto t0 = Clock::now();
        fleet.start(n, 0);
        fleet.wait();
        const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
        state.counters["files_per_s"] = double(n) / wall;
        state.counters["cpu_us_per_file"] = 1e6 * (cpuSecondsSelf() - c0) / double(n);
    }
}
// ranks, writer threads, files
BENCHMARK(BM_WriterAlone)->Args({64, 4, 100000})->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_WatchOverflowLatency(benchmark::State& state) {
    const int ranks = int(state.range(0)), writers = int(state.range(3));
    const double rate = double(state.range(1));
    const std::uint64_t before = std::uint64_t(state.range(2));
    std::vector<double> latencies;
    double landed = 0, wallAll = 0, watchCpu = 0, warnings = 0, mismatches = 0;
    for (auto _ : state) {
        Scratch s;
        Fleet fleet(s.root / "dump", ranks, writers);
        WatchThread watch(s.root / "dump", s.root / "cache");
        const double c0 = cpuSecondsSelf();
        const auto t0 = Clock::now();
        fleet.start(0, rate);
        while (fleet.landed() < before) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        fleet.requestBad();
        // Clean files keep landing while the watcher works, as the job goes on.
        watch.waitUntil([&] { return watch.overflowAt.has_value(); }, std::chrono::seconds(120));
        fleet.stop();
        const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
        const auto bad = fleet.badLanded();
        if (!bad || !watch.overflowAt) {
            state.SkipWithError("no overflow event");
            break;
        }
        latencies.push_back(std::chrono::duration<double, std::milli>(*watch.overflowAt - *bad).count());
        warnings += double(watch.warnings);
        landed += double(fleet.landed());
        wallAll += wall;
        watchCpu += (cpuSecondsSelf() - c0) - fleet.writerCpuSeconds();
        // Correct under the load: the event names what `analyze` of the finished folder names
        // (once the watch has taken in the files landed after it, which cannot move it earlier).
        {
            dl::DumpIndex idx;
            dl::IndexReport report;
            dl::IndexOptions o;
            o.useCache = false;
            std::string error;
            dl::AnalysisOptions ao;
            ao.replay = false;
            std::string want = "(none)";
            if (dl::indexDump((s.root / "dump").string(), o, idx, report, error))
                if (const dl::AnalysisResult r = dl::analyze(idx, ao); r.firstOverflow) {
                    const dl::OpRecord& op = idx.ops[r.firstOverflow->op];
                    want = idx.strings.str(op.name) + " rank " + std::to_string(op.rank) + " iteration " +
                        std::to_string(op.iteration);
                }
            std::lock_guard lock(watch.mutex);
            if (watch.overflowOp != want) {
                ++mismatches;
                std::fprintf(stderr, "watch said %s, analyze says %s\n", watch.overflowOp.c_str(), want.c_str());
            }
        }
    }
    state.counters["p50_ms"] = percentile(latencies, 0.5);
    state.counters["p99_ms"] = percentile(latencies, 0.99);
    state.counters["max_ms"] = percentile(latencies, 1.0);
    state.counters["files_per_s"] = wallAll > 0 ? landed / wallAll : 0;
    state.counters["watch_cpu_pct"] = wallAll > 0 ? 100 * watchCpu / wallAll : 0;
    state.counters["runs"] = double(latencies.size());
    state.counters["warnings"] = warnings;
    state.counters["event_differs_from_analyze"] = mismatches;
}
// ranks, target files/s (0: flat out), clean files before the overflow, writer threads.
BENCHMARK(BM_WatchOverflowLatency)
    ->Args({64, 10000, 20000, 4})
    ->Args({64, 3000, 6000, 4})
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_WatchIdleCpu(benchmark::State& state) {
    for (auto _ : state) {
        Scratch s;
        {
            Fleet fleet(s.root / "dump", 64, 1);
            fleet.start(5000, 0);
            fleet.wait();
        }
        WatchThread watch(s.root / "dump", s.root / "cache");
        watch.waitUntil([&] { return watch.files == 5000; });
        std::this_thread::sleep_for(std::chrono::seconds(1));  // the last progress and analysis done
        const double c0 = cpuSecondsSelf();
        const auto t0 = Clock::now();
        std::this_thread::sleep_for(std::chrono::seconds(3));
        const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
        state.counters["idle_cpu_pct"] = 100 * (cpuSecondsSelf() - c0) / wall;
        state.counters["rss_mib"] = rssMiB();
    }
}
BENCHMARK(BM_WatchIdleCpu)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

void BM_WatchSoak(benchmark::State& state) {
    const std::uint64_t n = std::uint64_t(state.range(0));
    const double rate = double(state.range(1));
    for (auto _ : state) {
        Scratch s;
        Fleet fleet(s.root / "dump", 64, 4);
        const double rss0 = rssMiB();
        std::optional<WatchThread> watch(std::in_place, s.root / "dump", s.root / "cache");
        const double c0 = cpuSecondsSelf();
        const auto t0 = Clock::now();
        fleet.start(n, rate);
        std::vector<std::pair<std::uint64_t, double>> marks;
        for (const std::uint64_t mark : {n / 10, n / 5, n / 2, n}) {
            if (!watch->waitUntil([&] { return watch->files >= mark; }, std::chrono::seconds(3600))) {
                state.SkipWithError("the watch did not reach the mark");
                return;
            }
            marks.emplace_back(mark, rssMiB());
            state.counters["rss_mib_at_" + std::to_string(mark)] = marks.back().second;
            // Said as it happens: a long soak's counters come only after its files are removed.
            // Files landed but not indexed yet are the watch's backlog: RSS counts them too.
            std::fprintf(stderr, "soak: %llu files indexed, %llu landed, %.0f s, RSS %.1f MiB\n",
                         static_cast<unsigned long long>(mark), static_cast<unsigned long long>(fleet.landed()),
                         std::chrono::duration<double>(Clock::now() - t0).count(), marks.back().second);
        }
        fleet.wait();
        const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
        state.counters["watch_cpu_pct"] = 100 * ((cpuSecondsSelf() - c0) - fleet.writerCpuSeconds()) / wall;
        state.counters["files_per_s"] = double(n) / wall;
        state.counters["rss_mib_before_watch"] = rss0;
        // The slope between N/10 and N, per file; and what of it the index itself holds.
        const double slope =
            (marks.back().second - marks[0].second) * double(1 << 20) / double(marks.back().first - marks[0].first);
        state.counters["rss_bytes_per_file"] = slope;
        // What the allocator keeps of freed memory (the batches' transient builds): given back, the
        // rest is what the watch holds.
        malloc_trim(0);
        state.counters["rss_mib_at_end_trimmed"] = rssMiB();
        // Then the job overflows: the first analysis merges every folder written out so far (as
        // `analyze` reads the whole dump), so its latency and memory grow with what was indexed.
        fleet.start(0, rate);
        fleet.requestBad();
        const bool seen = watch->waitUntil([&] { return watch->overflowAt.has_value(); }, std::chrono::seconds(1800));
        fleet.stop();
        if (const auto bad = fleet.badLanded(); seen && bad)
            state.counters["overflow_latency_ms"] =
                std::chrono::duration<double, std::milli>(*watch->overflowAt - *bad).count();
        state.counters["rss_mib_after_overflow"] = rssMiB();
        rusage usage{};
        getrusage(RUSAGE_SELF, &usage);
        state.counters["peak_rss_mib"] = double(usage.ru_maxrss) / 1024;  // the analysis' merged index
        std::fprintf(stderr, "soak: overflow event %s, %.0f ms after its file, RSS %.1f MiB, peak %.0f MiB\n",
                     seen ? "seen" : "NOT seen",
                     state.counters.count("overflow_latency_ms") ? double(state.counters["overflow_latency_ms"]) : -1.0,
                     rssMiB(), double(usage.ru_maxrss) / 1024);
        watch.reset();
        // The index of the same folder, for its bytes a tensor: read from the page cache up to ~1M
        // files; beyond, the files are on disk (10M are 40 GB) and reading them all again takes an hour.
        if (n > 2000000) continue;
        dl::DumpIndex idx;
        dl::IndexReport report;
        dl::IndexOptions o;
        o.useCache = false;
        std::string error;
        if (dl::indexDump((s.root / "dump").string(), o, idx, report, error)) {
            const dl::DumpIndex::Memory m = idx.memory();
            state.counters["index_bytes_per_tensor"] = double(m.arrays + m.strings) / double(idx.tensors.size());
            state.counters["index_array_bytes_per_tensor"] = double(m.arrays) / double(idx.tensors.size());
            state.counters["tensors"] = double(idx.tensors.size());
        }
    }
}
// files, target files/s (0: flat out). The 10M soak (RSS at 1M, 5M and 10M files) needs ~40 GB of
// file system and ~30 min: on disk, `DUMPLENS_BENCH_DIR=/some/disk --benchmark_filter=BM_WatchSoak/10000000`,
// on a file system made for it (docs/PERFORMANCE.md "Watch": a soak run where millions of files
// were just deleted measures the kernel's inode allocator, not the watch).
BENCHMARK(BM_WatchSoak)
    ->Args({1000000, 10000})
    ->Args({5000000, 10000})
    ->Args({10000000, 10000})
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

// The watch's incremental index alone, without a folder watcher (issue 29; watch_fleet.h writes
// the files):
//   BM_WatchBatch: one batch of 64 new files when N are held, with or without an execution order.
//   BM_WatchStatisticCsvAppend: a growing statistic.csv taking in one row.
//   BM_WatchIndexMemory: the bytes it holds per file, settled folders written out or not, and the
//     late first analysis, on the cut index and on every folder merged back (DUMPLENS_BENCH_COLD=1
//     drops the page cache before each).
// Reproduce: cmake --build build/ci --target bench_watch_index && build/ci/bench/bench_watch_index
// (docs/PERFORMANCE.md "Watch").
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "bench/watch_fleet.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/index/dump_scanner.h"
#include "core/watch/incremental_index.h"

namespace {

using namespace watch_bench;

// One batch of the watch, alone: N files indexed in 64 shards, then one new file per shard (what a
// batch under a 64-rank writer holds) handed to IncrementalIndex::update. With K > 0 each rank
// folder also holds an execution order of K kernels (rank_N/execution_order/, as MindSpore writes
// it), which every build of an iteration folder orders its ops by: the cost of reading it again.
void BM_WatchBatch(benchmark::State& state) {
    const std::uint64_t n = std::uint64_t(state.range(0));
    const std::uint64_t kernels = std::uint64_t(state.range(1));
    Scratch s;
    Fleet fleet(s.root / "dump", 64, 1);
    if (kernels) {
        std::string order = "NodeExecutionOrder-FullNameWithScope\n";
        for (std::uint64_t k = 0; k < kernels; ++k)
            order += "Default/network/layer" + std::to_string(k / 50) + "/Add-op" + std::to_string(k) + "\n";
        for (int r = 0; r < 64; ++r) {
            const fs::path dir = s.root / "dump" / ("rank_" + std::to_string(r)) / "execution_order";
            fs::create_directories(dir);
            std::ofstream(dir / "ms_execution_order_graph_0.csv", std::ios::binary) << order;
        }
    }
    fleet.start(n, 0);
    fleet.wait();
    const std::string root = fs::absolute(s.root / "dump").string();
    const auto toWatched = [&](const dl::ScanResult& scan) {
        std::vector<dl::WatchedFile> out;
        for (const dl::ScannedFile& f : scan.files) out.push_back({f.rel, f.size, f.mtimeNs, f.stamp});
        return out;
    };
    dl::IncrementalIndex idx(root, "", 1);
    const dl::ScanResult first = dl::scanFolder(root);
    idx.update(toWatched(first), {});
    std::set<std::string> known;
    for (const dl::ScannedFile& f : first.files) known.insert(f.rel);
    for (auto _ : state) {
        state.PauseTiming();
        fleet.start(64, 0);
        fleet.wait();
        std::vector<dl::WatchedFile> fresh;
        for (const dl::WatchedFile& f : toWatched(dl::scanFolder(root)))
            if (known.insert(f.rel).second) fresh.push_back(f);
        state.ResumeTiming();
        idx.update(fresh, {});
    }
    state.counters["files_held"] = double(idx.files());
    state.counters["shard_builds"] = double(idx.shardBuilds());
    malloc_trim(0);
    state.counters["heap_mib"] = double(mallinfo2().uordblks) / (1 << 20);  // with the order tables held
}
// files held, kernels in each rank's execution order (0: none)
BENCHMARK(BM_WatchBatch)
    ->Args({5000, 0})
    ->Args({20000, 0})
    ->Args({80000, 0})
    ->Args({20000, 10000})
    ->Args({20000, 100000})
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);

// A statistic.csv of R rows (2.2 layout, one op of two tensors per two rows) growing by one row:
// the cost of the batch that takes the row in. The bytes read are the row's (test_incremental_
// statistic_csv checks it through a counter); the CPU still grows with the rows held, applied
// again to the shard's fresh drafts and grouped.
void BM_WatchStatisticCsvAppend(benchmark::State& state) {
    const std::size_t rows = std::size_t(state.range(0));
    Scratch s;
    const fs::path root = s.root / "dump";
    const std::string rel = "rank_0/Net/0/0/statistic.csv";
    fs::create_directories((root / rel).parent_path());
    std::uint64_t n = 0;
    const auto row = [&] {
        const std::uint64_t k = n++;
        return "Add,Default/Add-op" + std::to_string(k / 2) + ",0,0," + std::to_string(1733905446822806ULL + k / 2) +
            (k % 2 ? ",output" : ",input") + ",0,8,float16,\"(2,2)\",1.5,-0.5,2.25\n";
    };
    std::string text =
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,L2Norm "
        "Value\n";
    while (n < rows) text += row();
    const int fd = ::open((root / rel).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (::write(fd, text.data(), text.size()) != ssize_t(text.size())) {}
    const std::string absRoot = fs::absolute(root).string();
    dl::IncrementalIndex idx(absRoot, "", 1);
    const auto current = [&] {
        for (const dl::ScannedFile& f : dl::scanFolder(absRoot).files)
            if (f.rel == rel) return std::vector<dl::WatchedFile>{{f.rel, f.size, f.mtimeNs, f.stamp}};
        return std::vector<dl::WatchedFile>{};
    };
    idx.update(current(), {});
    for (auto _ : state) {
        state.PauseTiming();
        const std::string r = row();
        if (::write(fd, r.data(), r.size()) != ssize_t(r.size())) {}
        const auto batch = current();
        state.ResumeTiming();
        idx.update(batch, {});
    }
    ::close(fd);
    state.counters["rows"] = double(idx.tensors());
}
BENCHMARK(BM_WatchStatisticCsvAppend)->Arg(10000)->Arg(100000)->Iterations(20)->Unit(benchmark::kMillisecond);

// The incremental index alone (no folder watcher), N files fed in batches of 640 (10 per rank),
// settled folders spilled as the watch does: what it holds per file, apart from the watcher's state.
void BM_WatchIndexMemory(benchmark::State& state) {
    const std::uint64_t n = std::uint64_t(state.range(0));
    const bool spill = state.range(1) != 0;
    for (auto _ : state) {
        Scratch s;
        {
            Fleet fleet(s.root / "dump", 64, 4);
            fleet.start(n, 0);
            fleet.wait();
            // Then one file with an Inf, among the last 64: the first overflow, late in the run.
            fleet.requestBad();
            fleet.start(64, 0);
            fleet.wait();
        }
        const std::string root = fs::absolute(s.root / "dump").string();
        std::vector<dl::WatchedFile> files;
        for (const dl::ScannedFile& f : dl::scanFolder(root).files)
            files.push_back({f.rel, f.size, f.mtimeNs, f.stamp});
        // In landing order (iteration by iteration, every rank), as the writer wrote them.
        std::stable_sort(files.begin(), files.end(), [](const dl::WatchedFile& a, const dl::WatchedFile& b) {
            const auto it = [](const std::string& r) {
                return std::stoull(r.substr(r.rfind('/', r.rfind('/') - 1) + 1));
            };
            return it(a.rel) < it(b.rel);
        });
        malloc_trim(0);
        const double rss0 = rssMiB();
        const double heap0 = double(mallinfo2().uordblks);
        std::error_code ec;
        dl::IncrementalIndex idx(root, "", 1);
        if (spill) idx.setSpill((s.root / "spill").string(), 16);
        for (std::size_t at = 0; at < files.size(); at += 640)
            idx.update(
                {files.begin() + std::ptrdiff_t(at), files.begin() + std::ptrdiff_t(std::min(files.size(), at + 640))},
                {});
        malloc_trim(0);
        state.counters["rss_bytes_per_file"] = (rssMiB() - rss0) * double(1 << 20) / double(files.size());
        // What the allocator has handed out and not got back: the rest of the RSS is fragmentation.
        state.counters["heap_bytes_per_file"] = (double(mallinfo2().uordblks) - heap0) / double(files.size());
        std::uintmax_t spillBytes = 0;  // the spills and the side file, on disk
        for (const auto& e : fs::directory_iterator(s.root / "spill", ec)) spillBytes += e.file_size(ec);
        state.counters["spill_bytes_per_folder"] =
            double(spillBytes) / double(std::max<std::size_t>(1, idx.spilledUnits()));
        state.counters["units"] = double(idx.units());
        state.counters["spilled_units"] = double(idx.spilledUnits());
        // What the watch's first analysis costs when it comes this late. DUMPLENS_BENCH_COLD=1
        // (root, files on a disk): the page cache dropped before each way, as a long run's dump
        // pushes the written-out folders out of it.
        const auto dropCaches = [] {
            if (const char* cold = std::getenv("DUMPLENS_BENCH_COLD"); !cold || *cold != '1') return;
            ::sync();
            if (FILE* f = std::fopen("/proc/sys/vm/drop_caches", "w")) {
                std::fputs("3\n", f);
                std::fclose(f);
            }
        };
        // The watch's way (dump_watch.cpp): the index cut down to what the analysis reads of the
        // clean iterations before the first bad one; then the whole way (every unit merged, the
        // spilled ones read back, as before).
        dropCaches();
        const auto tc = Clock::now();
        const dl::IncrementalIndex::CutIndex cut = idx.mergedForFirstOverflow();
        state.counters["cut_merged_s"] = std::chrono::duration<double>(Clock::now() - tc).count();
        dl::AnalysisOptions ao;
        ao.replay = false;
        {
            const dl::AnalysisResult r = dl::analyze(cut.index, ao);
            benchmark::DoNotOptimize(r);
            if (!r.firstOverflow) state.SkipWithError("no first overflow in the cut index");
        }
        state.counters["cut_s"] = std::chrono::duration<double>(Clock::now() - tc).count();
        state.counters["cut_ops"] = double(cut.index.ops.size());
        state.counters["units_side"] = double(cut.unitsCut);
        state.counters["units_left_out"] = double(cut.unitsLeftOut);
        dropCaches();
        const double c0 = cpuSecondsSelf();
        const auto t0 = Clock::now();
        const dl::DumpIndex merged = idx.merged();
        state.counters["merged_s"] = std::chrono::duration<double>(Clock::now() - t0).count();
        const auto t1 = Clock::now();
        const dl::AnalysisResult r = dl::analyze(merged, ao);
        benchmark::DoNotOptimize(r);
        state.counters["analyze_s"] = std::chrono::duration<double>(Clock::now() - t1).count();
        state.counters["merge_and_analyze_cpu_s"] = cpuSecondsSelf() - c0;
    }
}
// files, spill (1) or not (0)
BENCHMARK(BM_WatchIndexMemory)
    ->Args({200000, 1})
    ->Args({40000, 1})
    ->Args({200000, 0})
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

// `dumplens-cli watch` under load (issue 29): a fleet of writer threads emulating R ranks lands
// small MindSpore .npy files (8 fp16 values, one open-write-close each, as the dump writers do;
// names and bytes made before the clock starts) into a watched folder at a target rate while
// dl::watchDump follows it on another thread of the same process.
//   BM_WriterAlone: the fleet with nobody watching (the baseline: what the writer can do here).
//   BM_WatchOverflowLatency: per run, clean files at the rate, then one file holding an Inf on
//     whichever rank comes next, clean files on; the latency is from the writer's last byte of that
//     file to the "overflow" event (p50/p99 over the runs), and the watcher's CPU while the files
//     land (process CPU less the writers' own threads).
//   BM_WatchIdleCpu: the watcher's CPU over 3 s of no file landing, after it indexed 5,000 files.
//   BM_WatchSoak: N files landing at the rate; resident size at N/10, N/2 and N, the watcher's CPU,
//     and the index's own bytes (DumpIndex::memory of `index` of the same files): the rest of the
//     growth is the watch's per-file state.
// Files go under $DUMPLENS_BENCH_DIR/watch (default /dev/shm when it exists, else /tmp): tmpfs,
// so the disk does not set the rate.
// Reproduce: cmake --build build/ci --target bench_watch && build/ci/bench/bench_watch
// (docs/PERFORMANCE.md "Watch").
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "core/analysis/overflow_analyzer.h"
#include "core/index/dump_indexer.h"
#include "core/index/dump_scanner.h"
#include "core/io/npy_writer.h"
#include "core/watch/dump_watch.h"
#include "core/watch/incremental_index.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double cpuSecondsSelf() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}
double cpuSecondsThread() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}
double rssMiB() {
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        std::fclose(f);
    }
    return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

std::string npy(bool inf) {
    std::string payload, error;
    std::vector<float> v = {1, 2, 3, 4, 5, 6, 7, 8};
    if (inf) v[3] = std::numeric_limits<float>::infinity();
    dl::encodeFloats(v, dl::DType::Float16, payload, error);
    return dl::makeNpyHeader("<f2", {8}) + payload;
}

fs::path benchBase() {
    if (const char* env = std::getenv("DUMPLENS_BENCH_DIR"); env && *env) return fs::path(env) / "watch";
    std::error_code ec;
    if (fs::is_directory("/dev/shm", ec)) return "/dev/shm/dumplens_bench_watch";
    return fs::temp_directory_path() / "dumplens_bench_watch";
}

struct Scratch {
    fs::path root;
    Scratch() {
        root =
            benchBase() / (std::to_string(::getpid()) + "_" + std::to_string(Clock::now().time_since_epoch().count()));
        fs::create_directories(root);
    }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }
};

// R ranks written by W threads, thread t owning ranks t, t+W, ...; each rank writes
// kOpsPerIteration files per iteration into rank_N/Net/0/{iteration}/ (made when the iteration
// starts, as the dump writers do). A thread lands its ranks' files round robin, paced to its share
// of the rate every 8 files. One file with an Inf lands when requested (requestBad): the next file
// of whichever thread takes the request.
class Fleet {
public:
    static constexpr std::uint64_t kOpsPerIteration = 50;

    Fleet(fs::path dir, int ranks, int writers) : m_dir(std::move(dir)), m_ranks(ranks), m_writers(writers) {
        m_clean = npy(false);
        m_bad = npy(true);
        for (int r = 0; r < ranks; ++r) fs::create_directories(m_dir / ("rank_" + std::to_string(r)) / "Net/0");
    }
    ~Fleet() { stop(); }

    // Lands `total` more files in all (0: until stop()) at `rate` files/s in all (0: flat out).
    void start(std::uint64_t total, double rate) {
        stop();
        m_stop = false;
        for (int t = 0; t < m_writers; ++t) {
            const std::uint64_t quota =
                total ? total / std::uint64_t(m_writers) + (std::uint64_t(t) < total % std::uint64_t(m_writers)) : 0;
            m_threads.emplace_back([this, t, quota, rate] { write(t, quota, rate / m_writers); });
        }
    }
    void stop() {
        m_stop = true;
        for (auto& th : m_threads) th.join();
        m_threads.clear();
    }
    void wait() {  // for a start() with a total
        for (auto& th : m_threads) th.join();
        m_threads.clear();
    }
    void requestBad() { m_bad_state = 1; }
    // When the Inf file's last byte was written (after requestBad, once a writer took it).
    std::optional<Clock::time_point> badLanded() {
        if (m_bad_state.load() != 3) return std::nullopt;
        std::lock_guard lock(m_mutex);
        return m_badAt;
    }
    std::uint64_t landed() const { return m_landed.load(std::memory_order_relaxed); }
    double writerCpuSeconds() const {
        std::lock_guard lock(m_mutex);
        return m_writerCpu;
    }

private:
    struct RankState {
        int rank = 0;
        std::uint64_t written = 0;
        int dirFd = -1;
    };
    void write(int t, std::uint64_t quota, double rate) {
        const double cpu0 = cpuSecondsThread();
        std::vector<RankState> mine;
        for (int r = t; r < m_ranks; r += m_writers) mine.push_back({r, m_perRank[r], -1});
        if (mine.empty()) return;
        const auto t0 = Clock::now();
        char name[128];
        std::uint64_t n = 0;
        for (; !m_stop && (!quota || n < quota); ++n) {
            RankState& rs = mine[n % mine.size()];
            const std::uint64_t it = rs.written / kOpsPerIteration, op = rs.written % kOpsPerIteration;
            if (op == 0 || rs.dirFd < 0) {
                if (rs.dirFd >= 0) ::close(rs.dirFd);
                const fs::path folder = m_dir / ("rank_" + std::to_string(rs.rank)) / "Net/0" / std::to_string(it);
                ::mkdir(folder.c_str(), 0755);
                rs.dirFd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            }
            const std::uint64_t ts = 1700000000000000ULL + it * 1000 + op;  // the op's time on its rank
            std::snprintf(name, sizeof name, "Add.Add-op%llu.0.0.%llu.output.0.DefaultFormat.npy",
                          static_cast<unsigned long long>(op), static_cast<unsigned long long>(ts));
            int expected = 1;
            const bool bad =
                m_bad_state.load(std::memory_order_relaxed) == 1 && m_bad_state.compare_exchange_strong(expected, 2);
            const std::string& bytes = bad ? m_bad : m_clean;
            const int fd = ::openat(rs.dirFd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd >= 0) {
                if (::write(fd, bytes.data(), bytes.size()) != ssize_t(bytes.size())) {}
            }
            if (bad) {
                std::lock_guard lock(m_mutex);
                m_badAt = Clock::now();
                m_bad_state = 3;
            }
            if (fd >= 0) ::close(fd);
            ++rs.written;
            m_landed.fetch_add(1, std::memory_order_relaxed);
            if (rate > 0 && (n + 1) % 8 == 0)
                std::this_thread::sleep_until(t0 + std::chrono::nanoseconds(std::int64_t(1e9 * double(n + 1) / rate)));
        }
        for (RankState& rs : mine) {
            if (rs.dirFd >= 0) ::close(rs.dirFd);
            m_perRank[rs.rank] = rs.written;  // each rank written by one thread only
        }
        std::lock_guard lock(m_mutex);
        m_writerCpu += cpuSecondsThread() - cpu0;
    }

    fs::path m_dir;
    int m_ranks, m_writers;
    std::string m_clean, m_bad;
    std::vector<std::uint64_t> m_perRank = std::vector<std::uint64_t>(1024, 0);
    std::vector<std::thread> m_threads;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_bad_state{0};  // 0 none, 1 requested, 2 being written, 3 landed
    std::atomic<std::uint64_t> m_landed{0};
    mutable std::mutex m_mutex;
    Clock::time_point m_badAt{};
    double m_writerCpu = 0;
};

struct WatchThread {
    std::stop_source stop;
    std::mutex mutex;
    std::condition_variable cv;
    bool watching = false;
    std::optional<Clock::time_point> overflowAt;
    std::string overflowOp;  // the last overflow event's first_overflow: op, rank, iteration
    std::uint64_t files = 0, warnings = 0;
    std::thread thread;
    explicit WatchThread(const fs::path& dir, const fs::path& cache) {
        dl::WatchOptions o;
        o.dir = dir.string();
        o.cacheDir = cache.string();
        o.progressIntervalMs = 200;
        o.stop = stop.get_token();
        thread = std::thread([this, o] {
            dl::watchDump(o, [this](const dl::WatchEvent& e) {
                std::lock_guard lock(mutex);
                if (e.kind == dl::WatchEventKind::Watching) watching = true;
                if (e.kind == dl::WatchEventKind::Overflow && !overflowAt) overflowAt = Clock::now();
                if (e.kind == dl::WatchEventKind::Overflow) {
                    const auto& fo = e.json["first_overflow"];
                    overflowOp = fo["op_name"].get<std::string>() + " rank " + fo["rank"].dump() + " iteration " +
                        fo["iteration"].dump();
                }
                if (e.kind == dl::WatchEventKind::Progress) files = e.json["files"];
                if (e.kind == dl::WatchEventKind::Warning) ++warnings;  // e.g. the inotify queue overflowed
                cv.notify_all();
            });
        });
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return watching; });
    }
    template <class Pred>
    bool waitUntil(Pred p, std::chrono::seconds ceiling = std::chrono::seconds(600)) {
        std::unique_lock lock(mutex);
        return cv.wait_for(lock, ceiling, [&] { return p(); });
    }
    ~WatchThread() {
        stop.request_stop();
        thread.join();
    }
};

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, std::size_t(p * double(v.size() - 1) + 0.5))];
}

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
        state.counters["units"] = double(idx.units());
        state.counters["spilled_units"] = double(idx.spilledUnits());
        // What the watch's first analysis costs when it comes this late: every unit merged (the
        // spilled ones read back), then analysed as `analyze` would. DUMPLENS_BENCH_COLD=1 (root,
        // files on a disk): the page cache dropped first, as a long run's dump pushes the written-out
        // folders out of it.
        if (const char* cold = std::getenv("DUMPLENS_BENCH_COLD"); cold && *cold == '1') {
            ::sync();
            if (FILE* f = std::fopen("/proc/sys/vm/drop_caches", "w")) {
                std::fputs("3\n", f);
                std::fclose(f);
            }
        }
        const double c0 = cpuSecondsSelf();
        const auto t0 = Clock::now();
        const dl::DumpIndex merged = idx.merged();
        state.counters["merged_s"] = std::chrono::duration<double>(Clock::now() - t0).count();
        dl::AnalysisOptions ao;
        ao.replay = false;
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

// `dumplens-cli watch` under load (issue 29): a writer emulating R ranks lands small MindSpore
// .npy files (8 fp16 values, one open-write-close each, as the dump writers do) into a watched
// folder at a target rate while dl::watchDump follows it.
//   BM_WatchOverflowLatency: per run, clean files first, then one file holding an Inf on a random
//     rank, then clean files again; the latency is from the writer's last byte of that file to the
//     "overflow" event (p50/p99 over the runs, as counters).
//   BM_WatchIdleCpu: the watcher's CPU (process CPU time less nothing else running) over 3 s of
//     no file landing, after it indexed a folder of 5,000 files.
//   BM_WatchSoak: N files landing as fast as the writer goes; resident size at N/10, N/2 and N,
//     and the watcher's CPU while the writer runs (process CPU less the writer thread's own).
// Reproduce: cmake --build build/ci --target bench_watch && build/ci/bench/bench_watch
// (docs/PERFORMANCE.md "Watch").
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "core/io/npy_writer.h"
#include "core/watch/dump_watch.h"

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

struct Scratch {
    fs::path root;
    Scratch() {
        root = fs::temp_directory_path() /
            ("dumplens_bench_watch_" + std::to_string(::getpid()) + "_" +
             std::to_string(Clock::now().time_since_epoch().count()));
        fs::create_directories(root);
    }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }
};

// Lands files rank after rank (round robin), kOpsPerIteration ops per rank and iteration.
class RankWriter {
public:
    RankWriter(fs::path dir, int ranks) : m_dir(std::move(dir)), m_ranks(ranks), m_clean(npy(false)), m_bad(npy(true)) {
        for (int r = 0; r < ranks; ++r) fs::create_directories(m_dir / ("rank_" + std::to_string(r)) / "Net/0");
    }
    // One file; returns the moment its last byte was written.
    Clock::time_point land(bool inf) {
        const int rank = int(m_n % std::uint64_t(m_ranks));
        const std::uint64_t perRank = m_n / std::uint64_t(m_ranks);
        const std::uint64_t it = perRank / kOpsPerIteration, op = perRank % kOpsPerIteration;
        const fs::path folder = m_dir / ("rank_" + std::to_string(rank)) / "Net/0" / std::to_string(it);
        if (op == 0) fs::create_directories(folder);
        const std::string name = "Add.Add-op" + std::to_string(op) + ".0.0." +
            std::to_string(1700000000000000ULL + m_n) + ".output.0.DefaultFormat.npy";
        const int fd = ::open((folder / name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        const std::string& bytes = inf ? m_bad : m_clean;
        if (fd >= 0) {
            if (::write(fd, bytes.data(), bytes.size()) != ssize_t(bytes.size())) {}
        }
        const auto t = Clock::now();
        if (fd >= 0) ::close(fd);
        ++m_n;
        return t;
    }
    std::uint64_t landed() const { return m_n; }
    static constexpr std::uint64_t kOpsPerIteration = 50;

private:
    fs::path m_dir;
    int m_ranks;
    std::string m_clean, m_bad;
    std::uint64_t m_n = 0;
};

// Paces `n` calls of `fn` at `rate` per second (0: as fast as it goes).
template <class Fn>
void paced(std::uint64_t n, double rate, Fn&& fn) {
    const auto start = Clock::now();
    for (std::uint64_t i = 0; i < n; ++i) {
        fn();
        if (rate > 0)
            std::this_thread::sleep_until(start + std::chrono::nanoseconds(std::int64_t(1e9 * double(i + 1) / rate)));
    }
}

struct WatchThread {
    std::stop_source stop;
    std::mutex mutex;
    std::condition_variable cv;
    bool watching = false;
    std::optional<Clock::time_point> overflowAt;
    std::uint64_t files = 0;
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
                if (e.kind == dl::WatchEventKind::Progress && e.json["files_being_written"] == 0)
                    files = e.json["files"];
                cv.notify_all();
            });
        });
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return watching; });
    }
    template <class Pred>
    void waitUntil(Pred p) {
        std::unique_lock lock(mutex);
        cv.wait_for(lock, std::chrono::seconds(120), [&] { return p(); });
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

void BM_WatchOverflowLatency(benchmark::State& state) {
    const int ranks = int(state.range(0));
    const double rate = double(state.range(1));
    const std::uint64_t before = std::uint64_t(state.range(2));
    std::vector<double> latencies;
    std::mt19937 rng(7);
    double achieved = 0;
    for (auto _ : state) {
        Scratch s;
        RankWriter writer(s.root / "dump", ranks);
        WatchThread watch(s.root / "dump", s.root / "cache");
        const auto t0 = Clock::now();
        paced(before + rng() % std::uint64_t(ranks), rate, [&] { writer.land(false); });
        const Clock::time_point landed = writer.land(true);
        // Clean files keep landing while the watcher works, as the job goes on.
        std::uint64_t after = 0;
        const auto tAfter = Clock::now();
        while (true) {
            {
                std::lock_guard lock(watch.mutex);
                if (watch.overflowAt) break;
            }
            writer.land(false);
            ++after;
            if (rate > 0)
                std::this_thread::sleep_until(tAfter +
                                              std::chrono::nanoseconds(std::int64_t(1e9 * double(after) / rate)));
        }
        achieved = double(writer.landed()) / std::chrono::duration<double>(Clock::now() - t0).count();
        latencies.push_back(std::chrono::duration<double, std::milli>(*watch.overflowAt - landed).count());
    }
    state.counters["p50_ms"] = percentile(latencies, 0.5);
    state.counters["p99_ms"] = percentile(latencies, 0.99);
    state.counters["max_ms"] = percentile(latencies, 1.0);
    state.counters["files_per_s"] = achieved;
    state.counters["runs"] = double(latencies.size());
}
// ranks, target files/s (0: as fast as the writer goes), clean files before the overflow.
BENCHMARK(BM_WatchOverflowLatency)
    ->Args({64, 0, 1000})
    ->Args({64, 10000, 1000})
    ->Iterations(8)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_WatchIdleCpu(benchmark::State& state) {
    for (auto _ : state) {
        Scratch s;
        {
            RankWriter writer(s.root / "dump", 64);
            for (int i = 0; i < 5000; ++i) writer.land(false);
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
    for (auto _ : state) {
        Scratch s;
        RankWriter writer(s.root / "dump", 64);
        WatchThread watch(s.root / "dump", s.root / "cache");
        const double c0 = cpuSecondsSelf(), w0 = cpuSecondsThread();
        const auto t0 = Clock::now();
        for (const std::uint64_t mark : {n / 10, n / 2, n}) {
            while (writer.landed() < mark) writer.land(false);
            watch.waitUntil([&] { return watch.files >= mark; });
            state.counters["rss_mib_at_" + std::to_string(mark)] = rssMiB();
        }
        const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
        state.counters["watch_cpu_pct_while_writing"] =
            100 * ((cpuSecondsSelf() - c0) - (cpuSecondsThread() - w0)) / wall;
        state.counters["files_per_s"] = double(n) / wall;
    }
}
BENCHMARK(BM_WatchSoak)->Arg(20000)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

#pragma once
// What the watch benchmarks share (bench_watch.cpp: the watch following a live writer;
// bench_watch_index.cpp: the incremental index alone): a scratch folder, a fleet of writer threads
// emulating ranks that land small MindSpore .npy files, the watch on a thread of its own, and the
// process' CPU and resident size. Files go under $DUMPLENS_BENCH_DIR/watch (default /dev/shm when
// it exists, else /tmp).
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
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/io/npy_writer.h"
#include "core/watch/dump_watch.h"

namespace watch_bench {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

inline double cpuSecondsSelf() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}
inline double cpuSecondsThread() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}
inline double rssMiB() {
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        std::fclose(f);
    }
    return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

inline std::string npy(bool inf) {
    std::string payload, error;
    std::vector<float> v = {1, 2, 3, 4, 5, 6, 7, 8};
    if (inf) v[3] = std::numeric_limits<float>::infinity();
    dl::encodeFloats(v, dl::DType::Float16, payload, error);
    return dl::makeNpyHeader("<f2", {8}) + payload;
}

inline fs::path benchBase() {
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

inline double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, std::size_t(p * double(v.size() - 1) + 0.5))];
}

}  // namespace watch_bench

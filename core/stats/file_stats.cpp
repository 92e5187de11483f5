// computeFileStats: streams a file region through StatsAccumulator with pread.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tbb/task_arena.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "core/stats/stats_accumulator.h"
#include "core/util/parallel_for.h"

namespace dl {

namespace {

class Fd {
public:
    explicit Fd(int fd) : m_fd(fd) {}
    ~Fd() {
        if (m_fd >= 0) ::close(m_fd);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
};

// Reads [offset, offset+bytes) chunk by chunk into `acc`. Chunks that fit in L2 keep the second
// pass over the buffer (the kernel) out of main memory.
bool streamRegion(int fd, std::uint64_t offset, std::uint64_t bytes, std::size_t chunk, DType dtype, bool bigEndian,
                  StatsAccumulator& acc, std::string& error) {
    const std::size_t esize = dtypeSize(dtype);
    std::unique_ptr<std::uint8_t[]> buf(new (std::nothrow) std::uint8_t[chunk]);
    if (!buf) {
        error = "out of memory for a read buffer";
        return false;
    }
    std::uint64_t done = 0;
    while (done < bytes) {
        const std::size_t want = std::size_t(std::min<std::uint64_t>(chunk, bytes - done));
        std::size_t got = 0;
        while (got < want) {
            const ssize_t r = ::pread(fd, buf.get() + got, want - got, off_t(offset + done + got));
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) {
                error = std::string("read failed: ") + std::strerror(errno);
                return false;
            }
            if (r == 0) {
                error = "file ends at " + std::to_string(offset + done + got) + " bytes, header promises " +
                    std::to_string(offset + bytes) + " (it shrank while being read)";
                return false;
            }
            got += std::size_t(r);
        }
        acc.add(buf.get(), want / esize, dtype, bigEndian);
        done += want;
    }
    return true;
}

}  // namespace

bool computeFileStats(const char* path, std::uint64_t offset, std::uint64_t bytes, DType dtype, bool bigEndian,
                      TensorStats& stats, Log2Histogram& hist, std::string& error) {
    return computeFileStats(path, offset, bytes, dtype, bigEndian, stats, hist, error, FileStatsOptions{});
}

bool computeFileStats(const char* path, std::uint64_t offset, std::uint64_t bytes, DType dtype, bool bigEndian,
                      TensorStats& stats, Log2Histogram& hist, std::string& error, const FileStatsOptions& options) {
    const std::size_t esize = dtypeSize(dtype);
    if (esize == 0) {
        error = "no statistics for an unknown dtype";
        return false;
    }
    if (bytes % esize) {
        error = "region of " + std::to_string(bytes) + " bytes is not a whole number of " + std::to_string(esize) +
            "-byte elements";
        return false;
    }
    if (offset > UINT64_MAX - bytes) {
        error = "region end overflows";
        return false;
    }
    Fd fd(::open(path, O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        error = std::string("cannot open: ") + std::strerror(errno);
        return false;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
        error = std::string("cannot stat: ") + std::strerror(errno);
        return false;
    }
    const auto fileSize = std::uint64_t(st.st_size);
    if (offset + bytes > fileSize) {
        error =
            "file ends at " + std::to_string(fileSize) + " bytes, header promises " + std::to_string(offset + bytes);
        return false;
    }
    ::posix_fadvise(fd.get(), off_t(offset), off_t(bytes), POSIX_FADV_SEQUENTIAL);
    const std::size_t chunk = std::max(esize, options.chunkBytes / esize * esize);

    if (bytes <= options.parallelThreshold || options.maxThreads == 1) {
        StatsAccumulator acc;
        if (!streamRegion(fd.get(), offset, bytes, chunk, dtype, bigEndian, acc, error)) return false;
        stats = acc.stats();
        hist = acc.histogram();
        return true;
    }
    // Parts of a few chunks each, so threads balance; merged in file order (deterministic sums).
    const std::uint64_t perPart = (bytes + 4095) / 4096;  // at most ~4096 accumulators in flight
    const std::uint64_t part =
        std::max<std::uint64_t>(std::uint64_t(chunk) * 16, (perPart + chunk - 1) / chunk * chunk);
    const std::size_t nParts = std::size_t((bytes + part - 1) / part);
    std::vector<StatsAccumulator> accs(nParts);
    std::vector<std::string> errors(nParts);
    std::optional<tbb::task_arena> arena;
    if (options.maxThreads > 0) arena.emplace(options.maxThreads);
    parallelFor(
        std::size_t(0), nParts,
        [&](std::size_t i) {
            const std::uint64_t begin = i * part, len = std::min(part, bytes - begin);
            streamRegion(fd.get(), offset + begin, len, chunk, dtype, bigEndian, accs[i], errors[i]);
        },
        arena ? &*arena : nullptr);
    StatsAccumulator total;
    for (std::size_t i = 0; i < nParts; ++i) {
        if (!errors[i].empty()) {
            error = errors[i];
            return false;
        }
        total.merge(accs[i]);
    }
    stats = total.stats();
    hist = total.histogram();
    return true;
}

}  // namespace dl

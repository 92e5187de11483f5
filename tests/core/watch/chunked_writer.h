#pragma once
// A dump writer for the watch tests: lands the files of a finished dump into a watched folder
// one by one, in the order the job wrote them, each in two chunks with a pause between them (one
// open file, no rename: as MindSpore and CANN write). It says which files are complete: a file
// counts as complete right after its last byte is written, before it is closed, so an event seen
// "after complete" is never a close that came first.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/formats/mindspore/dump_file_name.h"
#include "tests/core/temp_dir.h"

namespace dltest {

struct Landing {
    std::filesystem::path source;
    std::string rel;  // where it lands under the watched folder
};

// The files of `dump` in execution order: configs, graphs and execution order first (a job
// writes them at start), then tensor files by their timestamp (the writer's clock), rank by rank
// or interleaved across ranks.
inline std::vector<Landing> executionOrder(const std::filesystem::path& dump, bool interleaveRanks) {
    struct Item {
        int phase;
        std::string rank;
        std::int64_t ts;
        Landing l;
    };
    std::vector<Item> items;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dump)) {
        if (!e.is_regular_file()) continue;
        const std::string rel = std::filesystem::relative(e.path(), dump).generic_string();
        dl::DumpFileName name;
        const bool tensor = dl::parseDumpFileName(e.path().filename().string(), name) && name.timestampUs > 0;
        const std::string rank = rel.substr(0, rel.find('/'));
        items.push_back({tensor ? 1 : 0, rank, tensor ? name.timestampUs : 0, {e.path(), rel}});
    }
    std::sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
        if (a.phase != b.phase) return a.phase < b.phase;
        if (interleaveRanks) return std::tie(a.ts, a.rank, a.l.rel) < std::tie(b.ts, b.rank, b.l.rel);
        return std::tie(a.rank, a.ts, a.l.rel) < std::tie(b.rank, b.ts, b.l.rel);
    });
    std::vector<Landing> out;
    for (auto& i : items) out.push_back(std::move(i.l));
    return out;
}

class ChunkedWriter {
public:
    // Writes `bytes` to root/rel in two chunks, `pause` apart, through one open file.
    void land(const std::filesystem::path& root, const std::string& rel, const std::string& bytes,
              std::chrono::milliseconds pause) {
        const std::filesystem::path p = root / rel;
        std::filesystem::create_directories(p.parent_path());
        const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) return;
        const std::size_t half = bytes.size() / 2;
        writeAll(fd, bytes.data(), half);
        if (pause.count()) std::this_thread::sleep_for(pause);
        writeAll(fd, bytes.data() + half, bytes.size() - half);
        {
            std::lock_guard lock(m_mutex);
            m_complete.insert(rel);
        }
        ::close(fd);
    }
    void landAll(const std::filesystem::path& root, const std::vector<Landing>& files,
                 std::chrono::milliseconds pause) {
        for (const Landing& f : files) land(root, f.rel, readText(f.source), pause);
    }
    bool complete(const std::string& rel) const {
        std::lock_guard lock(m_mutex);
        return m_complete.count(rel) != 0;
    }
    std::size_t completeCount() const {
        std::lock_guard lock(m_mutex);
        return m_complete.size();
    }

private:
    static void writeAll(int fd, const char* p, std::size_t n) {
        while (n) {
            const ssize_t w = ::write(fd, p, n);
            if (w <= 0) return;
            p += w;
            n -= std::size_t(w);
        }
    }
    mutable std::mutex m_mutex;
    std::set<std::string> m_complete;
};

}  // namespace dltest

// WatchOptions::onSnapshot, the index a viewer (the app) shows while the watch runs: handed only
// after files changed it, growing with them, and, once every file landed, the index `index` gives
// for the finished folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/index/dump_indexer.h"
#include "core/model/dump_index.h"
#include "tests/core/temp_dir.h"
#include "tests/core/watch/chunked_writer.h"
#include "tests/core/watch/two_rank_dump.h"
#include "tests/core/watch/watch_session.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// What tells two indexes of the same files apart: every op by rank, iteration and name, with its
// tensor count.
std::set<std::tuple<std::uint32_t, std::uint32_t, std::string, std::uint32_t>> opsOf(const dl::DumpIndex& ix) {
    std::set<std::tuple<std::uint32_t, std::uint32_t, std::string, std::uint32_t>> out;
    for (const dl::OpRecord& o : ix.ops) out.emplace(o.rank, o.iteration, ix.strings.str(o.name), o.tensorCount);
    return out;
}

TEST(WatchSnapshot, GrowsWithTheFilesAndEndsOnTheFinishedIndex) {
    dltest::TempDir tmp;
    const fs::path dir = tmp.path / "dump";
    fs::create_directories(dir);
    std::mutex mutex;
    std::vector<std::shared_ptr<const dl::DumpIndex>> snapshots;
    dl::WatchOptions o;
    o.dir = dir.string();
    o.settleMs = 100;
    o.cacheDir = (tmp.path / "cache").string();
    o.progressIntervalMs = 0;
    o.onSnapshot = [&](std::shared_ptr<const dl::DumpIndex> ix) {
        std::lock_guard lock(mutex);
        snapshots.push_back(std::move(ix));
    };
    dltest::WatchSession watch(o);
    ASSERT_TRUE(watch.waitForKind(dl::WatchEventKind::Watching));
    {
        std::lock_guard lock(mutex);
        EXPECT_TRUE(snapshots.empty());  // nothing landed: nothing to show
    }
    dltest::ChunkedWriter writer;
    std::size_t landed = 0;
    for (int rank : {0, 1}) {
        for (const dltest::DumpFile& f :
             dltest::rankFiles(rank, rank ? dltest::kLateRankBadIteration : dltest::kEarlyRankBadIteration)) {
            writer.land(dir, f.rel, f.bytes, 0ms);
            ++landed;
        }
        ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
            return e.kind == dl::WatchEventKind::Progress && e.json["files"] == landed &&
                e.json["files_being_written"] == 0;
        }));
    }
    watch.stop();  // hands the last change, if the interval held it back
    std::lock_guard lock(mutex);
    ASSERT_FALSE(snapshots.empty());
    for (std::size_t i = 1; i < snapshots.size(); ++i)
        EXPECT_GE(snapshots[i]->tensors.size(), snapshots[i - 1]->tensors.size());
    // Rank 0 alone was seen complete before rank 1's first file was written.
    EXPECT_TRUE(std::any_of(snapshots.begin(), snapshots.end(), [](const auto& s) {
        return !s->ops.empty() &&
            std::all_of(s->ops.begin(), s->ops.end(), [](const auto& op) { return op.rank == 0; });
    }));
    dl::IndexOptions io;
    io.useCache = false;
    dl::DumpIndex finished;
    dl::IndexReport report;
    std::string error;
    ASSERT_TRUE(dl::indexDump(dir.string(), io, finished, report, error)) << error;
    const dl::DumpIndex& last = *snapshots.back();
    EXPECT_EQ(last.tensors.size(), finished.tensors.size());
    EXPECT_EQ(opsOf(last), opsOf(finished));
    EXPECT_EQ(last.root, fs::weakly_canonical(dir).string());
}

}  // namespace

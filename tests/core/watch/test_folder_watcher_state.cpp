// What the folder watcher keeps per file with inotify: nothing once a file is handed on (a long
// run lands millions); a later write brings the file back, and the removal of a file or of a
// whole folder it forgot is still said, and drops those files from the index.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include "core/io/npy_writer.h"
#include "core/watch/folder_watcher.h"
#include "core/watch/incremental_index.h"
#include "tests/core/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string npyBytes(float first) {
    std::string payload, error;
    EXPECT_TRUE(dl::encodeFloats({first, 2, 3, 4}, dl::DType::Float16, payload, error)) << error;
    return dl::makeNpyHeader("<f2", {4}) + payload;
}

std::string rel(int rank, int op) {
    return "rank_" + std::to_string(rank) + "/Net/0/0/Add.Add-op" + std::to_string(op) + ".0.0." +
        std::to_string(1700000000000000LL + op) + ".output.0.DefaultFormat.npy";
}

// Polls until `pred` holds for what was gathered (a generous ceiling: never a timing assertion).
template <class Pred>
bool pollUntil(dl::FolderWatcher& w, dl::WatchChanges& all, Pred pred) {
    for (int i = 0; i < 600 && !pred(); ++i) {
        dl::WatchChanges ch = w.poll(50);
        all.complete.insert(all.complete.end(), ch.complete.begin(), ch.complete.end());
        all.removed.insert(all.removed.end(), ch.removed.begin(), ch.removed.end());
        all.removedFolders.insert(all.removedFolders.end(), ch.removedFolders.begin(), ch.removedFolders.end());
    }
    return pred();
}

TEST(FolderWatcherState, HandedOnFilesAreForgottenAndTheirRemovalStillSaid) {
    dltest::TempDir tmp;
    const fs::path root = tmp.path / "dump";
    fs::create_directories(root);
    dl::FolderWatcher w(root.string(), {50, -1, true});
    dl::WatchChanges all;
    all.appeared = w.poll(0).appeared;
    ASSERT_TRUE(all.appeared);
    if (!w.usingInotify()) GTEST_SKIP() << "no inotify here: a rescan keeps every file by design";
    for (int rank = 0; rank < 2; ++rank)
        for (int op = 0; op < 5; ++op) dltest::writeFile(root / rel(rank, op), npyBytes(1));
    ASSERT_TRUE(pollUntil(w, all, [&] { return all.complete.size() == 10; }));
    EXPECT_EQ(w.trackedFiles(), 0u);  // nothing kept per file once handed on
    EXPECT_EQ(w.incompleteFiles(), 0u);

    dl::IncrementalIndex idx(fs::absolute(root).string(), "", 1);
    idx.update(all.complete, {});
    ASSERT_EQ(idx.tensors(), 10u);

    // Rewritten: it comes back and is handed on again, with its new size and stamp.
    const std::string again = rel(0, 1);
    dltest::writeFile(root / again, npyBytes(5));
    all = {};
    ASSERT_TRUE(pollUntil(w, all, [&] { return all.complete.size() == 1; }));
    EXPECT_EQ(all.complete.front().rel, again);
    EXPECT_EQ(w.trackedFiles(), 0u);

    // A file removed, then a whole rank folder: said although forgotten.
    fs::remove(root / rel(0, 0));
    fs::remove_all(root / "rank_1");
    all = {};
    ASSERT_TRUE(pollUntil(w, all, [&] {
        return std::set<std::string>(all.removed.begin(), all.removed.end()).count(rel(0, 0)) &&
            std::set<std::string>(all.removedFolders.begin(), all.removedFolders.end()).count("rank_1");
    }));
    idx.update({}, all.removed, all.removedFolders);
    EXPECT_EQ(idx.files(), 4u);  // rank_0's ops 1-4
    EXPECT_EQ(idx.tensors(), 4u);
    EXPECT_EQ(idx.ranks(), std::set<std::uint32_t>{0});
}

// The same file handed on twice unchanged (it settled while open, then was closed) does not
// rebuild its shard again.
TEST(FolderWatcherState, AFileHandedOnAgainUnchangedIsPassedOver) {
    dltest::TempDir tmp;
    const fs::path root = tmp.path / "dump";
    dltest::writeFile(root / rel(0, 0), npyBytes(1));
    dl::IncrementalIndex idx(fs::absolute(root).string(), "", 1);
    dl::FolderWatcher w(root.string(), {50, -1, true});
    dl::WatchChanges all;
    ASSERT_TRUE(pollUntil(w, all, [&] { return all.complete.size() == 1; }));
    idx.update(all.complete, {});
    EXPECT_EQ(idx.shardBuilds(), 1u);
    idx.update(all.complete, {});
    EXPECT_EQ(idx.shardBuilds(), 1u);
    EXPECT_EQ(idx.tensors(), 1u);
}

// Names made in the dump that are no files to follow: a dangling symbolic link, one to a folder, a
// FIFO. Their creation is heard of; none is handed on, and none is left waiting as "being written"
// (which would keep the watch polling and say it is behind for ever). A file made after them is
// handed on as usual.
TEST(FolderWatcherState, LinksAndFifosAreNotLeftWaiting) {
    dltest::TempDir tmp;
    const fs::path root = tmp.path / "dump";
    fs::create_directories(root / "rank_0/Net/0/0");
    dl::FolderWatcher w(root.string(), {50, -1, true});
    dl::WatchChanges all;
    ASSERT_TRUE(w.poll(0).appeared);
    fs::create_symlink("no_such_iteration", root / "rank_0/latest");
    fs::create_directory_symlink("Net/0/0", root / "rank_0/current");
    ASSERT_EQ(::mkfifo((root / "rank_0/control").c_str(), 0644), 0);
    dltest::writeFile(root / rel(0, 0), npyBytes(1));
    ASSERT_TRUE(pollUntil(w, all, [&] { return !all.complete.empty() && w.incompleteFiles() == 0; }));
    ASSERT_EQ(all.complete.size(), 1u);
    EXPECT_EQ(all.complete.front().rel, rel(0, 0));
    EXPECT_EQ(w.incompleteFiles(), 0u);
    EXPECT_EQ(w.oldestIncomplete().count(), 0);
}

}  // namespace

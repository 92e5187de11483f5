// Indexing dumps a bad day leaves behind (a full disk empties tensor files, many at once) under the
// default thread count: every run succeeds with the same warnings as a one-thread run.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "core/demo/demo_dumps.h"
#include "core/index/dump_indexer.h"
#include "core/io/npy_writer.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

std::vector<std::pair<std::string, std::string>> warningsOf(const DumpIndex& idx) {
    std::vector<std::pair<std::string, std::string>> w;
    for (const auto& x : idx.warnings) w.emplace_back(x.path, x.reason);
    return w;
}

DumpIndex indexOnce(const fs::path& root, unsigned threads) {
    IndexOptions o;
    o.useCache = false;
    o.threads = threads;
    DumpIndex idx;
    IndexReport report;
    std::string error;
    EXPECT_TRUE(indexDump(root.string(), o, idx, report, error)) << error;
    return idx;
}

// A small demo dump whose rank 3, iteration 1 tensor files are all truncated to 0 bytes.
class EmptiedDemo : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir = new dltest::TempDir("dumplens_hostile_");
        demo::DemoOptions o;
        o.iterations = 3;
        o.overflowIteration = 2;
        o.decoyIteration = 1;
        demo::DemoVariantInfo info;
        std::string error;
        ASSERT_TRUE(demo::writeDemoVariant(dir->path.string(), o, info, error)) << error;
        emptied = new std::set<std::string>;
        for (const auto& e : fs::recursive_directory_iterator(dir->path)) {
            if (!e.is_regular_file() || e.path().extension() != ".npy") continue;
            const std::string rel = fs::relative(e.path(), dir->path).generic_string();
            if (rel.starts_with("rank_3/") && rel.find("/1/") != std::string::npos) {
                fs::resize_file(e.path(), 0);
                emptied->insert(rel);
            }
        }
    }
    static void TearDownTestSuite() {
        delete emptied;
        delete dir;
    }
    static dltest::TempDir* dir;
    static std::set<std::string>* emptied;
};
dltest::TempDir* EmptiedDemo::dir = nullptr;
std::set<std::string>* EmptiedDemo::emptied = nullptr;

TEST_F(EmptiedDemo, EveryRunWarnsAboutEachEmptyFileInOneThreadOrder) {
    ASSERT_GT(emptied->size(), 20u);
    const DumpIndex reference = indexOnce(dir->path, 1);
    const auto expected = warningsOf(reference);
    std::set<std::string> named;
    for (const auto& [path, reason] : expected)
        if (emptied->count(path)) {
            EXPECT_NE(reason.find("0 bytes"), std::string::npos) << path << ": " << reason;
            named.insert(path);
        }
    EXPECT_EQ(named, *emptied);
    for (int run = 0; run < 20; ++run) {
        const DumpIndex idx = indexOnce(dir->path, 0);
        ASSERT_EQ(warningsOf(idx), expected) << "run " << run;
        ASSERT_EQ(idx.tensors.size(), reference.tensors.size());
    }
}

// Thousands of unreadable files in one rank: no race on the shared warning list.
TEST(HostileIndex, ThousandsOfEmptyNpyFilesGiveOneWarningEach) {
    dltest::TempDir dir("dumplens_hostile_many_");
    const fs::path it = dir.path / "rank_0/Net/0/0";
    fs::create_directories(it);
    constexpr int kFiles = 3000;
    for (int i = 0; i < kFiles; ++i)
        dltest::writeFile(it / ("Add.Add-op" + std::to_string(i) + "." + std::to_string(i) + ".0.17000000" +
                                std::to_string(10000 + i) + ".output.0.DefaultFormat.npy"),
                          "");
    const auto expected = warningsOf(indexOnce(dir.path, 1));
    std::size_t empties = 0;
    for (const auto& [path, reason] : expected)
        empties += path.ends_with(".npy") && reason.find("0 bytes") != std::string::npos;
    EXPECT_EQ(empties, std::size_t(kFiles));
    for (int run = 0; run < 3; ++run) ASSERT_EQ(warningsOf(indexOnce(dir.path, 0)), expected) << "run " << run;
}

}  // namespace


// Indexing dumps a bad day leaves behind (a full disk empties tensor files, many at once) under the
// default thread count: every run succeeds with the same warnings as a one-thread run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "core/demo/demo_dumps.h"
#include "core/index/dump_indexer.h"
#include "core/io/npy_writer.h"
#include "tests/core/cli_run.h"
#include "tests/core/index_uncached.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

using dltest::CliRun;
using dltest::runCli;

std::vector<std::pair<std::string, std::string>> warningsOf(const DumpIndex& idx) {
    std::vector<std::pair<std::string, std::string>> w;
    for (const auto& x : idx.warnings) w.emplace_back(x.path, x.reason);
    return w;
}

DumpIndex indexOnce(const fs::path& root, unsigned threads) { return dltest::indexUncached(root.string(), threads); }

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
        dltest::writeFile(it /
                              ("Add.Add-op" + std::to_string(i) + "." + std::to_string(i) + ".0.17000000" +
                               std::to_string(10000 + i) + ".output.0.DefaultFormat.npy"),
                          "");
    const auto expected = warningsOf(indexOnce(dir.path, 1));
    std::size_t empties = 0;
    for (const auto& [path, reason] : expected)
        empties += path.ends_with(".npy") && reason.find("0 bytes") != std::string::npos;
    EXPECT_EQ(empties, std::size_t(kFiles));
    for (int run = 0; run < 2; ++run) ASSERT_EQ(warningsOf(indexOnce(dir.path, 0)), expected) << "run " << run;
}

}  // namespace

// FIFOs given as arguments, inside a dump or in place of a cache shard: never opened, each named.
TEST(HostileIndex, FifosAreRefusedOrSkippedNeverWaitedOn) {
    dltest::TempDir dir("dumplens_hostile_fifo_");
    const fs::path npy = dir.path / "t.npy", dlx = dir.path / "i.dlx";
    ASSERT_EQ(::mkfifo(npy.c_str(), 0600), 0);
    ASSERT_EQ(::mkfifo(dlx.c_str(), 0600), 0);
    for (const fs::path& f : {npy, dlx}) {
        for (const char* cmd : {"analyze ", "inspect "}) {
            const CliRun r = runCli(std::string(cmd) + f.string());
            EXPECT_TRUE(r.code == 1 || r.code == 2) << cmd << f << " exited " << r.code << ": " << r.output;
            EXPECT_NE(r.output.find(f.filename().string()), std::string::npos) << r.output;
        }
    }
    // Inside a dump: skipped with a warning naming it; the real tensor next to it is indexed.
    const fs::path dump = dir.path / "dump", it = dump / "rank_0/Net/0/0";
    fs::create_directories(it);
    const fs::path good = it / "Add.Add-op1.7.2.1700000000000100.output.0.DefaultFormat.npy";
    std::string bytes, error;
    ASSERT_TRUE(encodeFloats({1, 2, 3}, DType::Float16, bytes, error)) << error;
    ASSERT_TRUE(writeNpyFile(good.string(), DType::Float16, {3}, bytes, error)) << error;
    const fs::path fifo = it / "Add.Add-op2.8.2.1700000000000200.output.0.DefaultFormat.npy";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const fs::path cache = dir.path / "cache";
    CliRun r = runCli("index --json --cache-dir " + cache.string() + " " + dump.string());
    ASSERT_NE(r.code, 124) << "hung: " << r.output;
    EXPECT_NE(r.output.find(fifo.filename().string()), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("not a regular file (a FIFO)"), std::string::npos) << r.output;
    // A FIFO, then a folder, where the cache shard is: rebuilt with a note, no hang, no abort.
    std::vector<fs::path> shards;
    for (const auto& e : fs::directory_iterator(cache / "shards")) shards.push_back(e.path());
    ASSERT_EQ(shards.size(), 1u);
    fs::remove(shards[0]);
    ASSERT_EQ(::mkfifo(shards[0].c_str(), 0600), 0);
    r = runCli("index --cache-dir " + cache.string() + " " + dump.string());
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("FIFO"), std::string::npos) << r.output;
    fs::remove(shards[0]);
    fs::create_directories(shards[0] / "x");
    r = runCli("index --cache-dir " + cache.string() + " " + dump.string());
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("folder"), std::string::npos) << r.output;
}

// Device links and a socket inside a dump (what a copied /dev or a live process can leave): never
// opened, each skipped with a warning naming it and its kind; the real tensor beside them is read.
TEST(HostileIndex, DeviceLinksAndSocketsAreSkippedWithAWarningNamingThem) {
    dltest::TempDir dir("dumplens_hostile_dev_");
    const fs::path it = dir.path / "rank_0/Net/0/0";
    fs::create_directories(it);
    std::string bytes, error;
    ASSERT_TRUE(encodeFloats({1, 2, 3}, DType::Float16, bytes, error)) << error;
    ASSERT_TRUE(writeNpyFile((it / "Add.Add-op1.7.2.1700000000000100.output.0.DefaultFormat.npy").string(),
                             DType::Float16, {3}, bytes, error))
        << error;
    const std::string zero = "Mul.Mul-op2.8.2.1700000000000200.output.0.DefaultFormat.npy";
    const std::string null = "Sub.Sub-op3.9.2.1700000000000300.output.0.DefaultFormat.npy";
    fs::create_symlink("/dev/zero", it / zero);  // endless: reading it would never finish
    fs::create_symlink("/dev/null", it / null);
    const fs::path sock = it / "statistic.csv";
    const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(s, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    ASSERT_LT(sock.string().size(), sizeof addr.sun_path);
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
    ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    IndexOptions o;
    o.useCache = false;
    DumpIndex idx;
    IndexReport report;
    ASSERT_TRUE(indexDump(dir.path.string(), o, idx, report, error)) << error;
    ::close(s);
    std::map<std::string, std::string> warned;
    for (const IndexWarning& w : idx.warnings) warned[fs::path(w.path).filename().string()] = w.reason;
    EXPECT_EQ(warned[zero], "not a regular file (a character device), skipped");
    EXPECT_EQ(warned[null], "not a regular file (a character device), skipped");
    EXPECT_EQ(warned["statistic.csv"], "not a regular file (a socket), skipped");
    ASSERT_EQ(idx.ops.size(), 1u);
    EXPECT_EQ(idx.strings.str(idx.ops[0].name), "Add-op1");
    EXPECT_EQ(idx.stats(idx.tensors[idx.ops[0].firstTensor]).max, 3.0);
}

namespace {
std::vector<std::string> treeOf(const fs::path& root) {
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(root)) files.push_back(fs::relative(e.path(), root).string());
    std::sort(files.begin(), files.end());
    return files;
}
}  // namespace

// Relative cache folders named from inside the dump (flag or environment): the cache is disabled
// with a note, and nothing is written into the dump.
TEST(HostileIndex, RelativeCacheFolderInsideTheDumpWritesNothing) {
    dltest::TempDir dir("dumplens_hostile_rel_");
    const fs::path dump = dir.path / "dump", it = dump / "rank_0/Net/0/0";
    fs::create_directories(it);
    std::string bytes, error;
    ASSERT_TRUE(encodeFloats({1, 2, 3}, DType::Float16, bytes, error)) << error;
    ASSERT_TRUE(writeNpyFile((it / "Add.Add-op1.7.2.1700000000000100.output.0.DefaultFormat.npy").string(),
                             DType::Float16, {3}, bytes, error))
        << error;
    const auto before = treeOf(dump);
    const std::string cd = "cd " + dump.string() + " && ";
    for (const std::string& cmd :
         {cd + "env -u DUMPLENS_CACHE_DIR " + DUMPLENS_CLI_PATH + " index . --cache-dir .dlcache",
          cd + "env -u DUMPLENS_CACHE_DIR " + DUMPLENS_CLI_PATH + " index . --cache-dir rank_0/sub/../.c",
          cd + "DUMPLENS_CACHE_DIR=.dlcache " + DUMPLENS_CLI_PATH + " index .",
          "cd " + it.string() + " && DUMPLENS_CACHE_DIR=../x " + DUMPLENS_CLI_PATH + " index " + dump.string()}) {
        FILE* p = ::popen(("timeout 30 sh -c '" + cmd + "' 2>&1").c_str(), "r");
        ASSERT_NE(p, nullptr);
        std::string out;
        char buf[4096];
        while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
        EXPECT_EQ(::pclose(p), 0) << cmd << ": " << out;
        EXPECT_NE(out.find("cache folder lies inside the dump"), std::string::npos) << cmd << ": " << out;
        EXPECT_EQ(treeOf(dump), before) << cmd;
    }
}

// A tensor rewritten with the same size whose mtime is then restored (touch -r): the cache sees
// the changed ctime and re-reads it instead of answering with the old figures.
TEST(HostileIndex, SameSizeSameMtimeRewriteIsReindexed) {
    dltest::TempDir dir("dumplens_hostile_stamp_");
    const fs::path dump = dir.path / "dump", cache = dir.path / "cache";
    const fs::path file = dump / "rank_0/Net/0/0/Add.Add-op1.7.2.1700000000000100.output.0.DefaultFormat.npy";
    fs::create_directories(file.parent_path());
    auto write = [&](const std::vector<float>& v) {
        std::string bytes, error;
        ASSERT_TRUE(encodeFloats(v, DType::Float16, bytes, error)) << error;
        ASSERT_TRUE(writeNpyFile(file.string(), DType::Float16, {std::int64_t(v.size())}, bytes, error)) << error;
    };
    auto maxOf = [&](std::size_t* fromCache) {
        IndexOptions o;
        o.cacheDir = cache.string();
        DumpIndex idx;
        IndexReport report;
        std::string error;
        EXPECT_TRUE(indexDump(dump.string(), o, idx, report, error)) << error;
        *fromCache = report.shardsFromCache;
        EXPECT_EQ(idx.tensors.size(), 1u);
        return idx.tensors.empty() ? -1.0 : idx.stats(idx.tensors[0]).max;
    };
    write({1, 2, 3});
    struct stat before {};
    ASSERT_EQ(::stat(file.c_str(), &before), 0);
    std::size_t fromCache = 0;
    EXPECT_EQ(maxOf(&fromCache), 3.0);
    EXPECT_EQ(maxOf(&fromCache), 3.0);
    EXPECT_EQ(fromCache, 1u);  // unchanged: reopened from the cache
    write({7, 8, 9});
    struct stat after {};
    // Restore the mtime; repeat until the kernel's coarse clock has moved the ctime on.
    do {
        const timespec times[2] = {before.st_atim, before.st_mtim};
        ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
        ASSERT_EQ(::stat(file.c_str(), &after), 0);
    } while (after.st_ctim.tv_sec == before.st_ctim.tv_sec && after.st_ctim.tv_nsec == before.st_ctim.tv_nsec);
    ASSERT_EQ(after.st_size, before.st_size);
    ASSERT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    EXPECT_EQ(maxOf(&fromCache), 9.0);
    EXPECT_EQ(fromCache, 0u);
}

// A writer killed during a cache write leaves "<shard>.tmp<n>.<pid>": the next write removes it
// once that process is gone, and leaves a live writer's file alone.
TEST(HostileIndex, StaleCacheTemporariesOfDeadWritersAreRemoved) {
    dltest::TempDir dir("dumplens_hostile_tmp_");
    const fs::path dump = dir.path / "dump", cache = dir.path / "cache";
    const fs::path it = dump / "rank_0/Net/0/0";
    fs::create_directories(it);
    auto writeTensor = [&](const std::string& name) {
        std::string bytes, error;
        ASSERT_TRUE(encodeFloats({1, 2, 3}, DType::Float16, bytes, error)) << error;
        ASSERT_TRUE(writeNpyFile((it / name).string(), DType::Float16, {3}, bytes, error)) << error;
    };
    writeTensor("Add.Add-op1.7.2.1700000000000100.output.0.DefaultFormat.npy");
    IndexOptions o;
    o.cacheDir = cache.string();
    DumpIndex idx;
    IndexReport report;
    std::string error;
    ASSERT_TRUE(indexDump(dump.string(), o, idx, report, error)) << error;
    std::vector<fs::path> shards;
    for (const auto& e : fs::directory_iterator(cache / "shards")) shards.push_back(e.path());
    ASSERT_EQ(shards.size(), 1u);
    const pid_t dead = ::fork();
    if (dead == 0) ::_exit(0);
    ASSERT_GT(dead, 0);
    ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
    const fs::path stale = shards[0].string() + ".tmp123." + std::to_string(dead);
    const fs::path live = shards[0].string() + ".tmp456." + std::to_string(::getpid());
    dltest::writeFile(stale, "partial");
    dltest::writeFile(live, "partial");
    writeTensor("Add.Add-op2.8.2.1700000000000200.output.0.DefaultFormat.npy");  // the shard changes: rewritten
    IndexReport again;
    ASSERT_TRUE(indexDump(dump.string(), o, idx, again, error)) << error;
    EXPECT_EQ(again.shardsIndexed, 1u);
    EXPECT_FALSE(fs::exists(stale));
    EXPECT_TRUE(fs::exists(live));
}

// Names and headers a user's terminal must not be at the mercy of: an escape sequence in a file
// name is printed as \x1b, a 10 KB descr is cut in its warning.
TEST(HostileIndex, WarningsShowControlBytesEscapedAndLongDescrsCut) {
    dltest::TempDir dir("dumplens_hostile_names_");
    const fs::path it = dir.path / "dump/rank_0/Net/0/0";
    fs::create_directories(it);
    std::string bytes, error;
    ASSERT_TRUE(encodeFloats({1, 2, 3}, DType::Float16, bytes, error)) << error;
    ASSERT_TRUE(writeNpyFile((it / "Add.Add-op1.7.2.1700000000000100.output.0.DefaultFormat.npy").string(),
                             DType::Float16, {3}, bytes, error))
        << error;
    dltest::writeFile(it / "evil\x1b[2J.bin", "xx");
    // A v1 npy header whose descr is 10,000 'x'.
    std::string header = "{'descr': '" + std::string(10000, 'x') + "', 'fortran_order': False, 'shape': (1,), }";
    header.resize((header.size() + 11) / 64 * 64 + 64 - 11, ' ');
    header += '\n';
    std::string npy = std::string("\x93NUMPY\x02\x00", 8);
    for (int k = 0; k < 4; ++k) npy += char((header.size() >> (8 * k)) & 0xff);
    dltest::writeFile(it / "Mul.Mul-op2.8.2.1700000000000200.output.0.DefaultFormat.npy", npy + header + "ab");
    const CliRun r = runCli("index --no-cache " + (dir.path / "dump").string());
    EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("evil\\x1b[2J.bin"), std::string::npos) << r.output;
    bool cut = false;
    std::size_t longest = 0;
    std::size_t start = 0;
    for (std::size_t nl; (nl = r.output.find('\n', start)) != std::string::npos; start = nl + 1) {
        const std::string line = r.output.substr(start, nl - start);
        longest = std::max(longest, line.size());
        cut |= line.find("Mul-op2") != std::string::npos && line.find("(10000 bytes)") != std::string::npos;
    }
    EXPECT_TRUE(cut) << r.output;
    EXPECT_LT(longest, 400u);
}

// Crafted index files (.dlx and cache shards) whose sections declare lengths far beyond the bytes
// they hold: a clear error naming the file, quickly, with little memory; never an abort.
// The files are built here: a body laid out as index_serializer writes it, in a zstd frame of raw
// blocks (the frame format needs no compressor), behind the DLINDEX header.
#include <gtest/gtest.h>
#include <sys/wait.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/index/dump_indexer.h"
#include "core/index/index_file.h"
#include "core/index/index_serializer.h"
#include "tests/core/peak_memory.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

using Bytes = std::vector<std::uint8_t>;

template <class T> void put(Bytes& b, T v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof v);
}

// A zstd frame of raw blocks declaring `contentSize` (which may exceed the bytes it holds).
Bytes zstdRawFrame(const Bytes& body, std::uint64_t contentSize) {
    Bytes f;
    put<std::uint32_t>(f, 0xFD2FB528u);
    f.push_back(0xE0);   // 8-byte content size, single segment, no checksum, no dictionary
    put<std::uint64_t>(f, contentSize);
    std::size_t at = 0;
    do {
        const std::size_t n = std::min<std::size_t>(body.size() - at, 1u << 17);
        const std::uint32_t last = at + n == body.size() ? 1 : 0;
        const std::uint32_t header = last | (0u << 1) | std::uint32_t(n) << 3;
        f.push_back(std::uint8_t(header));
        f.push_back(std::uint8_t(header >> 8));
        f.push_back(std::uint8_t(header >> 16));
        f.insert(f.end(), body.begin() + std::ptrdiff_t(at), body.begin() + std::ptrdiff_t(at + n));
        at += n;
    } while (at < body.size());
    return f;
}

Bytes indexFile(const Bytes& body, std::uint64_t declaredSize) {
    const Bytes frame = zstdRawFrame(body, declaredSize);
    Bytes out = {'D', 'L', 'I', 'N', 'D', 'E', 'X', '\x1a'};
    put<std::uint32_t>(out, kIndexFormatVersion);
    put<std::uint32_t>(out, 0);
    put<std::uint64_t>(out, declaredSize);
    put<std::uint64_t>(out, frame.size());
    put<std::uint64_t>(out, XXH64(frame.data(), frame.size(), 0));
    out.insert(out.end(), frame.begin(), frame.end());
    return out;
}

// The sections of an index body, in order; `huge` is the one whose length field lies.
enum Section { Root, Blob, Offsets, Ranks, Ops, Tensors, Dims, Hist, Overflows, Wide, Warnings, WarningPath, Meta };
const char* kSectionNames[] = {"root", "blob", "offsets", "ranks", "ops", "tensors", "dims", "hist",
                               "overflows", "wide", "warnings", "warningPath", "meta"};

Bytes bodyLyingAt(Section huge, std::uint64_t length) {
    Bytes b;
    put(b, FolderFingerprint{});
    auto len = [&](Section s, std::uint64_t honest) {
        put<std::uint64_t>(b, s == huge ? length : honest);
        return s == huge;
    };
    if (len(Root, 0) || len(Blob, 0)) return b;
    if (len(Offsets, 2)) return b;
    put<std::uint32_t>(b, 0);
    put<std::uint32_t>(b, 0);
    for (Section s : {Ranks, Ops, Tensors, Dims, Hist, Overflows, Wide})
        if (len(s, 0)) return b;
    if (len(Warnings, 1) || len(WarningPath, 0)) return b;
    len(Meta, 0);
    return b;
}

using dltest::maxRssKb;

}  // namespace

// Each section in turn claims 3 GB and 32 GB in a file of ~100 bytes whose header and zstd frame
// claim 64 GB: refused with the file named, and peak memory barely moves.
TEST(HostileDlx, HugeDeclaredLengthsAreRefusedWithLittleMemory) {
    dltest::TempDir dir;
    const long before = maxRssKb();
    for (int s = Root; s <= Meta; ++s) {
        for (std::uint64_t length : {std::uint64_t(3) << 30, std::uint64_t(32) << 30}) {
            const Bytes file = indexFile(bodyLyingAt(Section(s), length), std::uint64_t(64) << 30);
            EXPECT_LT(file.size(), 200u);
            const fs::path p = dir.path / (std::string(kSectionNames[s]) + ".dlx");
            dltest::writeFile(p, file);
            DumpIndex idx;
            IndexReport report;
            std::string error;
            EXPECT_FALSE(loadIndexFile(p.string(), idx, report, error)) << kSectionNames[s];
            EXPECT_NE(error.find(p.string()), std::string::npos) << error;
            EXPECT_NE(error.find("inconsistent"), std::string::npos) << kSectionNames[s] << ": " << error;
        }
    }
    const long grownKb = maxRssKb() - before;
    std::printf("peak RSS grew by %ld KiB over 26 crafted files\n", grownKb);
    EXPECT_LT(grownKb, 200 * 1024) << "peak memory grew by " << grownKb << " KiB";
}

// The same files where a cache shard should be: the index is rebuilt with a note, not aborted.
TEST(HostileDlx, LyingCacheShardIsRebuilt) {
    dltest::TempDir dir;
    const fs::path dump = dir.path / "dump", cache = dir.path / "cache";
    dltest::writeFile(dump / "rank_0/Net/0/0/statistic.csv",
                      "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,"
                      "Min Value,Avg Value,Count,Negative Zero Count,Positive Zero Count,NaN Count,Negative Inf Count,"
                      "Positive Inf Count,Zero Count\n"
                      "Add,Add-op1,7,2,1700000000000100,output,0,8,float16,\"(4)\",3,1,2,4,0,4,0,0,0,0\n");
    IndexOptions o;
    o.cacheDir = cache.string();
    DumpIndex clean;
    IndexReport report;
    std::string error;
    ASSERT_TRUE(indexDump(dump.string(), o, clean, report, error)) << error;
    std::vector<fs::path> shards;
    for (const auto& e : fs::directory_iterator(cache / "shards")) shards.push_back(e.path());
    ASSERT_EQ(shards.size(), 1u);
    const long before = maxRssKb();
    for (int s = Root; s <= Meta; ++s) {
        dltest::writeFile(shards[0], indexFile(bodyLyingAt(Section(s), std::uint64_t(32) << 30), std::uint64_t(64) << 30));
        DumpIndex idx;
        IndexReport r2;
        ASSERT_TRUE(indexDump(dump.string(), o, idx, r2, error)) << error;
        EXPECT_EQ(r2.shardsFromCache, 0u);
        ASSERT_EQ(r2.cacheNotes.size(), 1u) << kSectionNames[s];
        EXPECT_NE(r2.cacheNotes[0].find("rebuilt"), std::string::npos) << r2.cacheNotes[0];
        EXPECT_EQ(idx.ops.size(), clean.ops.size());
    }
    EXPECT_LT(maxRssKb() - before, 200 * 1024);
}

// The command line: analyze, compare and merge on such a file exit with an error naming it
// (exit code 1 or 2), not with an abort (134).
TEST(HostileDlx, CliRefusesLyingIndexFiles) {
    dltest::TempDir dir;
    const fs::path bad = dir.path / "bad.dlx";
    dltest::writeFile(bad, indexFile(bodyLyingAt(Tensors, std::uint64_t(32) << 30), std::uint64_t(64) << 30));
    const std::string cli = DUMPLENS_CLI_PATH;
    for (const std::string& args : {"analyze " + bad.string(), "compare " + bad.string() + " " + bad.string(),
                                   "merge -o " + (dir.path / "out.dlx").string() + " " + bad.string() + " " + bad.string()}) {
        const std::string cmd = "timeout 60 " + cli + " " + args + " 2>&1";
        FILE* p = ::popen(cmd.c_str(), "r");
        ASSERT_NE(p, nullptr);
        std::string output;
        char buf[4096];
        while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) output.append(buf, n);
        const int status = ::pclose(p);
        ASSERT_TRUE(WIFEXITED(status)) << args;
        const int code = WEXITSTATUS(status);
        EXPECT_TRUE(code == 1 || code == 2) << args << " exited " << code << ": " << output;
        EXPECT_NE(output.find("bad.dlx"), std::string::npos) << args << ": " << output;
    }
    EXPECT_FALSE(fs::exists(dir.path / "out.dlx"));

    // One good file and the bad one: merged, and the count says which were.
    const fs::path dump = dir.path / "dump";
    dltest::writeFile(dump / "rank_0/Net/0/0/statistic.csv",
                      "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,"
                      "Min Value,Avg Value,Count,Negative Zero Count,Positive Zero Count,NaN Count,Negative Inf Count,"
                      "Positive Inf Count,Zero Count\n"
                      "Add,Add-op1,7,2,1700000000000100,output,0,8,float16,\"(4)\",3,1,2,4,0,4,0,0,0,0\n");
    IndexOptions o;
    o.useCache = false;
    DumpIndex idx;
    IndexReport report;
    std::string error;
    ASSERT_TRUE(indexDump(dump.string(), o, idx, report, error)) << error;
    const fs::path good = dir.path / "good.dlx";
    ASSERT_TRUE(saveIndexFile(good.string(), idx, error)) << error;
    const std::string cmd = "timeout 60 " + cli + " merge -o " + (dir.path / "out.dlx").string() + " " + good.string() +
                            " " + bad.string() + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string output;
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) output.append(buf, n);
    EXPECT_EQ(::pclose(p), 0) << output;
    EXPECT_NE(output.find("Merged 1 of 2 file(s)"), std::string::npos) << output;
    EXPECT_NE(output.find("bad.dlx"), std::string::npos) << output;
}

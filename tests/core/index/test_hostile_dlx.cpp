// Crafted index files (.dlx and cache shards) in the chunked container of format 8: sections that
// declare lengths far beyond the bytes they hold, a truncated chunk, a flipped byte, records of a
// foreign size, a padded file. Each is a clear error naming the file, quickly, with little memory;
// never an abort. The files are a real small index whose tables are edited here and then sealed
// again (the tables' checksum recomputed), so the reader's structural checks are what refuse them.
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
namespace ct = dl::container;

namespace {

using Bytes = std::vector<std::uint8_t>;

template <class T>
T get(const Bytes& b, std::size_t at) {
    T v;
    std::memcpy(&v, b.data() + at, sizeof v);
    return v;
}
template <class T>
void set(Bytes& b, std::size_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof v);
}

// The table layout as docs/formats.md 9.1 gives it (independent of the writer's code).
struct Layout {
    std::uint32_t sections = 0, chunks = 0;
    std::size_t section(std::uint32_t i) const { return ct::kHeaderBytes + i * ct::kSectionEntryBytes; }
    std::size_t chunk(std::uint32_t i) const {
        return ct::kHeaderBytes + sections * ct::kSectionEntryBytes + i * ct::kChunkEntryBytes;
    }
};
Layout layoutOf(const Bytes& f) { return {get<std::uint32_t>(f, 12), get<std::uint32_t>(f, 24)}; }

// Recomputes the tables' XXH3 (the header but its bytes 32-39, then the tables) after an edit.
void seal(Bytes& f) {
    const Layout l = layoutOf(f);
    const std::size_t tables = l.sections * ct::kSectionEntryBytes + l.chunks * ct::kChunkEntryBytes;
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, f.data(), 32);
    XXH3_64bits_update(&st, f.data() + 40, ct::kHeaderBytes - 40);
    XXH3_64bits_update(&st, f.data() + ct::kHeaderBytes, tables);
    set<std::uint64_t>(f, 32, XXH3_64bits_digest(&st));
}

// Entry of the section with this id (ids: index_serializer.cpp; 6 = tensors).
std::size_t sectionEntry(const Bytes& f, std::uint32_t id) {
    const Layout l = layoutOf(f);
    for (std::uint32_t i = 0; i < l.sections; ++i)
        if (get<std::uint32_t>(f, l.section(i)) == id) return l.section(i);
    ADD_FAILURE() << "no section " << id;
    return 0;
}
constexpr std::uint32_t kFieldsId = 1, kWarningsId = 2, kTensorsId = 6, kLastId = 11;

// An index of a few ops and tensors, one warning, in the given encoding.
DumpIndex smallIndex() {
    DumpIndex idx;
    idx.root = "/dump";
    for (int k = 0; k < 4; ++k) {
        OpRecord op;
        op.type = idx.strings.intern("Add");
        op.name = idx.strings.intern("Add-op" + std::to_string(k));
        op.firstTensor = std::uint32_t(idx.tensors.size());
        op.tensorCount = 2;
        idx.ops.push_back(op);
        for (int s = 0; s < 2; ++s) {
            TensorRecord t;
            t.op = std::uint32_t(k);
            t.slot = std::uint16_t(s);
            TensorStats st;
            st.max = k + s;
            st.known = stat::Max;
            idx.setStats(t, st);
            idx.tensors.push_back(t);
        }
    }
    idx.warnings.push_back({"a.npy", "truncated"});
    return idx;
}

using dltest::maxRssKb;

// loadIndexFile on these bytes: false, the error names the file and contains `reason`.
void expectRefused(const fs::path& dir, const std::string& name, const Bytes& file, const std::string& reason) {
    const fs::path p = dir / (name + ".dlx");
    dltest::writeFile(p, file);
    DumpIndex idx;
    IndexReport report;
    std::string error;
    EXPECT_FALSE(loadIndexFile(p.string(), idx, report, error)) << name;
    EXPECT_NE(error.find(p.string()), std::string::npos) << name << ": " << error;
    EXPECT_NE(error.find(reason), std::string::npos) << name << ": " << error;
    EXPECT_TRUE(idx.tensors.empty());
}

// A file whose tensors section claims `bytes` bytes (a lie) with its count and chunk sizes edited
// to agree, so only the plausibility rules stand in the way.
Bytes lyingAt(std::uint32_t id, std::uint64_t bytes) {
    Bytes f = serializeIndex(smallIndex(), {}, IndexEncoding{false, 3});
    const std::size_t e = sectionEntry(f, id);
    const auto elem = get<std::uint32_t>(f, e + 8);
    set<std::uint64_t>(f, e + 16, bytes / elem);
    seal(f);
    return f;
}

}  // namespace

// Every section in turn claims 3 GB and 32 GB in a file of a few KB: refused with the file named
// before anything of that size is allocated.
TEST(HostileDlx, HugeDeclaredLengthsAreRefusedWithLittleMemory) {
    dltest::TempDir dir;
    const long before = maxRssKb();
    for (std::uint32_t id = kFieldsId; id <= kLastId; ++id)
        for (std::uint64_t length : {std::uint64_t(3) << 30, std::uint64_t(32) << 30})
            expectRefused(dir.path, "s" + std::to_string(id) + "_" + std::to_string(length >> 30), lyingAt(id, length),
                          "declares");
    // A chunk that claims more than a chunk may hold, its section agreeing.
    Bytes f = serializeIndex(smallIndex(), {}, IndexEncoding{false, 3});
    const std::size_t e = sectionEntry(f, kTensorsId);
    const Layout l = layoutOf(f);
    const auto first = get<std::uint32_t>(f, e + 40);
    set<std::uint64_t>(f, l.chunk(first) + 16, std::uint64_t(1) << 40);
    set<std::uint64_t>(f, e + 16, (std::uint64_t(1) << 40) / 88);
    seal(f);
    expectRefused(dir.path, "bigchunk", f, "wrong size");
    // A zstd chunk whose declared raw size is plausible for its section but not what its frame
    // holds: decoded, and refused there.
    Bytes g = serializeIndex(smallIndex(), {}, IndexEncoding{false, 3});
    const std::size_t ge = sectionEntry(g, kTensorsId);
    const auto gc = layoutOf(g).chunk(get<std::uint32_t>(g, ge + 40));
    set<std::uint64_t>(g, gc + 16, get<std::uint64_t>(g, gc + 16) + 88);
    set<std::uint64_t>(g, ge + 16, get<std::uint64_t>(g, ge + 16) + 1);
    seal(g);
    expectRefused(dir.path, "framesize", g, "chunk 0");
    const long grownKb = maxRssKb() - before;
    std::printf("peak RSS grew by %ld KiB over the crafted files\n", grownKb);
    EXPECT_LT(grownKb, 200 * 1024) << "peak memory grew by " << grownKb << " KiB";
}

// Truncated (a chunk cut off, with and without the header's size edited to agree), padded, a byte
// flipped in a chunk (zstd and raw), records of another size, tables edited without resealing.
TEST(HostileDlx, TruncatedCorruptAndForeignFilesNameTheFileAndTheReason) {
    dltest::TempDir dir;
    for (const bool raw : {false, true}) {
        const IndexEncoding enc{raw, 3};
        const std::string tag = raw ? "raw_" : "zstd_";
        const Bytes good = serializeIndex(smallIndex(), {}, enc);
        {
            DumpIndex back;
            FolderFingerprint fp;
            std::string error;
            ASSERT_TRUE(deserializeIndex(good.data(), good.size(), back, fp, error)) << error;
        }
        const std::size_t te = sectionEntry(good, kTensorsId);
        const auto tensorsAt = get<std::uint64_t>(good, te + 24), tensorsStored = get<std::uint64_t>(good, te + 32);
        ASSERT_EQ(tensorsAt % ct::kAlign, 0u);
        // Cut inside the tensors section.
        Bytes cut(good.begin(), good.begin() + std::ptrdiff_t(tensorsAt + tensorsStored / 2));
        expectRefused(dir.path, tag + "cut", cut, "truncated or padded");
        set<std::uint64_t>(cut, 16, cut.size());
        seal(cut);
        expectRefused(dir.path, tag + "cut_sealed", cut, "past the end of the file (truncated)");
        Bytes padded = good;
        padded.resize(good.size() + 100, 0);
        expectRefused(dir.path, tag + "padded", padded, "truncated or padded");
        Bytes flipped = good;
        flipped[std::size_t(tensorsAt + tensorsStored / 2)] ^= 0x40;
        expectRefused(dir.path, tag + "flipped", flipped, "index section 'tensors' chunk 0: checksum mismatch");
        Bytes last = good;
        last.back() ^= 1;  // the file ends with a section's last stored byte: under a checksum
        expectRefused(dir.path, tag + "last", last, "checksum mismatch");
        // 44-byte records, twice as many: the same bytes, another build's layout.
        Bytes foreign = good;
        set<std::uint32_t>(foreign, te + 8, 44);
        set<std::uint64_t>(foreign, te + 16, get<std::uint64_t>(good, te + 16) * 2);
        seal(foreign);
        expectRefused(dir.path, tag + "foreign", foreign, "holds 44-byte records, this build reads 88");
        Bytes unsealed = good;
        set<std::uint64_t>(unsealed, te + 16, 1);
        expectRefused(dir.path, tag + "unsealed", unsealed, "checksum mismatch in its section table");
        Bytes older = good;
        set<std::uint32_t>(older, 8, kIndexFormatVersion - 1);
        expectRefused(dir.path, tag + "older", older,
                      "index format version " + std::to_string(kIndexFormatVersion - 1) + ", this build reads " +
                          std::to_string(kIndexFormatVersion));
    }
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
    for (std::uint32_t id = kFieldsId; id <= kLastId; ++id) {
        dltest::writeFile(shards[0], lyingAt(id, std::uint64_t(32) << 30));
        DumpIndex idx;
        IndexReport r2;
        ASSERT_TRUE(indexDump(dump.string(), o, idx, r2, error)) << error;
        EXPECT_EQ(r2.shardsFromCache, 0u);
        ASSERT_EQ(r2.cacheNotes.size(), 1u) << id;
        EXPECT_NE(r2.cacheNotes[0].find("rebuilt"), std::string::npos) << r2.cacheNotes[0];
        EXPECT_NE(r2.cacheNotes[0].find(shards[0].string()), std::string::npos) << r2.cacheNotes[0];
        EXPECT_EQ(idx.ops.size(), clean.ops.size());
    }
    EXPECT_LT(maxRssKb() - before, 200 * 1024);
}

// The command line: analyze, compare and merge on such a file exit with an error naming it
// (exit code 1 or 2), not with an abort (134).
TEST(HostileDlx, CliRefusesLyingIndexFiles) {
    dltest::TempDir dir;
    const fs::path bad = dir.path / "bad.dlx";
    dltest::writeFile(bad, lyingAt(kTensorsId, std::uint64_t(32) << 30));
    const std::string cli = DUMPLENS_CLI_PATH;
    for (const std::string& args :
         {"analyze " + bad.string(), "compare " + bad.string() + " " + bad.string(),
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

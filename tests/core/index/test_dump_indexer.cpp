// End-to-end tests of the directory indexer on small dumps written here in MindSpore's formats.
#include <gtest/gtest.h>

#include <tuple>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/index/dump_indexer.h"
#include "core/index/index_serializer.h"
#include "core/io/npy_writer.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

using TempDir = dltest::TempDir;

void writeText(const fs::path& p, const std::string& text) { dltest::writeFile(p, text); }

void writeF16(const fs::path& p, const std::vector<float>& values) {
    fs::create_directories(p.parent_path());
    std::string bytes, error;
    ASSERT_TRUE(encodeFloats(values, DType::Float16, bytes, error)) << error;
    ASSERT_TRUE(writeNpyFile(p.string(), DType::Float16, {std::int64_t(values.size())}, bytes, error)) << error;
}

const char* kHeader22 =
    "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,Avg Value,"
    "Count,Negative Zero Count,Positive Zero Count,NaN Count,Negative Inf Count,Positive Inf Count,Zero Count\n";

// rank_0: Mul-op2 (statistics only) runs before Add-op1 (npy + csv) whose output saturates,
// an Opdebug record naming Add-op1's task/stream, and a few broken files.
void writeSmallDump(const fs::path& root) {
    const fs::path it = root / "rank_0/Net/0/1";
    writeF16(it / "Add.Add-op1.7.2.1700000000000100.input.0.DefaultFormat.npy", {1, 2, 3, 0.5f});
    writeF16(it / "Add.Add-op1.7.2.1700000000000100.input.1.DefaultFormat.npy", {60000, 60000, 1, 2});
    writeF16(it / "Add.Add-op1.7.2.1700000000000100.output.0.DefaultFormat.npy", {60001, 65504, 4, 2.5f});
    writeText(it / "statistic.csv",
              std::string(kHeader22) +
                  "Add,Add-op1,7,2,1700000000000100,output,0,8,float16,\"(4)\",65504,2.5,32878,4,0,4,0,0,0,0\n"
                  "Mul,Mul-op2,6,2,1700000000000050,output,0,8,float16,\"(4)\",3,1,2,4,0,4,0,0,0,0\n"
                  "this,row,is,broken\n");
    writeText(
        it / "Opdebug.Node_OpDebug.99.2.1700000000000101.output.0.json",
        R"({"AI Core":{"block_idx":0,"kernel_code":"0x1","model_id":1,"para_base":"0x0","pc_start":"0x0",)"
        R"("status":32,"stream_id":2,"task_id":7,"task_type":0},"DHA Atomic Add":{"model_id":0,"para_base":"0x0",)"
        R"("pc_start":"0x0","status":0,"stream_id":0,"task_id":0,"task_type":0},"L2 Atomic Add":{"model_id":0,)"
        R"("para_base":"0x0","pc_start":"0x0","status":0,"stream_id":0,"task_id":0,"task_type":0}})");
    writeText(it / "Add.Add-op3.8.2.1700000000000200.output.0.DefaultFormat.npy", "\x93NUMPY\x01\x00\x76\x00{'descr'");
    writeText(it / "Sub.Sub-op4.9.2.1700000000000300.output.0.DefaultFormat.npy", "");
    writeText(it / "not_a_dump_name.bin", "xx");
    writeText(root / "rank_0/execution_order/ms_execution_order_graph_0.csv",
              "NodeExecutionOrder-FullNameWithScope\nDefault/net/Mul-op2\nDefault/net/Add-op1\n");
    writeText(root / "rank_0/.dump_metadata/config.json", R"({"device_target":"Ascend","ms_version":"2.2.0"})");
    writeF16(root / "rank_1/Net/0/1/Neg.Neg-op5.3.1.1700000000000400.output.0.DefaultFormat.npy", {-1, -2});
}

const OpRecord* findOp(const DumpIndex& idx, std::string_view name) {
    for (const auto& op : idx.ops)
        if (idx.strings.view(op.name) == name) return &op;
    return nullptr;
}

bool hasWarningAbout(const DumpIndex& idx, std::string_view fileFragment) {
    return std::any_of(idx.warnings.begin(), idx.warnings.end(),
                       [&](const IndexWarning& w) { return w.path.find(fileFragment) != std::string::npos; });
}

std::vector<std::string> listTree(const fs::path& root) {
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(root)) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace

TEST(DumpIndexer, IndexesRanksOpsAndMergesCsvWithData) {
    TempDir dump, cache;
    writeSmallDump(dump.path);
    DumpIndex idx;
    IndexReport rep;
    std::string error;
    IndexOptions opt;
    opt.cacheDir = cache.path.string();
    ASSERT_TRUE(indexDump(dump.path.string(), opt, idx, rep, error)) << error;
    ASSERT_EQ(idx.ranks.size(), 2u);
    EXPECT_EQ(idx.meta.frameworkVersion, "2.2.0");
    const OpRecord* add = findOp(idx, "Add-op1");
    const OpRecord* mul = findOp(idx, "Mul-op2");
    ASSERT_TRUE(add && mul);
    EXPECT_EQ(add->tensorCount, 3u);
    EXPECT_EQ(add->iteration, 1u);
    EXPECT_EQ(idx.strings.view(add->scope), "Default/net/Add-op1");
    EXPECT_LT(mul->execPos, add->execPos);  // execution order file wins
    // Output of Add: data stats (from the npy) plus the csv flag; 60001 rounds to 60000 in fp16.
    const TensorRecord& out = idx.tensors[add->firstTensor + 2];
    EXPECT_EQ(out.io, Io::Output);
    EXPECT_TRUE(out.flags & HasData);
    EXPECT_TRUE(out.flags & HasCsvStats);
    EXPECT_EQ(idx.stats(out).max, 65504.0);
    EXPECT_EQ(idx.stats(out).satCount, 1u);
    EXPECT_EQ(idx.shape(out), std::vector<std::int64_t>{4});
    Log2Histogram h;
    ASSERT_TRUE(idx.histogram(out, h));
    EXPECT_EQ(h.exp[Log2Histogram::binOf(15)], 2u);  // 60000 and 65504 lie in [2^15, 2^16)
    // Mul: statistics only, from the csv; unknown figures stay unknown.
    const TensorRecord& mulOut = idx.tensors[mul->firstTensor];
    EXPECT_FALSE(mulOut.flags & HasData);
    EXPECT_EQ(idx.stats(mulOut).max, 3.0);
    EXPECT_FALSE(idx.stats(mulOut).has(stat::L2));
    // Opdebug record attached through the AI Core ids, not the file name's task 99.
    ASSERT_GE(add->overflow, 0);
    EXPECT_EQ(idx.overflows[std::size_t(add->overflow)].aicoreStatus, 32u);
    // Every broken file is a warning naming it; the rest is indexed.
    EXPECT_TRUE(hasWarningAbout(idx, "Add.Add-op3"));
    EXPECT_TRUE(hasWarningAbout(idx, "Sub.Sub-op4"));
    EXPECT_TRUE(hasWarningAbout(idx, "not_a_dump_name.bin"));
    EXPECT_TRUE(hasWarningAbout(idx, "statistic.csv"));
    EXPECT_NE(findOp(idx, "Neg-op5"), nullptr);
}

TEST(DumpIndexer, CacheReopensUnchangedAndReindexesChangedFilesOnly) {
    TempDir dump, cache;
    writeSmallDump(dump.path);
    const auto before = listTree(dump.path);
    IndexOptions opt;
    opt.cacheDir = cache.path.string();
    DumpIndex first, second, third;
    IndexReport r1, r2, r3;
    std::string error;
    ASSERT_TRUE(indexDump(dump.path.string(), opt, first, r1, error));
    EXPECT_EQ(r1.shardsFromCache, 0u);
    ASSERT_TRUE(indexDump(dump.path.string(), opt, second, r2, error));
    EXPECT_EQ(r2.shardsFromCache, 2u);
    EXPECT_EQ(second.tensors.size(), first.tensors.size());
    EXPECT_EQ(second.warnings.size(), first.warnings.size());
    EXPECT_EQ(listTree(dump.path), before);  // nothing written into the dump
    // Change one file of rank_0: that shard is rebuilt, its unchanged files reuse their stats.
    writeF16(dump.path / "rank_0/Net/0/1/Add.Add-op1.7.2.1700000000000100.input.0.DefaultFormat.npy", {7, 7, 7, 7, 7});
    ASSERT_TRUE(indexDump(dump.path.string(), opt, third, r3, error));
    EXPECT_EQ(r3.shardsFromCache, 1u);
    EXPECT_EQ(r3.filesRead, 3u);  // the changed file, plus the two unreadable ones tried again
    EXPECT_EQ(r3.filesReused, 2u);
    const OpRecord* add = findOp(third, "Add-op1");
    ASSERT_TRUE(add);
    EXPECT_EQ(third.stats(third.tensors[add->firstTensor]).max, 7.0);
}

TEST(DumpIndexer, CorruptCacheIsRebuiltWithANote) {
    TempDir dump, cache;
    writeSmallDump(dump.path);
    IndexOptions opt;
    opt.cacheDir = cache.path.string();
    DumpIndex idx;
    IndexReport rep;
    std::string error;
    ASSERT_TRUE(indexDump(dump.path.string(), opt, idx, rep, error));
    for (const auto& e : fs::recursive_directory_iterator(cache.path))
        if (e.is_regular_file()) {
            std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
            f.seekg(60);
            const char c = char(f.get());
            f.seekp(60);
            f.put(char(c ^ 0x5a));  // flip bits: a fixed byte could equal what is there
        }
    DumpIndex again;
    IndexReport rep2;
    ASSERT_TRUE(indexDump(dump.path.string(), opt, again, rep2, error));
    EXPECT_EQ(rep2.shardsFromCache, 0u);
    ASSERT_FALSE(rep2.cacheNotes.empty());
    EXPECT_NE(rep2.cacheNotes[0].find("rebuilt"), std::string::npos);
    EXPECT_EQ(again.tensors.size(), idx.tensors.size());
}

// A cache written by an older build (other format version) is rebuilt, and the note says why.
TEST(DumpIndexer, CacheOfAnOlderFormatIsRebuiltWithItsVersionInTheNote) {
    TempDir dump, cache;
    writeSmallDump(dump.path);
    IndexOptions opt;
    opt.cacheDir = cache.path.string();
    DumpIndex idx;
    IndexReport rep;
    std::string error;
    ASSERT_TRUE(indexDump(dump.path.string(), opt, idx, rep, error));
    const std::uint32_t old = kIndexFormatVersion - 1;
    for (const auto& e : fs::recursive_directory_iterator(cache.path))
        if (e.is_regular_file()) {
            std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(8);
            f.write(reinterpret_cast<const char*>(&old), 4);
        }
    DumpIndex again;
    IndexReport rep2;
    ASSERT_TRUE(indexDump(dump.path.string(), opt, again, rep2, error));
    EXPECT_EQ(rep2.shardsFromCache, 0u);
    ASSERT_FALSE(rep2.cacheNotes.empty());
    EXPECT_NE(rep2.cacheNotes[0].find("index format version " + std::to_string(old)), std::string::npos)
        << rep2.cacheNotes[0];
    EXPECT_EQ(again.tensors.size(), idx.tensors.size());
}

TEST(DumpIndexer, OpensARankFolderOrAnIterationFolder) {
    TempDir dump;
    writeSmallDump(dump.path);
    IndexOptions opt;
    opt.useCache = false;
    std::string error;
    DumpIndex rank0, iter;
    IndexReport r;
    ASSERT_TRUE(indexDump((dump.path / "rank_0").string(), opt, rank0, r, error));
    ASSERT_EQ(rank0.ranks.size(), 1u);
    EXPECT_NE(findOp(rank0, "Add-op1"), nullptr);
    EXPECT_EQ(findOp(rank0, "Neg-op5"), nullptr);
    ASSERT_TRUE(indexDump((dump.path / "rank_1/Net/0/1").string(), opt, iter, r, error));
    const OpRecord* neg = findOp(iter, "Neg-op5");
    ASSERT_TRUE(neg);
    EXPECT_EQ(neg->rank, 1u);
    EXPECT_EQ(neg->iteration, 1u);
}

TEST(DumpIndexer, UnusablePathIsAnErrorNotACrash) {
    DumpIndex idx;
    IndexReport rep;
    std::string error;
    EXPECT_FALSE(indexDump("/nonexistent/dumplens/path", {}, idx, rep, error));
    EXPECT_NE(error.find("does not exist"), std::string::npos);
}

TEST(DumpIndexer, SymlinkLoopsAreWarnedNotFollowedForever) {
    TempDir dump;
    writeSmallDump(dump.path);
    fs::create_directory_symlink(dump.path / "rank_0", dump.path / "rank_0/Net/loop");
    IndexOptions opt;
    opt.useCache = false;
    DumpIndex idx;
    IndexReport rep;
    std::string error;
    ASSERT_TRUE(indexDump(dump.path.string(), opt, idx, rep, error));
    EXPECT_TRUE(hasWarningAbout(idx, "loop"));
}

// A link to '/' or to a parent folder holds the dump itself and everything beside it: walking
// it indexed the whole machine (/proc included) and never ended. It is skipped with a warning
// and the dump indexes to exactly what it holds without the links.
TEST(DumpIndexer, SymlinksToFoldersHoldingTheDumpAreSkipped) {
    TempDir parent;
    const fs::path root = parent.path / "run";
    writeSmallDump(root);
    writeF16(parent.path / "beside/rank_5/Net/0/1/Abs.Abs-op9.1.1.1700000000000500.output.0.DefaultFormat.npy", {1, 2});
    IndexOptions opt;
    opt.useCache = false;
    DumpIndex plain;
    IndexReport rep;
    std::string error;
    ASSERT_TRUE(indexDump(root.string(), opt, plain, rep, error)) << error;

    fs::create_directory_symlink("/", root / "rank_0/root_link");
    fs::create_directory_symlink(parent.path, root / "rank_1/up");
    DumpIndex linked;
    ASSERT_TRUE(indexDump(root.string(), opt, linked, rep, error)) << error;
    EXPECT_EQ(linked.tensors.size(), plain.tensors.size());
    EXPECT_EQ(linked.ops.size(), plain.ops.size());
    EXPECT_FALSE(findOp(linked, "Abs-op9"));
    int skipped = 0;
    for (const IndexWarning& w : linked.warnings)
        if (w.reason.find("contains the dump") != std::string::npos) {
            ++skipped;
            EXPECT_TRUE(w.path == "rank_0/root_link" || w.path == "rank_1/up") << w.path;
            EXPECT_EQ(w.severity, WarningSeverity::Note) << "a skipped link is a note, not an unreadable file";
        }
    EXPECT_EQ(skipped, 2);
}

TEST(DumpIndexer, CancelledBeforeStartReturnsWithoutCaching) {
    TempDir dump, cache;
    writeSmallDump(dump.path);
    std::stop_source stop;
    stop.request_stop();
    IndexOptions opt;
    opt.cacheDir = cache.path.string();
    opt.stop = stop.get_token();
    DumpIndex idx;
    IndexReport rep;
    std::string error;
    ASSERT_TRUE(indexDump(dump.path.string(), opt, idx, rep, error));
    EXPECT_TRUE(rep.cancelled);
    EXPECT_FALSE(fs::exists(cache.path / "shards"));
}

TEST(IndexSerializer, RoundTripAndTamperDetection) {
    DumpIndex idx;
    idx.root = "/x";
    OpRecord op;
    op.type = idx.strings.intern("SqrtGrad");
    op.name = idx.strings.intern("SqrtGrad-op7");
    op.tensorCount = 1;
    idx.ops.push_back(op);
    TensorRecord t;
    TensorStats s;
    s.max = 65504;
    idx.setStats(t, s);
    idx.tensors.push_back(t);
    idx.warnings.push_back({"a.npy", "truncated"});
    const auto bytes = serializeIndex(idx, {1, 2, 3});
    DumpIndex back;
    FolderFingerprint fp;
    std::string error;
    ASSERT_TRUE(deserializeIndex(bytes.data(), bytes.size(), back, fp, error)) << error;
    EXPECT_EQ(fp, (FolderFingerprint{1, 2, 3}));
    EXPECT_EQ(back.strings.view(back.ops[0].name), "SqrtGrad-op7");
    EXPECT_EQ(back.stats(back.tensors[0]).max, 65504.0);
    EXPECT_EQ(back.warnings[0].reason, "truncated");
    auto bad = bytes;
    bad.back() ^= 1;
    EXPECT_FALSE(deserializeIndex(bad.data(), bad.size(), back, fp, error));
    EXPECT_FALSE(deserializeIndex(bytes.data(), bytes.size() - 3, back, fp, error));
    EXPECT_FALSE(deserializeIndex(bytes.data(), 10, back, fp, error));
}

// Statistics that the packed record form cannot hold exactly come back unchanged from the wide
// table, through merge and the cache; data-derived and 6-digit CSV figures stay packed.
TEST(IndexSerializer, PackedAndWideStatisticsRoundTripExactly) {
    TensorStats data;  // fp16 data: maxAbs = max(-min, max)
    data.min = -3.5;
    data.max = 65504;
    data.maxAbs = 65504;
    data.mean = 0.1;
    data.l2 = 1e300;
    data.count = 4096;
    data.satCount = 2;
    data.known = stat::AllFromData;
    TensorStats big = data;
    big.count = 5'000'000'000;
    TensorStats csv;  // statistic.csv: 6 significant digits
    csv.min = 0.123457;
    csv.max = 3.40282e+38;
    csv.maxAbs = csv.max;
    csv.known = stat::Min | stat::Max | stat::MaxAbs;
    TensorStats onlyMaxAbs;  // maxAbs without min/max
    onlyMaxAbs.maxAbs = 7;
    onlyMaxAbs.known = stat::MaxAbs;
    const std::vector<TensorStats> all = {data, big, csv, onlyMaxAbs, TensorStats()};

    auto same = [](const TensorStats& a, const TensorStats& b) {
        auto eq = [](double x, double y) { return std::isnan(x) ? std::isnan(y) : x == y; };
        return eq(a.min, b.min) && eq(a.max, b.max) && eq(a.mean, b.mean) && eq(a.l2, b.l2) && eq(a.maxAbs, b.maxAbs) &&
            a.count == b.count && a.satCount == b.satCount && a.known == b.known;
    };
    DumpIndex shard;
    OpRecord op;
    op.tensorCount = std::uint32_t(all.size());
    shard.ops.push_back(op);
    for (const TensorStats& s : all) {
        TensorRecord t;
        t.slot = std::uint16_t(shard.tensors.size());  // keeps the order through finalize()
        shard.setStats(t, s);
        shard.tensors.push_back(t);
    }
    EXPECT_FALSE(shard.tensors[0].packedStats.wide);
    EXPECT_TRUE(shard.tensors[1].packedStats.wide);
    EXPECT_FALSE(shard.tensors[2].packedStats.wide);
    EXPECT_TRUE(shard.tensors[3].packedStats.wide);
    EXPECT_FALSE(shard.tensors[4].packedStats.wide);

    DumpIndex merged;
    merged.merge(shard);
    merged.merge(shard);
    merged.finalize();
    const auto bytes = serializeIndex(merged, {});
    DumpIndex back;
    FolderFingerprint fp;
    std::string error;
    ASSERT_TRUE(deserializeIndex(bytes.data(), bytes.size(), back, fp, error)) << error;
    ASSERT_EQ(back.tensors.size(), 2 * all.size());
    for (std::size_t i = 0; i < back.tensors.size(); ++i)
        EXPECT_TRUE(same(back.stats(back.tensors[i]), all[i % all.size()])) << i;
}

TEST(IndexSerializer, OlderFormatVersionIsRejectedWithItsNumber) {
    DumpIndex idx;
    auto bytes = serializeIndex(idx, {});
    const std::uint32_t old = kIndexFormatVersion - 1;
    std::memcpy(bytes.data() + 8, &old, 4);
    DumpIndex back;
    FolderFingerprint fp;
    std::string error;
    EXPECT_FALSE(deserializeIndex(bytes.data(), bytes.size(), back, fp, error));
    EXPECT_NE(error.find("index format version " + std::to_string(old)), std::string::npos) << error;
}

// An unchanged dump reopens from the merged cache (one file, no per-shard merge) with the very
// records a fresh index builds; a changed file sends it back through the shards.
TEST(DumpIndexer, MergedCacheReopensTheSameRecordsAndFollowsChanges) {
    TempDir dump, cache;
    writeSmallDump(dump.path);
    IndexOptions opt;
    opt.cacheDir = cache.path.string();
    DumpIndex fresh, reopened, noCache;
    IndexReport r1, r2, r3;
    std::string error;
    ASSERT_TRUE(indexDump(dump.path.string(), opt, fresh, r1, error));
    bool merged = false;
    for (const auto& e : fs::recursive_directory_iterator(cache.path))
        merged |= e.path().parent_path().filename() == "merged" && e.path().extension() == ".dlx";
    EXPECT_TRUE(merged);
    ASSERT_TRUE(indexDump(dump.path.string(), opt, reopened, r2, error));
    EXPECT_EQ(r2.shardsFromCache, 2u);
    EXPECT_EQ(r2.shardsIndexed, 0u);
    EXPECT_EQ(r2.formats, r1.formats);
    IndexOptions off;
    off.useCache = false;
    ASSERT_TRUE(indexDump(dump.path.string(), off, noCache, r3, error));
    for (const DumpIndex* x : {&reopened, &noCache}) {
        ASSERT_EQ(x->tensors.size(), fresh.tensors.size());
        ASSERT_EQ(x->ops.size(), fresh.ops.size());
        ASSERT_EQ(x->sides.size(), fresh.sides.size());
        EXPECT_EQ(std::memcmp(x->tensors.data(), fresh.tensors.data(), fresh.tensors.size() * sizeof(TensorRecord)), 0);
        EXPECT_EQ(std::memcmp(x->ops.data(), fresh.ops.data(), fresh.ops.size() * sizeof(OpRecord)), 0);
        // Field by field: the 7 padding bytes after origNdim hold whatever the builder's heap held.
        for (std::size_t i = 0; i < fresh.sides.size(); ++i) {
            const TensorSide &a = x->sides[i], &b = fresh.sides[i];
            EXPECT_EQ(std::tuple(a.dataOffset, a.dataBytes, a.fileSize, a.fileStamp, a.file, a.histOffset, a.origNdim),
                      std::tuple(b.dataOffset, b.dataBytes, b.fileSize, b.fileStamp, b.file, b.histOffset, b.origNdim));
            EXPECT_EQ(std::memcmp(&a.counts, &b.counts, sizeof a.counts), 0);
        }
        EXPECT_EQ(x->dims, fresh.dims);
        EXPECT_EQ(x->strings.blob(), fresh.strings.blob());
        EXPECT_EQ(x->warnings.size(), fresh.warnings.size());
    }
    writeF16(dump.path / "rank_1/Net/0/1/Neg.Neg-op5.3.1.1700000000000400.output.0.DefaultFormat.npy", {-9, -2});
    DumpIndex changed;
    IndexReport r4;
    ASSERT_TRUE(indexDump(dump.path.string(), opt, changed, r4, error));
    EXPECT_EQ(r4.shardsFromCache, 1u);
    const OpRecord* neg = findOp(changed, "Neg-op5");
    ASSERT_TRUE(neg);
    EXPECT_EQ(changed.stats(changed.tensors[neg->firstTensor]).min, -9.0);
}

// The merged cache and the shard caches are compressed (format 8, zstd chunks); a merged file cut
// inside a chunk, with a flipped byte, or padded is rebuilt through the shards with a note naming
// the file and the reason, and the index is the same as before.
TEST(DumpIndexer, DamagedMergedCacheIsRebuiltWithTheFileAndReasonInTheNote) {
    TempDir dump, cache;
    writeSmallDump(dump.path);
    IndexOptions opt;
    opt.cacheDir = cache.path.string();
    DumpIndex fresh;
    IndexReport r1;
    std::string error;
    ASSERT_TRUE(indexDump(dump.path.string(), opt, fresh, r1, error)) << error;
    fs::path merged;
    std::vector<fs::path> shards;
    for (const auto& e : fs::recursive_directory_iterator(cache.path)) {
        if (e.path().extension() == ".dlx") merged = e.path();
        if (e.path().extension() == ".dlshard") shards.push_back(e.path());
    }
    ASSERT_FALSE(merged.empty());
    ASSERT_EQ(shards.size(), 2u);
    // Storage of the tensors section (id 6) in each file: zstd (1), not raw (0).
    const auto tensorStorage = [](const fs::path& p) {
        const std::string b = dltest::readText(p);
        std::uint32_t sections = 0;
        std::memcpy(&sections, b.data() + 12, 4);
        for (std::uint32_t i = 0; i < sections; ++i) {
            std::uint32_t id = 0, storage = 0;
            std::memcpy(&id, b.data() + 64 + i * 48, 4);
            std::memcpy(&storage, b.data() + 64 + i * 48 + 4, 4);
            if (id == 6) return int(storage);
        }
        return -1;
    };
    EXPECT_EQ(tensorStorage(merged), 1);
    for (const fs::path& s : shards) EXPECT_EQ(tensorStorage(s), 1);
    const std::string good = dltest::readText(merged);
    std::uint64_t tensorsAt = 0, tensorsStored = 0;
    for (std::uint32_t i = 0;; ++i) {
        std::uint32_t id = 0;
        std::memcpy(&id, good.data() + 64 + i * 48, 4);
        if (id != 6) continue;
        std::memcpy(&tensorsAt, good.data() + 64 + i * 48 + 24, 8);
        std::memcpy(&tensorsStored, good.data() + 64 + i * 48 + 32, 8);
        break;
    }
    ASSERT_GT(tensorsStored, 0u);
    std::string flipped = good;
    flipped[std::size_t(tensorsAt + tensorsStored / 2)] ^= 0x10;
    const std::vector<std::pair<std::string, std::string>> damaged = {
        {good.substr(0, std::size_t(tensorsAt + tensorsStored / 2)), "truncated or padded"},
        {flipped, "index section 'tensors' chunk 0: checksum mismatch"},
        {good + std::string(10, '\0'), "truncated or padded"},
    };
    for (const auto& [bytes, reason] : damaged) {
        dltest::writeFile(merged, bytes);
        DumpIndex again;
        IndexReport rep;
        ASSERT_TRUE(indexDump(dump.path.string(), opt, again, rep, error)) << error;
        ASSERT_EQ(rep.cacheNotes.size(), 1u) << reason;
        EXPECT_NE(rep.cacheNotes[0].find("merged cache rebuilt: " + merged.string()), std::string::npos)
            << rep.cacheNotes[0];
        EXPECT_NE(rep.cacheNotes[0].find(reason), std::string::npos) << rep.cacheNotes[0];
        EXPECT_EQ(rep.shardsFromCache, 2u);  // the shards were still good
        EXPECT_EQ(again.tensors.size(), fresh.tensors.size());
        EXPECT_EQ(std::memcmp(again.tensors.data(), fresh.tensors.data(), fresh.tensors.size() * sizeof(TensorRecord)),
                  0);
    }
}

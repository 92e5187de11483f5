// The index format (version 10): every field of every record survives save and load (zstd and raw,
// in memory and through a file), raw sections are the arrays at 4 KiB boundaries, arrays span
// chunks, tensors without files carry no side record, shapes are shared, and a cache of the
// previous version is refused with its number (the indexer then rebuilds it, see test_dump_indexer).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <tuple>

#include "core/index/index_serializer.h"
#include "tests/core/temp_dir.h"

using namespace dl;

namespace {

auto opFields(const OpRecord& o) {
    return std::tuple(o.type, o.name, o.scope, o.rank, o.graph, o.iteration, o.net, o.taskId, o.streamId, o.execPos,
                      o.startUs, o.endUs, o.firstTensor, o.tensorCount, o.overflow, o.stack, o.parent, o.tensorNames);
}
auto tensorFields(const TensorRecord& t) {
    return std::tuple(t.op, t.io, t.dtype, t.origDtype, t.ndim, t.slot, t.flags, t.format, t.shapeOffset, t.side,
                      t.timestampUs);
}
auto sideFields(const TensorSide& s) {
    return std::tuple(s.dataOffset, s.dataBytes, s.fileSize, s.fileStamp, s.file, s.histOffset, s.counts.negCount,
                      s.counts.posCount, s.counts.satCount, s.counts.subnormalCount, s.origNdim);
}
bool sameDouble(double a, double b) { return std::isnan(a) ? std::isnan(b) : std::memcmp(&a, &b, sizeof a) == 0; }
bool sameStats(const TensorStats& a, const TensorStats& b) {
    return sameDouble(a.min, b.min) && sameDouble(a.max, b.max) && sameDouble(a.mean, b.mean) &&
        sameDouble(a.l2, b.l2) && sameDouble(a.maxAbs, b.maxAbs) && a.count == b.count && a.nanCount == b.nanCount &&
        a.posInfCount == b.posInfCount && a.negInfCount == b.negInfCount && a.zeroCount == b.zeroCount &&
        a.negCount == b.negCount && a.posCount == b.posCount && a.satCount == b.satCount &&
        a.subnormalCount == b.subnormalCount && a.known == b.known;
}

// A mixed index: statistics-only tensors (no side), npy tensors with file fields, histograms and
// kernel counts, a device-layout tensor with its original shape, wide statistics, an overflow.
struct Fixture {
    DumpIndex idx;
    std::vector<TensorStats> statsOf;  // what setStats was given, per tensor in order
};

Fixture makeIndex() {
    Fixture f;
    DumpIndex& idx = f.idx;
    idx.root = "/dump";
    std::mt19937_64 rng(13);
    const std::vector<std::vector<std::int64_t>> shapes = {{4096, 5120}, {5120}, {1, 4096, 1}, {}, {4096, 5120}};
    for (std::uint32_t k = 0; k < 40; ++k) {
        OpRecord op;
        op.type = idx.strings.intern(k % 2 ? "MatMul" : "RmsNorm");
        op.name = idx.strings.intern("Default_net_layer" + std::to_string(k) + "-op" + std::to_string(k * 7));
        op.scope = k % 3 ? 0 : idx.strings.intern("Default/net/layer" + std::to_string(k));
        op.rank = k / 10;
        op.graph = 1;  // ops already in (rank, iteration, graph, execPos) order: finalize() keeps it
        op.iteration = k / 20;
        op.net = idx.strings.intern("Baichuan2");
        op.taskId = 100 + k;
        op.streamId = k % 4;
        op.execPos = k;
        op.startUs = 1'700'000'000'000 + k * 10;
        op.endUs = op.startUs + 7;
        op.overflow = k == 17 ? 0 : -1;
        op.stack = k % 5 ? 0 : idx.strings.intern("File model.py, line " + std::to_string(k));
        op.parent = k % 7 ? 0 : idx.strings.intern("Module.layers." + std::to_string(k));
        op.tensorNames = k % 11 ? 0 : idx.strings.intern("x\x1fweight\x1eout");
        op.firstTensor = std::uint32_t(idx.tensors.size());
        for (std::uint16_t slot = 0; slot < 3; ++slot) {
            TensorRecord t;
            t.op = std::uint32_t(idx.ops.size());
            t.io = slot < 2 ? Io::Input : Io::Output;
            t.slot = slot < 2 ? slot : 0;
            t.dtype = k % 2 ? DType::Float16 : DType::Float32;
            t.origDtype = k % 4 == 1 ? DType::BFloat16 : t.dtype;
            t.format = idx.strings.intern(k == 9 ? "NC1HWC0" : "DefaultFormat");
            t.timestampUs = op.startUs + slot;
            const auto& shape = shapes[(k + slot) % shapes.size()];
            t.shapeOffset = std::uint32_t(idx.dims.size());
            t.ndim = std::uint8_t(shape.size());
            idx.dims.insert(idx.dims.end(), shape.begin(), shape.end());
            TensorStats s;
            s.min = -double(rng() % 1000) / 7;
            s.max = double(rng() % 65504);
            s.maxAbs = std::max(-s.min, s.max);
            s.mean = double(rng() % 100) / 3;
            s.l2 = std::sqrt(double(rng() % 100000));
            s.count = 1000 + rng() % 1000;
            s.nanCount = k == 17 ? 3 : 0;
            s.posInfCount = k == 17 ? 1 : 0;
            s.zeroCount = rng() % 10;
            s.known = stat::Min | stat::Max | stat::MaxAbs | stat::Mean | stat::L2 | stat::Count | stat::NanCount |
                stat::PosInfCount | stat::NegInfCount | stat::ZeroCount;
            const bool npy = k % 4 == 0;
            if (npy) {  // the kernel's figures: every count, a histogram, the file fields
                s.negCount = rng() % 500;
                s.posCount = rng() % 500 + 1;
                s.satCount = rng() % 3;
                s.subnormalCount = rng() % 9;
                s.known |= stat::NegCount | stat::PosCount | stat::SatCount | stat::SubnormalCount;
                t.flags |= HasData | HasHistogram;
                idx.editSide(t).file =
                    idx.strings.intern("rank_0/Net/0/0/t" + std::to_string(k) + "." + std::to_string(slot) + ".npy");
                idx.editSide(t).dataOffset = 128;
                idx.editSide(t).dataBytes = s.count * 2;
                idx.editSide(t).fileSize = s.count * 2 + 128;
                idx.editSide(t).fileStamp = std::int64_t(rng() >> 2);
                idx.editSide(t).histOffset = std::uint32_t(idx.histBytes.size());
                idx.histBytes.insert(idx.histBytes.end(), {3, 1, 4, 1, 5, 9});
            } else {
                t.flags |= HasCsvStats;
            }
            if (k == 9 && slot == 2) {  // device layout: the original shape follows the stored one
                t.flags |= DeviceFormat;
                idx.editSide(t).origNdim = 2;
                idx.dims.insert(idx.dims.end(), {77, 88});
            }
            if (k == 23 && slot == 1) s.count = 5'000'000'000;  // beyond 32 bits: the wide form
            idx.setStats(t, s);
            f.statsOf.push_back(s);
            idx.tensors.push_back(t);
            ++op.tensorCount;
        }
        idx.ops.push_back(op);
    }
    OverflowRecord ov;
    ov.aicoreStatus = 0x20;
    ov.taskId = 117;
    ov.file = idx.strings.intern("rank_0/Opdebug.Node_OpDebug.1.json");
    ov.timestampUs = 1'700'000'000'170;
    idx.overflows.push_back(ov);
    idx.ranks.push_back({0, "rank_0", DumpFormat::MindSporeNpy, "host-a", "3", "node7", "/data/dump", "timestamps"});
    idx.warnings.push_back({"rank_0/x.npy", "truncated", WarningSeverity::Unreadable});
    idx.warnings.push_back({"rank_0/statistic.csv", "ignored unknown column 'X'", WarningSeverity::Note});
    idx.meta.frameworkVersion = "2.4.0";
    idx.meta.deviceTarget = "Ascend";
    idx.meta.dumpMode = "statistic";
    idx.meta.dumpConfigJson = "{\"common_dump_settings\":{}}";
    idx.meta.opDebugMode = 3;
    return f;
}

}  // namespace

TEST(IndexFormat, RecordsAreSmallAndStatisticsOnlyTensorsHaveNoSide) {
    EXPECT_EQ(sizeof(TensorRecord), 88u);
    EXPECT_EQ(sizeof(PackedStats), 56u);
    const Fixture f = makeIndex();
    std::size_t withSide = 0;
    for (const TensorRecord& t : f.idx.tensors) {
        withSide += t.side != 0;
        // Only tensors with a file, a device layout or kernel counts need one.
        EXPECT_EQ(t.side != 0, (t.flags & (HasData | DeviceFormat)) != 0);
    }
    EXPECT_EQ(withSide, f.idx.sides.size());
    EXPECT_LT(withSide, f.idx.tensors.size() / 2);
}

// Every field of `f` (finalized) in `b`, read back from a file written with fingerprint {7, 8, 9}.
void expectEveryField(const Fixture& f, const DumpIndex& b, const FolderFingerprint& fp) {
    const DumpIndex& a = f.idx;
    EXPECT_EQ(fp, (FolderFingerprint{7, 8, 9}));
    EXPECT_EQ(b.root, a.root);
    ASSERT_EQ(b.strings.size(), a.strings.size());
    for (StrId i = 0; i < a.strings.size(); ++i) EXPECT_EQ(b.strings.view(i), a.strings.view(i));
    ASSERT_EQ(b.ops.size(), a.ops.size());
    for (std::size_t i = 0; i < a.ops.size(); ++i) EXPECT_EQ(opFields(b.ops[i]), opFields(a.ops[i])) << i;
    ASSERT_EQ(b.tensors.size(), a.tensors.size());
    ASSERT_EQ(b.tensors.size(), f.statsOf.size());
    for (std::size_t i = 0; i < a.tensors.size(); ++i) {
        const TensorRecord &x = a.tensors[i], &y = b.tensors[i];
        EXPECT_EQ(tensorFields(y), tensorFields(x)) << i;
        EXPECT_EQ(sideFields(b.side(y)), sideFields(a.side(x))) << i;
        EXPECT_EQ(b.shape(y), a.shape(x)) << i;
        EXPECT_EQ(b.originalShape(y), a.originalShape(x)) << i;
        // Tensors keep their order through finalize() here (built in op order, slots sorted).
        EXPECT_TRUE(sameStats(b.stats(y), f.statsOf[i])) << i;
        Log2Histogram hx, hy;
        EXPECT_EQ(b.histogram(y, hy), a.histogram(x, hx)) << i;
        EXPECT_EQ(b.tensorLabel(y), a.tensorLabel(x)) << i;
    }
    EXPECT_EQ(b.histBytes, a.histBytes);
    ASSERT_EQ(b.overflows.size(), 1u);
    EXPECT_EQ(b.overflows[0].aicoreStatus, 0x20u);
    EXPECT_EQ(b.strings.view(b.overflows[0].file), "rank_0/Opdebug.Node_OpDebug.1.json");
    EXPECT_EQ(b.overflows[0].timestampUs, a.overflows[0].timestampUs);
    ASSERT_EQ(b.wideStats.size(), a.wideStats.size());
    EXPECT_EQ(b.wideStats.size(), 1u);
    ASSERT_EQ(b.ranks.size(), 1u);
    EXPECT_EQ(b.ranks[0].folder, "rank_0");
    EXPECT_EQ(b.ranks[0].host, "host-a");
    EXPECT_EQ(b.ranks[0].deviceId, "3");
    EXPECT_EQ(b.ranks[0].indexedOn, "node7");
    EXPECT_EQ(b.ranks[0].dataRoot, "/data/dump");
    EXPECT_EQ(b.ranks[0].orderSource, "timestamps");
    EXPECT_EQ(b.ranks[0].format, DumpFormat::MindSporeNpy);
    ASSERT_EQ(b.warnings.size(), 2u);
    EXPECT_EQ(b.warnings[0].reason, "truncated");
    EXPECT_EQ(b.warnings[0].severity, WarningSeverity::Unreadable);
    EXPECT_EQ(b.warnings[1].path, "rank_0/statistic.csv");
    EXPECT_EQ(b.warnings[1].severity, WarningSeverity::Note);
    EXPECT_EQ(b.meta.frameworkVersion, "2.4.0");
    EXPECT_EQ(b.meta.deviceTarget, "Ascend");
    EXPECT_EQ(b.meta.dumpMode, "statistic");
    EXPECT_EQ(b.meta.dumpConfigJson, a.meta.dumpConfigJson);
    EXPECT_EQ(b.meta.opDebugMode, 3);
}

// In memory and through a file, zstd-compressed and raw: the same records.
TEST(IndexFormat, EveryFieldSurvivesSaveAndLoad) {
    Fixture f = makeIndex();
    f.idx.finalize();  // shares the shapes (checked through shape())
    dltest::TempDir dir;
    for (const IndexEncoding enc :
         {IndexEncoding{false, 3}, IndexEncoding{true, 1}, kCacheEncoding, kPortableEncoding}) {
        SCOPED_TRACE(enc.raw ? "raw" : "zstd " + std::to_string(enc.zstdLevel));
        const auto bytes = serializeIndex(f.idx, {7, 8, 9}, enc);
        DumpIndex b;
        FolderFingerprint fp;
        std::string error;
        ASSERT_TRUE(deserializeIndex(bytes.data(), bytes.size(), b, fp, error)) << error;
        expectEveryField(f, b, fp);
        const std::string path = (dir.path / "x.dlx").string();
        ASSERT_TRUE(writeIndexFile(path, f.idx, {7, 8, 9}, enc, error)) << error;
        EXPECT_EQ(dltest::readText(path), std::string(bytes.begin(), bytes.end()));  // the same bytes either way
        DumpIndex c;
        ASSERT_TRUE(readIndexFile(path, c, fp, error)) << error;
        expectEveryField(f, c, fp);
    }
}

// Sections start at 4 KiB boundaries, and a raw one is byte for byte the array it holds (what a
// reader that maps the file instead of copying it relies on); the tables are where formats.md says.
TEST(IndexFormat, RawSectionsAreTheArraysAtAlignedOffsets) {
    Fixture f = makeIndex();
    f.idx.finalize();
    const auto bytes = serializeIndex(f.idx, {}, IndexEncoding{true, 1});
    std::uint32_t sections = 0, chunks = 0;
    std::memcpy(&sections, bytes.data() + 12, 4);
    std::memcpy(&chunks, bytes.data() + 24, 4);
    ASSERT_EQ(sections, 11u);
    const auto expectArray = [&](std::uint32_t id, const void* data, std::size_t elem, std::size_t count) {
        for (std::uint32_t i = 0; i < sections; ++i) {
            const std::uint8_t* e = bytes.data() + container::kHeaderBytes + i * container::kSectionEntryBytes;
            std::uint32_t sid = 0, storage = 0, elemSize = 0;
            std::uint64_t n = 0, offset = 0;
            std::memcpy(&sid, e, 4);
            if (sid != id) continue;
            std::memcpy(&storage, e + 4, 4);
            std::memcpy(&elemSize, e + 8, 4);
            std::memcpy(&n, e + 16, 8);
            std::memcpy(&offset, e + 24, 8);
            EXPECT_EQ(storage, 0u) << id;
            EXPECT_EQ(elemSize, elem) << id;
            EXPECT_EQ(n, count) << id;
            EXPECT_EQ(offset % 4096, 0u) << id;
            ASSERT_LE(offset + elem * count, bytes.size()) << id;
            EXPECT_EQ(std::memcmp(bytes.data() + offset, data, elem * count), 0) << id;
            return;
        }
        ADD_FAILURE() << "no section " << id;
    };
    expectArray(5, f.idx.ops.data(), sizeof(OpRecord), f.idx.ops.size());
    expectArray(6, f.idx.tensors.data(), sizeof(TensorRecord), f.idx.tensors.size());
    expectArray(7, f.idx.sides.data(), sizeof(TensorSide), f.idx.sides.size());
    expectArray(8, f.idx.dims.data(), sizeof(std::int64_t), f.idx.dims.size());
}

// An array over several chunks, the 8 MiB chunk boundaries falling inside 88-byte records: the
// same records back with either encoding; a flipped byte in the second chunk names that chunk.
TEST(IndexFormat, ArraysOverManyChunksRoundTripAndNameTheBadChunk) {
    DumpIndex idx;
    idx.root = "/big";
    const std::size_t n = 2 * container::kChunkBytes / sizeof(TensorRecord) + 1000;  // three chunks
    OpRecord op;
    op.tensorCount = std::uint32_t(n);
    idx.ops.push_back(op);
    std::mt19937_64 rng(8);
    idx.tensors.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        idx.tensors[i].slot = std::uint16_t(i);
        idx.tensors[i].timestampUs = std::int64_t(rng() >> 1);
    }
    for (const IndexEncoding enc : {IndexEncoding{true, 1}, kPortableEncoding}) {
        SCOPED_TRACE(enc.raw ? "raw" : "zstd");
        auto bytes = serializeIndex(idx, {}, enc);
        DumpIndex back;
        FolderFingerprint fp;
        std::string error;
        ASSERT_TRUE(deserializeIndex(bytes.data(), bytes.size(), back, fp, error)) << error;
        ASSERT_EQ(back.tensors.size(), n);
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(tensorFields(back.tensors[i]), tensorFields(idx.tensors[i])) << i;
        // The second chunk of the tensors section: its entry in the chunk table.
        std::uint32_t sections = 0;
        std::memcpy(&sections, bytes.data() + 12, 4);
        std::uint32_t first = ~0u;
        for (std::uint32_t i = 0; i < sections; ++i) {
            const std::uint8_t* e = bytes.data() + container::kHeaderBytes + i * container::kSectionEntryBytes;
            std::uint32_t id = 0, count = 0;
            std::memcpy(&id, e, 4);
            std::memcpy(&count, e + 12, 4);
            if (id == 6) {
                std::memcpy(&first, e + 40, 4);
                EXPECT_EQ(count, 3u);
            }
        }
        ASSERT_NE(first, ~0u);
        const std::uint8_t* c = bytes.data() + container::kHeaderBytes + sections * container::kSectionEntryBytes +
            (first + 1) * container::kChunkEntryBytes;
        std::uint64_t offset = 0, stored = 0;
        std::memcpy(&offset, c, 8);
        std::memcpy(&stored, c + 8, 8);
        bytes[std::size_t(offset + stored / 3)] ^= 1;
        EXPECT_FALSE(deserializeIndex(bytes.data(), bytes.size(), back, fp, error));
        EXPECT_EQ(error, "index section 'tensors' chunk 1: checksum mismatch (file corrupt)");
        EXPECT_TRUE(back.tensors.empty());
    }
}

// 120 tensors of 5 distinct shapes (one of them twice, one scalar) plus a device-layout run.
TEST(IndexFormat, FinalizeKeepsOneCopyOfEachShape) {
    Fixture f = makeIndex();
    std::vector<std::vector<std::int64_t>> before, beforeOrig;
    for (const TensorRecord& t : f.idx.tensors) {
        before.push_back(f.idx.shape(t));
        beforeOrig.push_back(f.idx.originalShape(t));
    }
    f.idx.finalize();
    for (std::size_t i = 0; i < f.idx.tensors.size(); ++i) {
        EXPECT_EQ(f.idx.shape(f.idx.tensors[i]), before[i]) << i;
        EXPECT_EQ(f.idx.originalShape(f.idx.tensors[i]), beforeOrig[i]) << i;
    }
    // {4096,5120}, {5120}, {1,4096,1}, the scalar (no dims) and {5120, 77, 88} / {1,4096,1,77,88}
    // for the device-layout tensor: far fewer dims than one run per tensor.
    EXPECT_LE(f.idx.dims.size(), 2u + 1 + 3 + 5);
    EXPECT_LT(f.idx.dims.size(), f.idx.tensors.size());
}

TEST(IndexFormat, PreviousVersionIsRefusedCleanly) {
    const Fixture f = makeIndex();
    auto bytes = serializeIndex(f.idx, {});
    const std::uint32_t previous = 9;
    ASSERT_EQ(kIndexFormatVersion, previous + 1);
    std::memcpy(bytes.data() + 8, &previous, 4);
    DumpIndex back;
    back.root = "left over";
    FolderFingerprint fp;
    std::string error;
    EXPECT_FALSE(deserializeIndex(bytes.data(), bytes.size(), back, fp, error));
    EXPECT_EQ(error, "index format version 9, this build reads 10");
    // A side link past the table (a corrupt or foreign file) is refused, not followed.
    DumpIndex bad = makeIndex().idx;
    bad.tensors[0].side = std::uint32_t(bad.sides.size() + 1);
    const auto badBytes = serializeIndex(bad, {});
    EXPECT_FALSE(deserializeIndex(badBytes.data(), badBytes.size(), back, fp, error));
    EXPECT_NE(error.find("inconsistent"), std::string::npos) << error;
    EXPECT_TRUE(back.tensors.empty());
}

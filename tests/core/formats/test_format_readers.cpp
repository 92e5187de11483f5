// The reader table (core/formats/<format>/): every DumpFormat has exactly one reader, and a format is
// added by one reader and one table entry — shown by a reader that exists only in this test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "core/formats/reader_registry.h"
#include "core/index/dump_indexer.h"
#include "core/index/dump_scanner.h"
#include "core/index/format_reader.h"
#include "core/index/index_summary.h"
#include "core/index/shard_builder.h"
#include "core/index/shard_context.h"
#include "core/io/npy_writer.h"
#include "core/stats/stats_accumulator.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

// The switch has no default: -Wswitch (an error in this build) fails it until a new DumpFormat
// is listed here, and the tests below then fail until the table has its reader.
bool isFormat(DumpFormat f) {
    switch (f) {
        case DumpFormat::Unknown:
            return false;
        case DumpFormat::MindSporeNpy:
        case DumpFormat::MindSporeStatsOnly:
        case DumpFormat::MindSporeBin:
        case DumpFormat::CannRaw:
        case DumpFormat::Msprobe:
        case DumpFormat::PlainNpy:
            return true;
    }
    return false;  // a value outside the enumerators
}

TEST(FormatReaders, TableListsEveryFormatExactlyOnce) {
    const auto table = formatReaders();
    std::set<std::string_view> names;
    for (const FormatReader* r : table) {
        ASSERT_NE(r, nullptr);
        EXPECT_TRUE(isFormat(r->format)) << r->name;
        EXPECT_NE(r->open, nullptr) << r->name;
        EXPECT_FALSE(r->name.empty());
        EXPECT_TRUE(names.insert(r->name).second) << "two readers named " << r->name;
    }
    int formats = 0;
    for (int v = 0; v <= std::numeric_limits<std::uint8_t>::max(); ++v) {
        const auto f = DumpFormat(v);
        const auto n = std::count_if(table.begin(), table.end(), [&](const FormatReader* r) { return r->format == f; });
        EXPECT_EQ(n, isFormat(f) ? 1 : 0) << "DumpFormat " << v;
        if (!isFormat(f)) continue;
        ++formats;
        ASSERT_NE(readerFor(f), nullptr);
        EXPECT_EQ(readerFor(f)->format, f);
        EXPECT_EQ(dumpFormatName(f), readerFor(f)->name);  // the summary's name comes from the table
    }
    EXPECT_EQ(std::size_t(formats), table.size());
    EXPECT_EQ(readerFor(DumpFormat::Unknown), nullptr);
    EXPECT_EQ(dumpFormatName(DumpFormat::Unknown), "unknown");
}

TEST(FormatReaders, EveryReaderOpensForAShard) {
    dltest::TempDir dir;
    ShardBuilder builder(dir.path.string(), "", nullptr);  // opens one ShardReader per table row
    ASSERT_TRUE(builder.scan({}));
    EXPECT_TRUE(builder.jobs().empty());
    const DumpIndex idx = builder.finish();
    EXPECT_TRUE(idx.ops.empty());
    EXPECT_TRUE(idx.warnings.empty());
}

// A format no table knows: "{op name}.f32le", the raw little-endian float32 values of one output.
// Everything it needs is this reader and one table entry.
constexpr auto kRawF32 = DumpFormat(200);

class RawF32Reader final : public ShardReader {
public:
    using ShardReader::ShardReader;
    bool scanFile(const ScannedFile& f, const DumpFileName& name) override {
        if (name.kind != DumpFileKind::Unknown || !f.rel.ends_with(".f32le")) return false;
        const std::uint32_t folder = s.folderOf(f.rel);
        s.noteFormat(folder, kRawF32);
        const std::string base = f.rel.substr(f.rel.rfind('/') + 1);
        const auto id = s.draftFor(folder, "RawF32", base.substr(0, base.size() - 6), 0, 0, 0, Io::Output, 0);
        Draft& d = s.drafts[id];
        d.hasFile = true;
        FileSide& fs = d.fileSide();
        fs.fileRel = f.rel;
        fs.fileSize = f.size;
        fs.stamp = f.stamp;
        s.queueDraftJob(id, f, DType::Float32, *this);
        return true;
    }
    StatsJobResult run(const StatsJob& job, std::vector<std::uint8_t>&) const override {
        StatsJobResult r;
        if (job.fileSize % 4) {
            r.error = "not a whole number of float32 values";
            return r;
        }
        r.dtype = DType::Float32;
        r.shape = {std::int64_t(job.fileSize / 4)};
        r.dataBytes = job.fileSize;
        r.ok = computeFileStats(job.absPath.c_str(), 0, job.fileSize, DType::Float32, false, r.stats, r.hist, r.error);
        return r;
    }
};

const FormatReader kRawF32Reader{.format = kRawF32, .name = "raw f32", .open = openReader<RawF32Reader>};

void writeFloats(const fs::path& p, const std::vector<float>& v) {
    std::string bytes(v.size() * 4, '\0');
    std::memcpy(bytes.data(), v.data(), bytes.size());
    dltest::writeFile(p, bytes);
}

struct Built {
    DumpIndex idx;
    std::set<DumpFormat> formats;
};

Built buildShard(const fs::path& root, std::span<const FormatReader* const> table) {
    const ScanResult scan = scanFolder(root.string());
    std::vector<const ScannedFile*> files;
    for (const ScannedFile& f : scan.files) files.push_back(&f);
    ShardBuilder builder(root.string(), "", nullptr, table);
    EXPECT_TRUE(builder.scan(files));
    std::vector<std::uint8_t> scratch;
    for (const StatsJob& job : builder.jobs()) {
        EXPECT_NE(job.reader, nullptr);
        builder.applyJob(job, job.reader->run(job, scratch));
    }
    Built b;
    b.formats = builder.formats();
    b.idx = builder.finish();
    return b;
}

const OpRecord* findOp(const DumpIndex& idx, std::string_view type) {
    for (const OpRecord& op : idx.ops)
        if (idx.strings.view(op.type) == type) return &op;
    return nullptr;
}

TEST(FormatReaders, ReaderAddedInATestIndexesItsFormat) {
    dltest::TempDir dir;
    const fs::path it = dir.path / "Net/0/0";
    const std::vector<float> values = {0.5f, -3.25f, 70000.0f, 2.0f, 0.0f};
    writeFloats(it / "logits.f32le", values);
    dltest::writeFile(it / "torn.f32le", std::string("\x01\x02\x03", 3));  // not whole floats
    std::string payload, error;
    ASSERT_TRUE(encodeFloats({1.0f, 2.0f}, DType::Float16, payload, error)) << error;
    ASSERT_TRUE(writeNpyFile((it / "Add.Add-op1.1.1.100.output.0.DefaultFormat.npy").string(), DType::Float16, {2},
                             payload, error))
        << error;

    // The table alone reads the .npy and passes over the .f32le files.
    const Built plain = buildShard(dir.path, formatReaders());
    EXPECT_EQ(plain.idx.ops.size(), 1u);
    EXPECT_EQ(findOp(plain.idx, "RawF32"), nullptr);

    std::vector<const FormatReader*> table(formatReaders().begin(), formatReaders().end());
    table.push_back(&kRawF32Reader);
    const Built b = buildShard(dir.path, table);
    EXPECT_TRUE(b.formats.count(kRawF32));
    EXPECT_TRUE(b.formats.count(DumpFormat::MindSporeNpy));
    ASSERT_EQ(b.idx.ops.size(), 3u);
    EXPECT_NE(findOp(b.idx, "Add"), nullptr);

    // Figures computed here from the values written.
    double max = -1e300, min = 1e300, sum = 0;
    std::uint64_t zeros = 0, saturated = 0;
    for (float v : values) {
        max = std::max(max, double(v));
        min = std::min(min, double(v));
        sum += v;
        zeros += v == 0.0f;
        saturated += std::abs(v) >= 65504.0f;
    }
    const TensorRecord* logits = nullptr;
    const TensorRecord* torn = nullptr;
    for (const OpRecord& op : b.idx.ops) {
        if (b.idx.strings.view(op.type) != "RawF32") continue;
        ASSERT_EQ(op.tensorCount, 1u);
        const TensorRecord& t = b.idx.tensors[op.firstTensor];
        (b.idx.strings.view(op.name) == "logits" ? logits : torn) = &t;
    }
    ASSERT_NE(logits, nullptr);
    ASSERT_NE(torn, nullptr);
    EXPECT_TRUE(logits->flags & HasData);
    EXPECT_EQ(logits->dtype, DType::Float32);
    EXPECT_EQ(b.idx.shape(*logits), std::vector<std::int64_t>{std::int64_t(values.size())});
    const TensorStats st = b.idx.stats(*logits);
    EXPECT_EQ(st.count, values.size());
    EXPECT_EQ(st.max, max);
    EXPECT_EQ(st.min, min);
    EXPECT_DOUBLE_EQ(st.mean, sum / double(values.size()));
    EXPECT_EQ(st.zeroCount, zeros);
    EXPECT_EQ(st.satCount, saturated);
    EXPECT_EQ(b.idx.strings.view(b.idx.side(*logits).file), "Net/0/0/logits.f32le");

    // A job that fails is the reader's error, warned with the file's path.
    EXPECT_TRUE(torn->flags & ReadError);
    EXPECT_FALSE(torn->flags & HasData);
    const auto warned = std::find_if(b.idx.warnings.begin(), b.idx.warnings.end(), [](const IndexWarning& w) {
        return w.path == "Net/0/0/torn.f32le" && w.reason == "not a whole number of float32 values";
    });
    EXPECT_NE(warned, b.idx.warnings.end());
}

}  // namespace

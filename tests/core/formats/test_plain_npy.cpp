// A folder of a user's own np.save files (names outside every dump grammar): one op per file,
// ordered by modification time, then name; next to dump-grammar files such names are warnings.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/index/dump_indexer.h"
#include "core/io/npy_writer.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

using TempDir = dltest::TempDir;

void writeNpy(const fs::path& p, const std::vector<float>& v, fs::file_time_type mtime) {
    fs::create_directories(p.parent_path());
    std::string bytes, error;
    ASSERT_TRUE(encodeFloats(v, DType::Float32, bytes, error)) << error;
    ASSERT_TRUE(writeNpyFile(p.string(), DType::Float32, {std::int64_t(v.size())}, bytes, error)) << error;
    fs::last_write_time(p, mtime);
}

bool index(const fs::path& root, DumpIndex& idx, IndexReport& report) {
    IndexOptions o;
    o.useCache = false;
    std::string error;
    return indexDump(root.string(), o, idx, report, error);
}

}  // namespace

TEST(PlainNpy, OneOpPerFileInModificationOrder) {
    TempDir dir;
    const auto t0 = fs::file_time_type::clock::now() - std::chrono::hours(1);
    writeNpy(dir.path / "zeta_activations.npy", {1, 2, 3}, t0);
    writeNpy(dir.path / "alpha_grad.npy", {-1, 70000}, t0 + std::chrono::seconds(5));
    writeNpy(dir.path / "b.npy", {4}, t0 + std::chrono::seconds(5));  // same time as alpha: name order
    writeNpy(dir.path / "sub/later.npy", {0}, t0 + std::chrono::seconds(9));
    DumpIndex idx;
    IndexReport report;
    ASSERT_TRUE(index(dir.path, idx, report));
    ASSERT_EQ(idx.ops.size(), 4u);
    std::vector<std::string> names;
    for (const auto& op : idx.ops) names.emplace_back(idx.strings.view(op.name));
    // Ordered by mtime across the shard's folders, the name breaking ties.
    EXPECT_EQ(names[0], "zeta_activations");
    EXPECT_EQ(names[1], "alpha_grad");
    EXPECT_EQ(names[2], "b");
    EXPECT_EQ(names[3], "later");
    const auto& t = idx.tensors[idx.ops[1].firstTensor];
    EXPECT_EQ(idx.stats(t).count, 2u);
    EXPECT_EQ(idx.stats(t).max, 70000);
    EXPECT_TRUE(idx.warnings.empty());
    ASSERT_EQ(report.formats.size(), 1u);
    EXPECT_EQ(report.formats[0], "plain npy");
}

TEST(PlainNpy, StrayNameBesideDumpFilesIsAWarning) {
    TempDir dir;
    const auto now = fs::file_time_type::clock::now();
    const fs::path it = dir.path / "rank_0/Net/0/0";
    writeNpy(it / "Add.Add-op1.1.1.100.output.0.DefaultFormat.npy", {1}, now);
    writeNpy(it / "mine.npy", {2}, now);
    DumpIndex idx;
    IndexReport report;
    ASSERT_TRUE(index(dir.path, idx, report));
    EXPECT_EQ(idx.ops.size(), 1u);
    ASSERT_EQ(idx.warnings.size(), 1u);
    EXPECT_NE(idx.warnings[0].path.find("mine.npy"), std::string::npos);
}

TEST(PlainNpy, MixedWritersAcrossRanksAllOpen) {
    TempDir dir;
    const auto now = fs::file_time_type::clock::now();
    writeNpy(dir.path / "rank_0/Net/0/0/Add.Add-op1.1.1.100.output.0.DefaultFormat.npy", {1}, now);
    writeNpy(dir.path / "rank_1/x.npy", {2}, now);
    fs::create_directories(dir.path / "rank_2");
    std::ofstream(dir.path / "rank_2/dump.json")
        << R"({"task":"statistics","level":"L1","dump_data_dir":null,"data":{"Functional.relu.0.forward":{"input_args":[{"type":"torch.Tensor","dtype":"torch.float16","shape":[2],"Max":NaN,"Min":0,"Mean":1,"Norm":2}],"input_kwargs":{},"output":[]}}})";
    DumpIndex idx;
    IndexReport report;
    ASSERT_TRUE(index(dir.path, idx, report));
    EXPECT_EQ(idx.ops.size(), 3u);
    std::vector<std::string> f = report.formats;
    std::sort(f.begin(), f.end());
    EXPECT_EQ(f, (std::vector<std::string>{"MindSpore npy", "msprobe", "plain npy"}));
    ASSERT_EQ(idx.ranks.size(), 3u);
    EXPECT_EQ(idx.ranks[0].format, DumpFormat::MindSporeNpy);
    EXPECT_EQ(idx.ranks[1].format, DumpFormat::PlainNpy);
    EXPECT_EQ(idx.ranks[2].format, DumpFormat::Msprobe);
}

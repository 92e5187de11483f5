// A rank's format is what its readers read (npy, <=1.2 bin, statistic.csv rows), recorded where
// they take the files, not a guess from the tensors afterwards: the same answers as before on
// readable dumps, and an npy folder whose files are all unreadable is still "MindSpore npy".
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/index/dump_indexer.h"
#include "core/io/npy_writer.h"
#include "tests/core/index_uncached.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;
using dltest::TempDir;
using dltest::writeFile;

namespace {

const std::string kCsvHead =
    "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value\n";
const std::string kNpyName = "Add.Add-op1.0.0.1700000000000001.output.0.DefaultFormat.float16.npy";

void writeNpy(const fs::path& f) {
    fs::create_directories(f.parent_path());
    std::string bytes, error;
    ASSERT_TRUE(encodeFloats({1, 2}, DType::Float16, bytes, error)) << error;
    ASSERT_TRUE(writeNpyFile(f.string(), DType::Float16, {2}, bytes, error)) << error;
}

DumpFormat rankFormat(const fs::path& root, std::size_t expectRanks = 1) {
    const DumpIndex idx = dltest::indexUncached(root.string());
    EXPECT_EQ(idx.ranks.size(), expectRanks);
    return idx.ranks.empty() ? DumpFormat::Unknown : idx.ranks.front().format;
}

}  // namespace

TEST(RankFormat, AsTheReadersRecordIt) {
    TempDir d;
    const fs::path it = fs::path("rank_0") / "net" / "0" / "1";
    writeNpy(d.path / "npy" / it / kNpyName);
    writeFile(d.path / "csv" / it / "statistic.csv",
              kCsvHead + "Add,Add-op1,0,0,1700000000000001,output,0,4,float16,\"(2)\",2,1\n");
    writeNpy(d.path / "both" / it / kNpyName);
    writeFile(d.path / "both" / it / "statistic.csv",
              kCsvHead + "Add,Add-op1,0,0,1700000000000001,output,0,4,float16,\"(2)\",2,1\n");
    const std::string half2("\x00\x3c\x00\x40", 4);  // fp16 1, 2
    writeFile(d.path / "bin" / "net" / "device_0" / "iteration_1" /
                  "Default--Add-op1_output_0_shape_2_Float16_DefaultFormat.bin",
              half2);
    EXPECT_EQ(rankFormat(d.path / "npy"), DumpFormat::MindSporeNpy);
    EXPECT_EQ(rankFormat(d.path / "csv"), DumpFormat::MindSporeStatsOnly);
    EXPECT_EQ(rankFormat(d.path / "both"), DumpFormat::MindSporeNpy);
    EXPECT_EQ(rankFormat(d.path / "bin"), DumpFormat::MindSporeBin);
}

TEST(RankFormat, UnreadableNpyIsStillNpyAndAnEmptyCsvNoFormat) {
    TempDir d;
    const fs::path it = fs::path("rank_0") / "net" / "0" / "1";
    writeFile(d.path / "junk" / it / kNpyName, "not a numpy file");
    writeFile(d.path / "header" / it / "statistic.csv", kCsvHead);
    writeNpy(d.path / "header" / "rank_1" / "net" / "0" / "1" / kNpyName);  // a readable rank beside it
    EXPECT_EQ(rankFormat(d.path / "junk"), DumpFormat::MindSporeNpy);
    IndexOptions o;
    o.useCache = false;
    DumpIndex idx;
    IndexReport report;
    std::string error;
    ASSERT_TRUE(indexDump((d.path / "header").string(), o, idx, report, error)) << error;
    for (const RankInfo& r : idx.ranks)
        EXPECT_EQ(r.format, r.rank == 1 ? DumpFormat::MindSporeNpy : DumpFormat::Unknown) << r.rank;
}

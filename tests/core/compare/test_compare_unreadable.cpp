// Comparing with a run whose files are partly unreadable: a truncated tensor file has no shape and
// no values, so its pair is "unknown" (never a shape divergence that becomes the first divergence),
// and the comparison says how many files of which run could not be read.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/compare/run_comparison.h"
#include "core/index/dump_indexer.h"
#include "core/io/npy_writer.h"
#include "tests/core/index_uncached.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

const char* kMatMulOut =
    "rank_0/Net/0/1/MatMul.Default_MatMul-op4.0.0.1734008383770018.output.0.DefaultFormat.float16.npy";

void writeRun(const fs::path& root) {
    const std::vector<std::pair<std::string, std::vector<float>>> files = {
        {"rank_0/Net/0/1/MatMul.Default_MatMul-op4.0.0.1734008383770018.input.0.DefaultFormat.float16.npy",
         {1, 2, 3, 4, 5, 6}},
        {kMatMulOut, {10, 20, 30, 40, 50, 60}},
        {"rank_0/Net/0/1/Add.Default_Add-op5.0.0.1734008383770118.output.0.DefaultFormat.float16.npy",
         {2, 4, 6, 8, 10, 12}},
    };
    for (const auto& [rel, values] : files) {
        fs::create_directories((root / rel).parent_path());
        std::string bytes, error;
        ASSERT_TRUE(encodeFloats(values, DType::Float16, bytes, error)) << error;
        ASSERT_TRUE(writeNpyFile((root / rel).string(), DType::Float16, {2, 3}, bytes, error)) << error;
    }
}

DumpIndex indexOf(const fs::path& root) { return dltest::indexUncached(root.string()); }

}  // namespace

TEST(CompareUnreadable, TruncatedFileIsUnknownNotTheFirstDivergence) {
    dltest::TempDir a, b;
    writeRun(a.path);
    writeRun(b.path);
    fs::resize_file(b.path / kMatMulOut, 100);  // inside the 128-byte npy preamble
    const DumpIndex ia = indexOf(a.path), ib = indexOf(b.path);
    const RunComparison c = compareRuns(ia, ib, CompareOptions{});
    ASSERT_EQ(c.rows.size(), 3u);
    int unknown = 0, identical = 0;
    for (std::size_t r = 0; r < c.rows.size(); ++r) {
        const std::string name = ib.strings.str(ib.ops[ib.tensors[c.alignment.tensors[r].b].op].name);
        const bool isOut = ib.tensors[c.alignment.tensors[r].b].io == Io::Output;
        if (name == "Default_MatMul-op4" && isOut) {
            EXPECT_EQ(c.rows[r].verdict, Verdict::Unknown) << c.rows[r].reason;
            EXPECT_NE(c.rows[r].reason.find("run B's tensor file could not be read"), std::string::npos)
                << c.rows[r].reason;
            ++unknown;
        } else {
            EXPECT_EQ(c.rows[r].verdict, Verdict::Identical) << name << ": " << c.rows[r].reason;
            ++identical;
        }
    }
    EXPECT_EQ(unknown, 1);
    EXPECT_EQ(identical, 2);
    EXPECT_EQ(c.firstDivergence, -1);
    EXPECT_EQ(c.diverged, 0u);
    bool said = false;
    for (const std::string& w : c.warnings)
        if (w.find("run B: 1 file(s) could not be read") != std::string::npos &&
            w.find("MatMul.Default_MatMul-op4") != std::string::npos)
            said = true;
    EXPECT_TRUE(said) << "the comparison names run B's unreadable file";
}

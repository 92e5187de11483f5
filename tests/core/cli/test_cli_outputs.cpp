// Every output option of dumplens-cli refuses a path inside a dump it reads (symlinks and `..`
// resolved, a rank folder's dump included) and writes nothing there; run as a user runs it.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "core/io/npy_writer.h"
#include "tests/core/cli_run.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using dltest::CliRun;
using dltest::TempDir;

namespace {

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

// rank_0/net/0/1/ with one MindSpore npy: fp16 [1, 2, 3].
void writeDump(const fs::path& root) {
    const fs::path f =
        root / "rank_0" / "net" / "0" / "1" / "Add.Add-op1.0.0.1700000000000001.output.0.DefaultFormat.float16.npy";
    fs::create_directories(f.parent_path());
    std::string bytes, error;
    ASSERT_TRUE(dl::encodeFloats({1, 2, 3}, dl::DType::Float16, bytes, error)) << error;
    ASSERT_TRUE(dl::writeNpyFile(f.string(), dl::DType::Float16, {3}, bytes, error)) << error;
}

std::set<std::string> listing(const fs::path& root) {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root)) out.insert(fs::relative(e.path(), root).string());
    return out;
}

bool haveReport() { return dltest::runCli("--help").output.find("report") != std::string::npos; }

struct Dumps : ::testing::Test {
    TempDir tmp{"dumplens_outputs_"};
    fs::path a = tmp.path / "run_a", b = tmp.path / "run_b", outside = tmp.path / "out";
    std::set<std::string> before;
    void SetUp() override {
        writeDump(a);
        writeDump(b);
        fs::create_directories(outside);
        fs::create_directory_symlink(a, tmp.path / "link_to_a");
        before = listing(a);
    }
    // Refused with status 2, the message naming the output and the dump, nothing written.
    void expectRefused(const std::string& args, const fs::path& dump, const char* cacheFlag = " --no-cache") {
        SCOPED_TRACE(args);
        const CliRun r = dltest::runCli(args + cacheFlag);
        EXPECT_EQ(r.code, 2) << r.output;
        EXPECT_NE(r.output.find("refusing to write"), std::string::npos) << r.output;
        EXPECT_NE(r.output.find("inside the dump '" + fs::canonical(dump).string() + "'"), std::string::npos)
            << r.output;
        EXPECT_EQ(listing(a), before);
        EXPECT_EQ(listing(b).size(), before.size());
    }
};

}  // namespace

TEST_F(Dumps, IndexOutputInsideTheDumpIsRefused) {
    expectRefused("index " + q(a) + " -o " + q(a / "x.dlx"), a);
    expectRefused("index " + q(a) + " -o " + q(a / "rank_0" / "net" / "x.dlx"), a);
    // `..` and a symlink that lead back into the dump.
    expectRefused("index " + q(a) + " -o " + q(outside / ".." / "run_a" / "x.dlx"), a);
    expectRefused("index " + q(a) + " -o " + q(tmp.path / "link_to_a" / "x.dlx"), a);
    expectRefused("index " + q(tmp.path / "link_to_a") + " -o " + q(a / "x.dlx"), a);
    // A rank folder given: its dump is the folder holding it.
    expectRefused("index " + q(a / "rank_0") + " -o " + q(a / "x.dlx"), a);
    expectRefused("index " + q(a / "rank_0" / "net" / "0" / "1") + " -o " + q(a / "x.dlx"), a);
    expectRefused("index " + q(a) + " --mpi -o " + q(a / "x.dlx"), a);
}

TEST_F(Dumps, OutsideTheDumpIsWritten) {
    const CliRun r = dltest::runCli("index " + q(a) + " -o " + q(outside / "a.dlx") + " --no-cache");
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(fs::is_regular_file(outside / "a.dlx"));
    // A sibling whose name starts like the dump's is outside it.
    const CliRun s = dltest::runCli("index " + q(a) + " -o " + q(tmp.path / "run_a.dlx") + " --no-cache");
    EXPECT_EQ(s.code, 0) << s.output;
    EXPECT_EQ(listing(a), before);
}

TEST_F(Dumps, CompareOutputInsideEitherRunIsRefused) {
    for (const char* fmt : {"--json", "--csv", "--format text", "--format msprobe-csv"}) {
        expectRefused("compare " + q(a) + " " + q(b) + " " + fmt + " -o " + q(a / "cmp.out"), a);
        expectRefused("compare " + q(a) + " " + q(b) + " " + fmt + " -o " + q(b / "rank_0" / "cmp.out"), b);
    }
    const CliRun r =
        dltest::runCli("compare " + q(a) + " " + q(b) + " --json -o " + q(outside / "cmp.json") + " --no-cache");
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(fs::is_regular_file(outside / "cmp.json"));
}

TEST_F(Dumps, MergeOutputOverAShardOrIntoItsDumpIsRefused) {
    ASSERT_EQ(dltest::runCli("index " + q(a) + " -o " + q(outside / "a.dlx") + " --no-cache").code, 0);
    const CliRun over = dltest::runCli("merge " + q(outside / "a.dlx") + " -o " + q(outside / "a.dlx"));
    EXPECT_EQ(over.code, 2) << over.output;
    EXPECT_NE(over.output.find("refusing to write"), std::string::npos) << over.output;
    expectRefused("merge " + q(outside / "a.dlx") + " -o " + q(a / "merged.dlx"), a, "");
}

TEST_F(Dumps, ReportOutputInsideEitherDumpIsRefused) {
    if (!haveReport()) {  // built without the UI: no report command, a usage error that writes nothing
        EXPECT_EQ(dltest::runCli("report " + q(a) + " -o " + q(a / "report.pdf")).code, 2);
        EXPECT_EQ(listing(a), before);
        return;
    }
    expectRefused("report " + q(a) + " -o " + q(a / "report.pdf"), a);
    expectRefused("report " + q(a) + " --compare " + q(b) + " -o " + q(b / "report.pdf"), b);
}

// A .dlx names the dump it was made from: an output into that dump is refused although the path
// given (the .dlx) lies elsewhere.
TEST_F(Dumps, OutputIntoTheDumpADlxWasMadeFromIsRefused) {
    ASSERT_EQ(dltest::runCli("index " + q(a) + " -o " + q(outside / "a.dlx") + " --no-cache").code, 0);
    ASSERT_EQ(dltest::runCli("index " + q(b) + " -o " + q(outside / "b.dlx") + " --no-cache").code, 0);
    const fs::path dlxA = outside / "a.dlx", dlxB = outside / "b.dlx";
    expectRefused("index " + q(dlxA) + " -o " + q(a / "copy.dlx"), a);
    expectRefused("compare " + q(dlxA) + " " + q(dlxB) + " --json -o " + q(b / "cmp.json"), b);
    if (haveReport()) expectRefused("report " + q(dlxA) + " -o " + q(a / "report.pdf"), a);
    // A merge of shards from two dumps: neither dump may receive the output, not only the first's.
    expectRefused("merge " + q(dlxA) + " " + q(dlxB) + " -o " + q(b / "merged.dlx"), b, "");
    const CliRun ok = dltest::runCli("compare " + q(dlxA) + " " + q(dlxB) + " --json -o " + q(outside / "cmp.json"));
    EXPECT_EQ(ok.code, 0) << ok.output;
}

// The cache folder is checked against the whole dump, not only the rank folder given.
TEST_F(Dumps, CacheInsideTheDumpOfARankFolderIsNotWritten) {
    const CliRun r = dltest::runCli("index " + q(a / "rank_0") + " --cache-dir " + q(a / ".cache"));
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("cache folder lies inside the dump"), std::string::npos) << r.output;
    EXPECT_EQ(listing(a), before);
}

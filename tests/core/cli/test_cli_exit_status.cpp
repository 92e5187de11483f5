// One exit-status rule for every command (docs/cli.md "Exit status", the --help footer): 0 done on
// readable data, 1 read but compare matched nothing, 2 usage error / unusable path / nothing
// readable / not written.
// Nothing readable is never a success, in any command.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/io/npy_writer.h"
#include "tests/core/cli_run.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using dltest::CliRun;
using dltest::TempDir;
using dltest::writeFile;

namespace {

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

void writeNpy(const fs::path& f, const std::vector<float>& v) {
    fs::create_directories(f.parent_path());
    std::string bytes, error;
    ASSERT_TRUE(dl::encodeFloats(v, dl::DType::Float16, bytes, error)) << error;
    ASSERT_TRUE(dl::writeNpyFile(f.string(), dl::DType::Float16, {std::int64_t(v.size())}, bytes, error)) << error;
}

struct ExitStatus : ::testing::Test {
    TempDir tmp{"dumplens_exit_"};
    fs::path good = tmp.path / "good", other = tmp.path / "other", empty = tmp.path / "empty", junk = tmp.path / "junk",
             out = tmp.path / "out";
    void SetUp() override {
        writeNpy(
            good / "rank_0" / "net" / "0" / "1" / "Add.Add-op1.0.0.1700000000000001.output.0.DefaultFormat.float16.npy",
            {1, 2, 3});
        // Another run whose only op matches nothing of `good`.
        writeNpy(other / "rank_0" / "net" / "0" / "1" /
                     "Mul.Mul-op7.0.0.1700000000000001.output.0.DefaultFormat.float16.npy",
                 {4, 5});
        fs::create_directories(empty);
        fs::create_directories(out);
        writeFile(junk / "rank_0" / "net" / "0" / "1" / "Add.Add-op1.0.0.1700000000000001.output.0.DefaultFormat.npy",
                  "not a numpy file");
        writeFile(junk / "rank_0" / "net" / "0" / "1" / "statistic.csv", "garbage\n1,2,3\n");
        writeFile(junk / "step0" / "rank0" / "dump.json", "{\"task\": \"statistics\", \"data\": {");
    }
    static CliRun run(const std::string& args) { return dltest::runCli(args + " --no-cache"); }
};

}  // namespace

TEST_F(ExitStatus, ReadableDumpIsSuccessInEveryCommand) {
    EXPECT_EQ(run("index " + q(good)).code, 0);
    EXPECT_EQ(run("index " + q(good) + " --json").code, 0);
    EXPECT_EQ(run("index " + q(good) + " -o " + q(out / "g.dlx")).code, 0);
    EXPECT_EQ(run("analyze " + q(good)).code, 0);
    EXPECT_EQ(run("compare " + q(good) + " " + q(good)).code, 0);
    EXPECT_EQ(dltest::runCli("merge " + q(out / "g.dlx") + " -o " + q(out / "m.dlx")).code, 0);
}

TEST_F(ExitStatus, NothingReadableIsStatus2InEveryCommand) {
    for (const fs::path& d : {empty, junk}) {
        SCOPED_TRACE(d.filename().string());
        for (const std::string& cmd :
             {"index " + q(d), "index " + q(d) + " --json", "analyze " + q(d), "analyze " + q(d) + " --json",
              "compare " + q(d) + " " + q(good), "compare " + q(good) + " " + q(d),
              "compare " + q(d) + " " + q(good) + " --json"}) {
            const CliRun r = run(cmd);
            EXPECT_EQ(r.code, 2) << cmd << "\n" << r.output;
            EXPECT_NE(r.output.find("othing readable"), std::string::npos) << cmd << "\n" << r.output;
        }
        // No index of nothing is written.
        const fs::path dlx = out / (d.filename().string() + ".dlx");
        EXPECT_EQ(run("index " + q(d) + " -o " + q(dlx)).code, 2);
        EXPECT_FALSE(fs::exists(dlx));
    }
    // The junk folder's reasons are named.
    const CliRun r = run("index " + q(junk));
    EXPECT_NE(r.output.find("not an npy file"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("dump.json"), std::string::npos) << r.output;
}

TEST_F(ExitStatus, CompareWithoutAMatchIsStatus1) {
    const CliRun r = run("compare " + q(good) + " " + q(other));
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("no op of run A could be matched"), std::string::npos) << r.output;
}

TEST_F(ExitStatus, UsageErrorsAreStatus2) {
    EXPECT_EQ(dltest::runCli("").code, 2);                           // no command
    EXPECT_EQ(dltest::runCli("bogus").code, 2);                      // unknown command
    EXPECT_EQ(dltest::runCli("index").code, 2);                      // DIR missing
    EXPECT_EQ(run("index " + q(good) + " --threads many").code, 2);  // not a number
    EXPECT_EQ(run("compare " + q(good) + " " + q(good) + " --threshold nonsense=1").code, 2);
    EXPECT_EQ(run("index " + q(tmp.path / "missing")).code, 2);  // unusable path
    EXPECT_EQ(dltest::runCli("inspect " + q(junk / "rank_0" / "net" / "0" / "1" / "statistic.csv")).code, 2);
    const CliRun help = dltest::runCli("index --help");
    EXPECT_EQ(help.code, 0);
    EXPECT_NE(help.output.find("Exit status:\n  0  "), std::string::npos) << help.output;
    EXPECT_NE(help.output.find("  DUMPLENS_CACHE_DIR  "), std::string::npos) << help.output;
}

// CLI11 takes an unknown command for a stray argument: `bogus --help` printed the main help and
// exited 0. A usage error: 2, naming it, wherever --help or options stand.
TEST_F(ExitStatus, UnknownCommandIsStatus2AndNamed) {
    for (const char* args : {"no-such-command", "no-such-command --help", "--help no-such-command",
                             "no-such-command "
                             "index"}) {
        const CliRun r = dltest::runCli(args);
        EXPECT_EQ(r.code, 2) << args << ": " << r.output;
        EXPECT_NE(r.output.find("unknown command 'no-such-command'"), std::string::npos) << args << ": " << r.output;
        EXPECT_NE(r.output.find("index"), std::string::npos) << "lists the commands: " << r.output;
    }
    // A known command's --help and the top-level help still work, and an option's value is not a command.
    EXPECT_EQ(dltest::runCli("index --help").code, 0);
    EXPECT_EQ(dltest::runCli("--help").code, 0);
    EXPECT_EQ(dltest::runCli("--generate man").code, 0);
}

TEST_F(ExitStatus, ReportFollowsTheSameRule) {
    if (dltest::runCli("--help").output.find("report") == std::string::npos) {
        EXPECT_EQ(run("report " + q(junk) + " -o " + q(out / "r.pdf")).code, 2);  // no report command: usage error
        return;
    }
    EXPECT_EQ(run("report " + q(junk) + " -o " + q(out / "r.pdf")).code, 2);
    EXPECT_EQ(run("report " + q(good) + " --compare " + q(empty) + " -o " + q(out / "r.pdf")).code, 2);
    EXPECT_FALSE(fs::exists(out / "r.pdf"));
}

// `dumplens-cli export-trace DIR -o FILE` as a user runs it: on the demo and on its .dlx (the same
// trace, checked by tests/core/export/trace_checks.h), to standard output, and refused with exit 2
// (nothing written) for an output inside the dump, an empty or junk folder, a missing -o.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/analysis/overflow_analyzer.h"
#include "core/index/dump_indexer.h"
#include "core/query/op_state.h"
#include "tests/core/cli_run.h"
#include "tests/core/export/trace_checks.h"
#include "tests/core/shared_demo.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using dltest::CliRun;
using nlohmann::json;

namespace {

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

struct ExportTraceCli : ::testing::Test {
    dltest::TempDir tmp{"dumplens_cli_trace_"};
    std::string demo;
    void SetUp() override {
        dl::demo::DemoVariantInfo info;
        demo = dltest::sharedDemoVariant(dl::demo::DemoOptions{}, info);
    }
    static CliRun run(const std::string& args) { return dltest::runCli("export-trace " + args + " --no-cache", 60); }
    void checkAgainstIndex(const fs::path& trace) {
        const json j = json::parse(dltest::readText(trace), nullptr, false);
        ASSERT_FALSE(j.is_discarded()) << trace;
        dl::DumpIndex index;
        dl::IndexOptions io;
        io.useCache = false;
        dl::IndexReport rep;
        std::string error;
        ASSERT_TRUE(dl::indexDump(demo, io, index, rep, error)) << error;
        const dl::AnalysisResult a = dl::analyze(index);
        const dl::OpStates st = dl::computeOpStates(index, &a, a.nearLimitThreshold);
        const dltest::TraceFacts f = dltest::checkTrace(j, index, a, st);
        EXPECT_EQ(f.instants, 1u);
    }
};

}  // namespace

TEST_F(ExportTraceCli, WritesTheTraceOfAFolderAndOfItsIndex) {
    const fs::path out = tmp.path / "run.json";
    const CliRun r = run(q(demo) + " -o " + q(out));
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("Trace written to"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("origin marked"), std::string::npos) << r.output;
    checkAgainstIndex(out);
    // From the .dlx: the same trace (the index names the same dump).
    const fs::path dlx = tmp.path / "demo.dlx";
    ASSERT_EQ(dltest::runCli("index " + q(demo) + " --no-cache -o " + q(dlx)).code, 0);
    const fs::path out2 = tmp.path / "from-dlx.json";
    ASSERT_EQ(run(q(dlx) + " -o " + q(out2)).code, 0);
    EXPECT_EQ(dltest::readText(out2), dltest::readText(out));
}

TEST_F(ExportTraceCli, StandardOutputHoldsOnlyTheTrace) {
    const CliRun r = dltest::runCli("export-trace " + q(demo) + " --no-cache -o -", 60, "2>/dev/null");
    ASSERT_EQ(r.code, 0);
    const json j = json::parse(r.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output.substr(0, 200);
    EXPECT_TRUE(j.contains("traceEvents"));
}

TEST_F(ExportTraceCli, NeverWritesIntoTheDump) {
    const fs::path inside = fs::path(demo) / "run.json";
    const CliRun r = run(q(demo) + " -o " + q(inside));
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_FALSE(fs::exists(inside));
    // Given a rank folder, the output beside it is still inside the dump.
    for (const auto& e : fs::directory_iterator(demo))
        if (e.is_directory() && e.path().filename().string().starts_with("rank_")) {
            const fs::path beside = fs::path(demo) / "beside.json";
            EXPECT_EQ(run(q(e.path()) + " -o " + q(beside)).code, 2);
            EXPECT_FALSE(fs::exists(beside));
            break;
        }
    // From a .dlx, the dump it names is protected too.
    const fs::path dlx = tmp.path / "demo.dlx";
    ASSERT_EQ(dltest::runCli("index " + q(demo) + " --no-cache -o " + q(dlx)).code, 0);
    EXPECT_EQ(run(q(dlx) + " -o " + q(inside)).code, 2);
    EXPECT_FALSE(fs::exists(inside));
}

TEST_F(ExportTraceCli, NothingReadableIsStatus2AndNoFile) {
    const fs::path empty = tmp.path / "empty", junk = tmp.path / "junk";
    fs::create_directories(empty);
    dltest::writeFile(
        junk / "rank_0" / "net" / "0" / "1" / "Add.Add-op1.0.0.1700000000000001.output.0.DefaultFormat.npy",
        "not a numpy file");
    dltest::writeFile(junk / "step0" / "rank0" / "dump.json", "{\"task\": \"statistics\", \"data\": {");
    for (const fs::path& d : {empty, junk}) {
        SCOPED_TRACE(d.filename().string());
        const fs::path out = tmp.path / (d.filename().string() + ".json");
        const CliRun r = run(q(d) + " -o " + q(out));
        EXPECT_EQ(r.code, 2) << r.output;
        EXPECT_NE(r.output.find("othing readable"), std::string::npos) << r.output;
        EXPECT_NE(r.output.find("no trace written"), std::string::npos) << r.output;
        EXPECT_FALSE(fs::exists(out));
    }
    // The junk folder's reasons are named.
    const CliRun r = run(q(junk) + " -o " + q(tmp.path / "j.json"));
    EXPECT_NE(r.output.find("not an npy file"), std::string::npos) << r.output;
    // A path that does not exist, and a missing -o: usage errors.
    EXPECT_EQ(run(q(tmp.path / "nowhere") + " -o " + q(tmp.path / "n.json")).code, 2);
    EXPECT_EQ(run(q(demo)).code, 2);
}

TEST_F(ExportTraceCli, ListedInHelp) {
    const CliRun r = dltest::runCli("--help");
    EXPECT_EQ(r.code, 0);
    EXPECT_NE(r.output.find("export-trace"), std::string::npos) << r.output;
    const CliRun sub = dltest::runCli("export-trace --help");
    EXPECT_EQ(sub.code, 0);
    EXPECT_NE(sub.output.find("Exit status"), std::string::npos) << sub.output;
}

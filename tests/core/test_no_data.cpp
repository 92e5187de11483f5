// Never an all-clear when nothing could be read, and the index's warnings carried through to
// `analyze` (JSON, text, exit status): run as a user runs it, through dumplens-cli.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "core/demo/demo_dumps.h"
#include "tests/core/cli_run.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using dltest::TempDir;
using dltest::writeFile;

namespace {

using dltest::CliRun;

// stdout only: the JSON must parse on its own.
CliRun cli(const std::string& args) { return dltest::runCli(args, 60, "2>/dev/null"); }

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

// A clean demo run with a few npy files emptied, as a full disk leaves them.
struct PartlyUnreadable {
    TempDir dir{"dumplens_nodata_"};
    std::vector<std::string> emptied;
    PartlyUnreadable() {
        dl::demo::DemoOptions o;
        o.scenario = dl::demo::DemoScenario::Clean;
        o.iterations = 2;
        o.writeStatistics = false;
        dl::demo::DemoVariantInfo info;
        std::string error;
        if (!dl::demo::writeDemoVariant(dir.path.string(), o, info, error)) throw std::runtime_error(error);
        for (const auto& e : fs::recursive_directory_iterator(dir.path / "rank_1"))
            if (e.is_regular_file() && e.path().extension() == ".npy" && emptied.size() < 3) {
                fs::resize_file(e.path(), 0);
                emptied.push_back(fs::relative(e.path(), dir.path).string());
            }
    }
};

}  // namespace

TEST(NoData, EmptyFolderIsNoDataWithExitStatus2) {
    TempDir d;
    const CliRun j = cli("analyze " + q(d.path) + " --json --no-cache");
    EXPECT_EQ(j.code, 2);
    const auto doc = nlohmann::json::parse(j.output);
    EXPECT_EQ(doc["verdict"], "no_data");
    EXPECT_EQ(doc["first_overflow"], nullptr);
    const CliRun t = cli("analyze " + q(d.path) + " --no-cache");
    EXPECT_EQ(t.code, 2);
    EXPECT_NE(t.output.find("No data: nothing readable in"), std::string::npos) << t.output;
    EXPECT_EQ(t.output.find("clean"), std::string::npos) << t.output;
}

TEST(NoData, JunkFilesAreNoDataAndNamed) {
    TempDir d;
    writeFile(d.path / "rank_0" / "net" / "0" / "0" / "MatMul.MatMul-op1.1.1.1700000000000001.output.0.DefaultFormat.npy",
              "this is not a numpy file at all");
    writeFile(d.path / "junk.npy", std::string(200, '\x7f'));
    writeFile(d.path / "notes.txt", "hello");
    const CliRun j = cli("analyze " + q(d.path) + " --json --no-cache");
    EXPECT_EQ(j.code, 2);
    const auto doc = nlohmann::json::parse(j.output);
    EXPECT_EQ(doc["verdict"], "no_data");
    // Every unreadable npy is named with a reason.
    std::size_t named = 0;
    for (const auto& w : doc["warnings"]) {
        ASSERT_TRUE(w.contains("path") && w.contains("reason")) << w;
        if (w["path"].is_string() && w["path"].get<std::string>().find(".npy") != std::string::npos) {
            ++named;
            EXPECT_FALSE(w["reason"].get<std::string>().empty());
        }
    }
    EXPECT_GE(named, 2u) << doc["warnings"];
}

TEST(NoData, PartlyUnreadableCleanRunSaysHowMuchWasRead) {
    PartlyUnreadable d;
    ASSERT_EQ(d.emptied.size(), 3u);
    const CliRun j = cli("analyze " + q(d.dir.path) + " --json --no-cache");
    EXPECT_EQ(j.code, 0);
    const auto doc = nlohmann::json::parse(j.output);
    EXPECT_EQ(doc["verdict"], "clean");
    EXPECT_GE(doc["unreadable_files"].get<int>(), 3);
    for (const std::string& e : d.emptied) {
        const bool listed = std::any_of(doc["warnings"].begin(), doc["warnings"].end(), [&](const nlohmann::json& w) {
            return w["path"].is_string() && w["path"].get<std::string>().find(fs::path(e).filename().string()) != std::string::npos;
        });
        EXPECT_TRUE(listed) << e << " not in " << doc["warnings"];
    }
    // Same index warnings as `index --json`.
    const auto idx = nlohmann::json::parse(cli("index " + q(d.dir.path) + " --json --no-cache").output);
    std::size_t fileWarnings = 0;
    for (const auto& w : doc["warnings"]) fileWarnings += w["path"].is_string();
    EXPECT_EQ(fileWarnings, idx["warnings"].size());
    const CliRun t = cli("analyze " + q(d.dir.path) + " --no-cache");
    EXPECT_NE(t.output.find("Verdict: clean among"), std::string::npos) << t.output;
    EXPECT_NE(t.output.find("file(s) could not be read"), std::string::npos) << t.output;
}

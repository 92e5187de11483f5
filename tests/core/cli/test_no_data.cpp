// Never an all-clear when nothing could be read, and the index's warnings carried through to
// `analyze` (JSON, text, exit status): run as a user runs it, through dumplens-cli.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
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
    writeFile(
        d.path / "rank_0" / "net" / "0" / "0" / "MatMul.MatMul-op1.1.1.1700000000000001.output.0.DefaultFormat.npy",
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
            return w["path"].is_string() &&
                w["path"].get<std::string>().find(fs::path(e).filename().string()) != std::string::npos;
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

// A dump read in full whose index only notes how it coped (no timestamps and no order source:
// ops ordered by file name) is clean without "files could not be read"; the note still shows.
TEST(NoData, IndexNotesAreNotUnreadableFiles) {
    TempDir d;
    const std::string half1(reinterpret_cast<const char*>("\x00\x3c\x00\x3c\x00\x3c\x00\x3c"), 8);  // four fp16 1.0
    for (const char* op : {"Default--network--MatMul-op1", "Default--network--Add-op2"})
        writeFile(d.path / "llama" / "device_0" / "iteration_1" /
                      (std::string(op) + "_output_0_shape_4_Float16_DefaultFormat.bin"),
                  half1);
    writeFile(d.path / ".metadata" / "data_dump.json",
              R"({"common_dump_settings":{"dump_mode":0,"path":"/d","net_name":"llama","iteration":1,)"
              R"("input_output":2,"kernels":[],"support_device":[0]},"e2e_dump_settings":{"enable":true}})");
    const CliRun j = cli("analyze " + q(d.path) + " --json --no-cache");
    ASSERT_EQ(j.code, 0) << j.output;
    const auto doc = nlohmann::json::parse(j.output);
    EXPECT_EQ(doc["verdict"], "clean");
    EXPECT_EQ(doc["counts"]["readable_tensors"], 2);
    EXPECT_EQ(doc["unreadable_files"], 0) << doc["warnings"];
    for (const auto& w : doc["warnings"]) EXPECT_EQ(w["unreadable"], false) << w;
    const bool noted = std::any_of(doc["warnings"].begin(), doc["warnings"].end(), [](const nlohmann::json& w) {
        return w["path"].is_string() &&
            w["reason"].get<std::string>().find("ordered by file name") != std::string::npos;
    });
    EXPECT_TRUE(noted) << doc["warnings"];
    const CliRun t = cli("analyze " + q(d.path) + " --no-cache");
    EXPECT_NE(t.output.find("Verdict: clean  ("), std::string::npos) << t.output;
    EXPECT_EQ(t.output.find("could not be read"), std::string::npos) << t.output;
    EXPECT_NE(t.output.find("Index notes:"), std::string::npos) << t.output;
}

// Truncated npy, a bad statistic.csv row and a broken Opdebug record on an overflowing run: every
// one in analyze --json as {"path","reason"}, counted once per file, and the text ends with them.
TEST(NoData, EveryUnreadableKindIsCarriedThroughAnOverflow) {
    TempDir d;
    dl::demo::DemoOptions o;
    o.layout = dl::demo::DemoLayout::Ms24KernelByKernel;
    o.mode = dl::demo::OverflowMode::InfNan;
    o.iterations = 6;
    dl::demo::DemoVariantInfo info;
    std::string error;
    ASSERT_TRUE(dl::demo::writeDemoVariant(d.path.string(), o, info, error)) << error;
    std::string npy, csv;
    for (const auto& e : fs::recursive_directory_iterator(d.path / "rank_1")) {
        if (npy.empty() && e.path().extension() == ".npy") npy = fs::relative(e.path(), d.path).string();
        if (csv.empty() && e.path().filename() == "statistic.csv") csv = fs::relative(e.path(), d.path).string();
    }
    ASSERT_FALSE(npy.empty() || csv.empty());
    fs::resize_file(d.path / npy, 20);
    std::string text;
    {
        std::ifstream in(d.path / csv);
        std::stringstream s;
        s << in.rdbuf();
        text = s.str();
    }
    const std::size_t second = text.find('\n', text.find('\n') + 1);
    writeFile(d.path / csv,
              text.substr(0, second + 1) + "Add,Default_Add-op1,0,0,x,output,0,8,float16\n" + text.substr(second + 1));
    const std::string opdebug = "rank_3/Baichuan2/0/2/Opdebug.Node_OpDebug.99.0.1700000000000001.output.0.json";
    writeFile(d.path / opdebug, "{\"AI Core\": {broken");
    const CliRun j = cli("analyze " + q(d.path) + " --json --no-cache");
    ASSERT_EQ(j.code, 0);
    const auto doc = nlohmann::json::parse(j.output);
    EXPECT_EQ(doc["verdict"], "overflow");
    EXPECT_EQ(doc["unreadable_files"], 3) << doc["warnings"];
    for (const std::string& p : {npy, csv, opdebug}) {
        const bool listed = std::any_of(doc["warnings"].begin(), doc["warnings"].end(), [&](const nlohmann::json& w) {
            return w["path"] == p && w["unreadable"] == true && !w["reason"].get<std::string>().empty() &&
                w["reason"].get<std::string>().find(d.path.string()) == std::string::npos;  // named once, relative
        });
        EXPECT_TRUE(listed) << p << " not in " << doc["warnings"];
    }
    const CliRun t = cli("analyze " + q(d.path) + " --no-cache");
    const std::size_t tail = t.output.rfind("3 file(s) could not be read:");
    ASSERT_NE(tail, std::string::npos) << t.output;
    for (const std::string& p : {npy, csv, opdebug}) EXPECT_NE(t.output.find(p, tail), std::string::npos) << p;
}

// `dumplens-cli watch` run as a user runs it, a writer landing files while it watches: the JSON
// lines, --exec once, --until-overflow, SIGINT / SIGTERM with the summary and exit status, and a
// cache that cannot be written said once (for `index` too).
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/core/cli_run.h"
#include "tests/core/temp_dir.h"
#include "tests/core/watch/chunked_writer.h"
#include "tests/core/watch/two_rank_dump.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

fs::path realDump(const char* version, const char* name) {
    return fs::path(DUMPLENS_TEST_DATA_DIR) / "real/mindspore" / version / name;
}

std::vector<dltest::Landing> dumpFiles(const fs::path& dump) {
    std::vector<dltest::Landing> out;
    for (auto& l : dltest::executionOrder(dump, false))
        if (l.rel.find('/') != std::string::npos) out.push_back(std::move(l));
    return out;
}

std::vector<json> jsonLines(const std::string& text) {
    std::vector<json> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) out.push_back(json::parse(line));
    return out;
}

// dumplens-cli in the background, stdout and stderr into files (under `timeout`, so a watch that
// ignores its signals still ends).
class Background {
public:
    Background(const std::string& args, const fs::path& outDir) : out(outDir / "stdout"), err(outDir / "stderr") {
        const std::string cmd =
            "exec timeout 60 " + std::string(DUMPLENS_CLI_PATH) + " " + args + " >" + q(out) + " 2>" + q(err);
        std::string sh = "/bin/sh", c = "-c", line = cmd;
        char* argv[] = {sh.data(), c.data(), line.data(), nullptr};
        EXPECT_EQ(posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv, environ), 0);
    }
    ~Background() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            wait();
        }
    }
    std::string stdoutText() const { return dltest::readText(out); }
    std::string stderrText() const { return dltest::readText(err); }
    // Polls stdout until `pred` holds (false when the process ended first or the ceiling passed).
    bool waitForOutput(const std::function<bool(const std::string&)>& pred) {
        for (int i = 0; i < 6000; ++i) {
            if (pred(stdoutText())) return true;
            int status = 0;
            if (::waitpid(pid, &status, WNOHANG) == pid) {
                pid = -1;
                code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                return pred(stdoutText());
            }
            std::this_thread::sleep_for(10ms);
        }
        return false;
    }
    int signal(int sig) {
        if (pid > 0) ::kill(pid, sig);
        return wait();
    }
    int wait() {
        if (pid > 0) {
            int status = 0;
            ::waitpid(pid, &status, 0);
            pid = -1;
            code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        return code;
    }

private:
    fs::path out, err;
    pid_t pid = -1;
    int code = -1;
};

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

TEST(CliWatch, HelpListsWatchLikeTheOtherCommands) {
    const dltest::CliRun r = dltest::runCli("--help");
    EXPECT_EQ(r.code, 0);
    EXPECT_NE(r.output.find("  watch "), std::string::npos) << r.output;
    const dltest::CliRun w = dltest::runCli("watch --help");
    EXPECT_EQ(w.code, 0);
    for (const char* opt : {"--until-overflow", "--exec", "--json", "--settle-ms"})
        EXPECT_NE(w.output.find(opt), std::string::npos) << opt;
}

// A two-rank dump whose late rank overflows an iteration earlier (tests/core/watch/two_rank_dump.h):
// two overflow events (the second moves it earlier), --exec run at the first only; SIGINT then
// gives the summary and 0.
TEST(CliWatch, ExecRunsOnceAndSigintEndsWithTheOverflow) {
    const auto early = dltest::rankFiles(0, dltest::kEarlyRankBadIteration);
    const auto late = dltest::rankFiles(1, dltest::kLateRankBadIteration);
    dltest::TempDir tmp;
    const fs::path dir = tmp.path / "dump", marker = tmp.path / "exec.txt";
    fs::create_directories(dir);
    Background watch(
        "watch " + q(dir) + " --json --settle-ms 100 --cache-dir " + q(tmp.path / "cache") +
            " --exec 'echo "
            "\"$DUMPLENS_OP|$DUMPLENS_OP_TYPE|$DUMPLENS_RANK|$DUMPLENS_ITERATION|$DUMPLENS_KIND|$DUMPLENS_DUMP\" >> " +
            marker.string() + "'",
        tmp.path);
    ASSERT_TRUE(watch.waitForOutput([](const std::string& s) { return s.find("\"watching\"") != std::string::npos; }));
    dltest::ChunkedWriter writer;
    for (const auto& f : early) writer.land(dir, f.rel, f.bytes, 2ms);
    ASSERT_TRUE(watch.waitForOutput([](const std::string& s) { return count(s, "\"event\":\"overflow\"") >= 1; }));
    for (const auto& f : late) writer.land(dir, f.rel, f.bytes, 2ms);
    ASSERT_TRUE(watch.waitForOutput([](const std::string& s) { return count(s, "\"event\":\"overflow\"") >= 2; }))
        << watch.stdoutText();
    EXPECT_EQ(watch.signal(SIGINT), 0) << watch.stderrText();
    const std::vector<json> lines = jsonLines(watch.stdoutText());
    ASSERT_GE(lines.size(), 4u);
    EXPECT_EQ(lines.front()["event"], "watching");
    EXPECT_EQ(lines.back()["event"], "stopped");
    EXPECT_EQ(lines.back()["overflow"], true);
    std::vector<json> overflows;
    int lastProgress = -1;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        EXPECT_TRUE(lines[i].contains("event"));
        if (lines[i]["event"] == "overflow") overflows.push_back(lines[i]);
        if (lines[i]["event"] == "progress") lastProgress = int(i);
    }
    EXPECT_GE(lastProgress, 0);
    ASSERT_GE(overflows.size(), 2u);
    EXPECT_EQ(overflows.front()["first_overflow"]["rank"], 0);
    EXPECT_EQ(overflows.back()["first_overflow"]["rank"], 1);
    EXPECT_EQ(overflows.back()["first_overflow"]["iteration"], dltest::kLateRankBadIteration);
    EXPECT_EQ(lines.back()["first_overflow"], overflows.back()["first_overflow"]);
    EXPECT_EQ(lines.back()["summary"], "overflow: Mul Mul-op2 on rank 1, iteration 1, output.0 (inf)");
    // Once, with the first overflow's names.
    std::ifstream in(marker);
    std::vector<std::string> runs;
    for (std::string line; std::getline(in, line);) runs.push_back(line);
    ASSERT_EQ(runs.size(), 1u);
    const json& first = overflows.front()["first_overflow"];
    EXPECT_EQ(runs.front(),
              first["op_name"].get<std::string>() + "|" + first["op_type"].get<std::string>() + "|" +
                  std::to_string(first["rank"].get<int>()) + "|" + std::to_string(first["iteration"].get<int>()) + "|" +
                  first["kind"].get<std::string>() + "|" + fs::weakly_canonical(dir).string());
}

TEST(CliWatch, SigintOnACleanRunSaysCleanSoFarAndExitsOne) {
    for (const int sig : {SIGINT, SIGTERM}) {
        SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
        dltest::TempDir tmp;
        const fs::path dir = tmp.path / "dump";
        const auto files = dumpFiles(realDump("2.0.0", "train_fixed"));
        dltest::ChunkedWriter writer;
        writer.landAll(dir, files, 0ms);  // already there when the watch starts
        Background watch("watch " + q(dir) + " --settle-ms 50 --no-cache", tmp.path);
        ASSERT_TRUE(watch.waitForOutput([&](const std::string& s) {
            return s.find(std::to_string(files.size()) + " files") != std::string::npos &&
                s.find(" 0 being written") != std::string::npos;
        })) << watch.stdoutText();
        EXPECT_EQ(watch.signal(sig), 1) << watch.stderrText();
        const std::string out = watch.stdoutText();
        const dltest::CliRun index = dltest::runCli("index --json --no-cache " + q(dir), 30, "2>/dev/null");
        const json summary = json::parse(index.output);
        const std::string want =
            "stopped: clean so far: " + std::to_string(summary["tensors"].get<long>()) + " tensors, ranks 0, ";
        EXPECT_NE(out.find(want), std::string::npos) << out << "\nwanted: " << want;
        EXPECT_EQ(out.find("OVERFLOW"), std::string::npos) << out;
    }
}

// A finished dump: --until-overflow exits 0 right after the event, which names what analyze names.
TEST(CliWatch, UntilOverflowExitsAtTheFirstOverflowEvent) {
    dltest::TempDir tmp;
    const fs::path dir = tmp.path / "dump";
    dltest::ChunkedWriter writer;
    writer.landAll(dir, dumpFiles(realDump("2.7.0", "forward_mul")), 0ms);
    const dltest::CliRun r =
        dltest::runCli("watch " + q(dir) + " --until-overflow --json --settle-ms 50 --no-cache", 30, "2>/dev/null");
    ASSERT_EQ(r.code, 0) << r.output;
    const std::vector<json> lines = jsonLines(r.output);
    ASSERT_GE(lines.size(), 3u);
    EXPECT_EQ(lines.front()["event"], "watching");
    EXPECT_EQ(lines[lines.size() - 2]["event"], "overflow");
    EXPECT_EQ(lines.back()["event"], "stopped");
    EXPECT_EQ(lines.back()["reason"], "until_overflow");
    const dltest::CliRun a = dltest::runCli("analyze --json --no-cache " + q(dir), 30, "2>/dev/null");
    const json fo = json::parse(a.output)["first_overflow"];
    for (const char* key : {"op_name", "op_type", "rank", "iteration", "tensor", "kind", "op_index", "tensor_index"})
        EXPECT_EQ(lines[lines.size() - 2]["first_overflow"][key], fo[key]) << key;
}

TEST(CliWatch, UnwritableCacheIsSaidOnceOnStderrForWatchAndIndex) {
    dltest::TempDir tmp;
    const fs::path dir = tmp.path / "dump";
    dltest::ChunkedWriter writer;
    writer.landAll(dir, dumpFiles(realDump("2.7.0", "forward_mul")), 0ms);
    dltest::writeFile(tmp.path / "a_file", "x");
    const fs::path cache = tmp.path / "a_file" / "cache";  // under a regular file: never creatable
    const dltest::CliRun w =
        dltest::runCli("watch " + q(dir) + " --until-overflow --json --settle-ms 50 --cache-dir " + q(cache));
    EXPECT_EQ(w.code, 0) << w.output;
    EXPECT_EQ(count(w.output, "cache not written"), 1u) << w.output;
    const std::string errOnly =
        dltest::runCli("index " + q(dir) + " --cache-dir " + q(cache), 30, "2>&1 >/dev/null").output;
    EXPECT_EQ(count(errOnly, "cache not written"), 1u) << errOnly;
    EXPECT_NE(errOnly.find(cache.string()), std::string::npos) << errOnly;
}

TEST(CliWatch, AFileIsNotAFolder) {
    dltest::TempDir tmp;
    dltest::writeFile(tmp.path / "f", "x");
    const dltest::CliRun r = dltest::runCli("watch " + q(tmp.path / "f") + " --json");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("is not a folder"), std::string::npos) << r.output;
}

}  // namespace

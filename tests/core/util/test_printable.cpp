// Text bound for a terminal: dl::printable escapes what a terminal would act on, and every
// dumplens-cli command prints file names that carry escape sequences as text (reports, errors,
// CSV and JSON alike), never raw.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/index/dump_indexer.h"
#include "core/index/index_file.h"
#include "core/io/npy_writer.h"
#include "core/util/printable.h"
#include "tests/core/cli_run.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

TEST(Printable, EscapesControlsAndKeepsText) {
    EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");
    EXPECT_EQ(printable("\r\a\b\x7f"), "\\x0d\\x07\\x08\\u007f");
    EXPECT_EQ(printable("x\ny\tz"), "x\\x0ay\\x09z");
    EXPECT_EQ(printable("x\ny\tz", true), "x\ny\tz");
    // U+009B (CSI as one character) is C2 9B in UTF-8; other UTF-8 passes unchanged.
    EXPECT_EQ(printable("a\xc2\x9b"
                        "31mb"),
              "a\\u009b31mb");
    EXPECT_EQ(printable("caf\xc3\xa9 \xe4\xb8\xad \xc2\xa0"), "caf\xc3\xa9 \xe4\xb8\xad \xc2\xa0");
    // The JSON reading of the escaped text is the original character.
    EXPECT_EQ(nlohmann::json::parse("\"" + printable("\xc2\x9b\x7f") + "\"").get<std::string>(), "\xc2\x9b\x7f");
}

TEST(Printable, PiecesSplitInsideAC1ControlAreJoined) {
    std::string out;
    const std::string_view first("ab\xc2", 3);
    const std::size_t used = appendPrintable(first, false, out);
    EXPECT_EQ(used, 2u);  // the lead byte waits for its partner
    EXPECT_EQ(out, "ab");
    const std::string rest = std::string(first.substr(used)) +
        "\x9b"
        "c";
    EXPECT_EQ(appendPrintable(rest, true, out), rest.size());
    EXPECT_EQ(out, "ab\\u009bc");
    out.clear();
    EXPECT_EQ(appendPrintable("z\xc2", true, out), 2u);  // at the end it is passed as it is
    EXPECT_EQ(out, "z\xc2");
}

namespace {

using dltest::CliRun;
CliRun runCli(const std::string& args) { return dltest::runCli(args, 60); }

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// No byte a terminal acts on: no C0 control but newline and tab, no DEL, no UTF-8 C1.
bool terminalSafe(const std::string& s, std::string& where) {
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        const bool c1 =
            c == 0xc2 && i + 1 < s.size() && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9f;
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c1) {
            where = s.substr(i >= 40 ? i - 40 : 0, 80);
            return false;
        }
    }
    return true;
}

}  // namespace

// A dump folder and an op whose names carry an erase-screen, a retitle (OSC ... BEL) and a C1 CSI:
// index, analyze, compare (text, CSV, JSON), inspect, merge and the error paths print them escaped.
TEST(Printable, EveryCliOutputEscapesHostileNames) {
    dltest::TempDir dir("dumplens_printable_");
    const std::string evil =
        "\x1b[2J\x1b]0;owned\x07\xc2\x9b"
        "31m";
    const fs::path dump = dir.path / ("dump" + evil), it = dump / "rank_0/Net/0/0";
    fs::create_directories(it);
    std::string bytes, error;
    ASSERT_TRUE(encodeFloats({1, std::numeric_limits<float>::infinity(), 3}, DType::Float16, bytes, error)) << error;
    const std::string op = "Add" + evil + "-op1";
    const fs::path npy = it / ("Add." + op + ".7.2.1700000000000100.output.0.DefaultFormat.npy");
    ASSERT_TRUE(writeNpyFile(npy.string(), DType::Float16, {3}, bytes, error)) << error;
    dltest::writeFile(it / ("junk" + evil + ".bin"), "xx");
    const fs::path dlx = dir.path / ("i" + evil + ".dlx");
    const fs::path out = dir.path / "out.dlx";

    const std::vector<std::pair<std::string, std::string>> runs = {
        {"index", "index --no-cache " + quoted(dump)},
        {"index -o", "index --no-cache -o " + quoted(dlx) + " " + quoted(dump)},
        {"analyze", "analyze --no-cache " + quoted(dump)},
        {"analyze --json", "analyze --no-cache --json " + quoted(dump)},
        {"compare", "compare --no-cache " + quoted(dump) + " " + quoted(dump)},
        {"compare --csv", "compare --no-cache --csv " + quoted(dump) + " " + quoted(dump)},
        {"compare --json", "compare --no-cache --json " + quoted(dump) + " " + quoted(dump)},
        {"inspect", "inspect " + quoted(npy)},
        {"merge", "merge -o " + quoted(out) + " " + quoted(dlx) + " " + quoted(dir.path / ("missing" + evil + ".dlx"))},
        {"analyze missing", "analyze " + quoted(dir.path / ("missing" + evil))},
        {"inspect missing", "inspect " + quoted(dir.path / ("missing" + evil + ".npy"))},
    };
    for (const auto& [name, args] : runs) {
        const CliRun r = runCli(args);
        ASSERT_NE(r.code, 124) << name;
        std::string where;
        EXPECT_TRUE(terminalSafe(r.output, where)) << name << ": raw control near: " << where;
        // The name is there, escaped: ESC as \x1b (JSON's own \u001b in JSON), the C1 CSI as \u009b.
        const bool json = name.find("--json") != std::string::npos;
        EXPECT_NE(r.output.find(json ? "\\u001b[2J" : "\\x1b[2J"), std::string::npos) << name << ": " << r.output;
        EXPECT_NE(r.output.find("\\u009b31m"), std::string::npos) << name << ": " << r.output;
    }
    // JSON stays JSON, and reads back the real name.
    const CliRun j = runCli("analyze --no-cache --json " + quoted(dump));
    const auto parsed = nlohmann::json::parse(j.output, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << j.output;
    bool found = false;
    const std::function<void(const nlohmann::json&)> visit = [&](const nlohmann::json& v) {
        if (v.is_string()) found |= v.get<std::string>().find(op) != std::string::npos;
        if (v.is_structured())
            for (const auto& x : v) visit(x);
    };
    visit(parsed);
    EXPECT_TRUE(found) << "the op's real name is not in the JSON";
}

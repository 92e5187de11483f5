// Files caught half-written: an .npy held open past the settle time, with and without kernel
// events; a file that stays broken; a statistic.csv that grows row by row while MindSpore keeps
// it open. What the watch may say and when.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/io/npy_writer.h"
#include "core/watch/file_completeness.h"
#include "tests/core/temp_dir.h"
#include "tests/core/watch/chunked_writer.h"
#include "tests/core/watch/watch_session.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

std::string npyBytes(const std::vector<float>& values) {
    std::string payload, error;
    EXPECT_TRUE(dl::encodeFloats(values, dl::DType::Float16, payload, error)) << error;
    return dl::makeNpyHeader("<f2", {std::int64_t(values.size())}) + payload;
}

constexpr float kInf = std::numeric_limits<float>::infinity();
const std::string kFolder = "rank_0/Net/0/0/";
// MindSpore 1.3-2.3 names: {type}.{name}.{task}.{stream}.{timestamp}.{io}.{slot}.{format}.npy
std::string tensorRel(const std::string& type, const std::string& name, int ts, const char* io) {
    return kFolder + type + "." + name + ".0.0." + std::to_string(1700000000000000LL + ts) + "." + io +
        ".0.DefaultFormat.npy";
}

dl::WatchOptions optionsFor(const fs::path& dir, bool inotify) {
    dl::WatchOptions o;
    o.dir = dir.string();
    o.settleMs = 50;
    o.useInotify = inotify;
    o.useCache = false;
    o.progressIntervalMs = 0;
    return o;
}

bool unreadableWarning(const dl::WatchEvent& e) {
    return e.kind == dl::WatchEventKind::Warning && e.json.value("severity", "") == "unreadable";
}

TEST(WatchPartialFiles, CompletenessFromTheFilesOwnBytes) {
    dltest::TempDir tmp;
    const std::string npy = npyBytes({1, 2, 3, 4});
    const auto check = [&](const std::string& name, const std::string& bytes) {
        dltest::writeFile(tmp.path / name, bytes);
        return dl::looksComplete((tmp.path / name).string(), bytes.size());
    };
    EXPECT_TRUE(check("a.npy", npy));
    EXPECT_FALSE(check("b.npy", npy.substr(0, npy.size() - 1)));  // payload short by one byte
    EXPECT_FALSE(check("c.npy", npy.substr(0, 40)));              // header cut
    EXPECT_FALSE(check("d.npy", npy.substr(0, 5)));
    EXPECT_TRUE(check("e.npy", "not an npy file at all"));  // broken for good: the reader says why
    EXPECT_TRUE(check("statistic.csv", "a,b\n1,2\n"));
    EXPECT_FALSE(check("statistic2.csv", "a,b\n1,"));
    EXPECT_TRUE(check("dump.json", "{\"data\": {}}\n"));
    EXPECT_FALSE(check("dump2.json", "{\"data\": {"));
    EXPECT_FALSE(check("empty.bin", ""));
}

// The output showing the overflow is written in two chunks, the pause between them well past
// the settle time, the file held open: neither the events nor the settle time may read it early.
TEST(WatchPartialFiles, HeldOpenPastTheSettleTimeIsNeverUnreadable) {
    for (const bool inotify : {true, false}) {
        SCOPED_TRACE(inotify ? "inotify" : "rescanning");
        dltest::TempDir tmp;
        const fs::path dir = tmp.path / "dump";
        fs::create_directories(dir);
        dltest::ChunkedWriter writer;
        const std::string culprit = tensorRel("Mul", "Mul-op2", 30, "output");
        std::atomic<int> early{0};
        dltest::WatchSession watch(optionsFor(dir, inotify), [&](const dl::WatchEvent& e) {
            if (e.kind == dl::WatchEventKind::Overflow && !writer.complete(culprit)) ++early;
        });
        ASSERT_TRUE(watch.waitForKind(dl::WatchEventKind::Watching));
        writer.land(dir, tensorRel("Add", "Add-op1", 0, "input"), npyBytes({1, 2, 3, 4}), 1ms);
        writer.land(dir, tensorRel("Add", "Add-op1", 10, "output"), npyBytes({2, 4, 6, 8}), 1ms);
        writer.land(dir, tensorRel("Mul", "Mul-op2", 20, "input"), npyBytes({2, 4, 6, 8}), 1ms);
        writer.land(dir, culprit, npyBytes({40000, kInf, 3, 4}), 400ms);  // 8x the settle time
        ASSERT_TRUE(watch.waitForKind(dl::WatchEventKind::Overflow));
        watch.stop();
        EXPECT_EQ(early.load(), 0);
        const json fo = watch.events(dl::WatchEventKind::Overflow).back().json["first_overflow"];
        EXPECT_EQ(fo["op_name"], "Mul-op2");
        EXPECT_EQ(fo["tensor"], "output.0");
        EXPECT_EQ(fo["kind"], "inf");
        for (const auto& e : watch.events()) EXPECT_FALSE(unreadableWarning(e)) << e.json.dump();
    }
}

// Closed with its payload missing and never finished: after the settle (and grace) time it is a
// warning naming the file, said once.
TEST(WatchPartialFiles, StillBrokenAfterSettlingIsOneWarning) {
    dltest::TempDir tmp;
    const fs::path dir = tmp.path / "dump";
    fs::create_directories(dir);
    dltest::WatchSession watch(optionsFor(dir, true));
    ASSERT_TRUE(watch.waitForKind(dl::WatchEventKind::Watching));
    dltest::ChunkedWriter writer;
    writer.land(dir, tensorRel("Add", "Add-op1", 10, "output"), npyBytes({1, 2, 3, 4}), 1ms);
    const std::string broken = tensorRel("Mul", "Mul-op2", 20, "output");
    const std::string bytes = npyBytes({1, 2, 3, 4});
    writer.land(dir, broken, bytes.substr(0, bytes.size() - 3), 1ms);
    ASSERT_TRUE(
        watch.waitFor([&](const dl::WatchEvent& e) { return unreadableWarning(e) && e.json["path"] == broken; }));
    // Another file after it: the warning is not said again.
    writer.land(dir, tensorRel("Add", "Add-op3", 30, "output"), npyBytes({1, 2, 3, 4}), 1ms);
    ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
        return e.kind == dl::WatchEventKind::Progress && e.json["files"] == 3 && e.json["files_being_written"] == 0;
    }));
    watch.stop();
    int said = 0;
    for (const auto& e : watch.events()) said += unreadableWarning(e) && e.json["path"] == broken;
    EXPECT_EQ(said, 1);
    EXPECT_TRUE(watch.events(dl::WatchEventKind::Overflow).empty());
}

// MindSpore 2.3+ statistics mode: one statistic.csv per iteration folder, a row per tensor as the
// kernel runs, the file kept open. Each row is written in two chunks; the next row waits until
// the watch has indexed this one, so every step of the growth is seen.
TEST(WatchPartialFiles, StatisticCsvGrowingRowByRow) {
    dltest::TempDir tmp;
    const fs::path dir = tmp.path / "dump";
    const fs::path csv = dir / kFolder / "statistic.csv";
    fs::create_directories(csv.parent_path());
    constexpr int kRows = 8, kBadRow = 5;
    std::atomic<int> rowsComplete{0};
    std::atomic<int> overflowAtRows{-1};
    dltest::WatchSession watch(optionsFor(dir, true), [&](const dl::WatchEvent& e) {
        if (e.kind == dl::WatchEventKind::Overflow && overflowAtRows < 0) overflowAtRows = rowsComplete.load();
    });
    ASSERT_TRUE(watch.waitForKind(dl::WatchEventKind::Watching));
    const int fd = ::open(csv.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    const auto put = [&](const std::string& s) { ASSERT_EQ(::write(fd, s.data(), s.size()), ssize_t(s.size())); };
    put("Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,L2Norm "
        "Value\n");
    for (int k = 0; k < kRows; ++k) {
        const std::string max = k == kBadRow ? "inf" : std::to_string(10 + k);
        const std::string row = "Add,Default_Add-op" + std::to_string(k) + ",0,0," +
            std::to_string(1733905446822806LL + 100 * k) + ",output,0,4,float16,\"(2)\"," + max + ",1," +
            (k == kBadRow ? "inf" : "5") + "\n";
        put(row.substr(0, row.size() / 2));
        std::this_thread::sleep_for(5ms);
        put(row.substr(row.size() / 2));
        ++rowsComplete;
        ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
            return e.kind == dl::WatchEventKind::Progress && e.json["tensors"] == k + 1;
        })) << "row "
            << k;
    }
    ASSERT_TRUE(watch.waitForKind(dl::WatchEventKind::Overflow));
    const dl::WatchSummary s = watch.stop();
    ::close(fd);
    EXPECT_GT(overflowAtRows.load(), kBadRow);  // not before the bad row was complete
    const auto overflows = watch.events(dl::WatchEventKind::Overflow);
    ASSERT_EQ(overflows.size(), 1u);
    EXPECT_EQ(overflows.front().json["first_overflow"]["op_name"], "Default_Add-op" + std::to_string(kBadRow));
    EXPECT_EQ(overflows.front().json["first_overflow"]["kind"], "inf");
    EXPECT_EQ(s.tensors, std::uint64_t(kRows));
    EXPECT_EQ(s.tablesParsed, std::uint64_t(kRows));  // the table parsed once per row seen, whole
    for (const auto& e : watch.events()) EXPECT_FALSE(unreadableWarning(e)) << e.json.dump();
}

}  // namespace

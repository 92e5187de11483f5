// dl::watchDump against a writer landing real and demo dumps into a watched folder while the
// watch runs: the overflow it names (against NumPy's verdict or `analyze` of the finished dump),
// when it names it (never before the file showing it is complete), what it never says (a file
// being written is not unreadable), and that it keeps watching a clean run.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/index/dump_indexer.h"
#include "tests/core/shared_demo.h"
#include "tests/core/temp_dir.h"
#include "tests/core/watch/chunked_writer.h"
#include "tests/core/watch/two_rank_dump.h"
#include "tests/core/watch/watch_session.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

fs::path realDump(const char* version, const char* name) {
    return fs::path(DUMPLENS_TEST_DATA_DIR) / "real/mindspore" / version / name;
}

json numpyVerdict(const fs::path& dump) {
    std::ifstream in(dump / "expected.json");
    return json::parse(in)["first_nonfinite_output"];
}

// `analyze --json`'s first_overflow of the finished dump, indexed from scratch.
json finishedFirstOverflow(const fs::path& dump) {
    dl::IndexOptions io;
    io.useCache = false;
    dl::DumpIndex index;
    dl::IndexReport report;
    std::string error;
    EXPECT_TRUE(dl::indexDump(dump.string(), io, index, report, error)) << error;
    dl::AnalysisOptions ao;
    ao.replay = false;
    return dl::toJson(index, dl::analyze(index, ao))["first_overflow"];
}

// The dump's files without the corpus' own notes (expected.json, run.log, ... beside rank_0).
std::vector<dltest::Landing> dumpFiles(const fs::path& dump, bool interleave) {
    std::vector<dltest::Landing> out;
    for (auto& l : dltest::executionOrder(dump, interleave))
        if (l.rel.find('/') != std::string::npos) out.push_back(std::move(l));
    return out;
}

std::set<std::string> filesUnder(const fs::path& root) {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.is_regular_file()) out.insert(fs::relative(e.path(), root).generic_string());
    return out;
}

dl::WatchOptions optionsFor(const fs::path& dir, const fs::path& cache) {
    dl::WatchOptions o;
    o.dir = dir.string();
    o.settleMs = 100;
    o.cacheDir = cache.string();
    o.progressIntervalMs = 0;
    return o;
}

bool unreadableWarning(const dl::WatchEvent& e) {
    return e.kind == dl::WatchEventKind::Warning && e.json.value("severity", "") == "unreadable";
}

TEST(DumpWatch, RealTrainingRunOverflowIsNamedOnceItsFileIsComplete) {
    for (const char* version : {"2.0.0", "2.10.0"}) {
        SCOPED_TRACE(version);
        const fs::path source = realDump(version, "train_sqrtgrad");
        const json want = numpyVerdict(source);
        dltest::TempDir tmp;
        const fs::path dir = tmp.path / "dump";
        fs::create_directories(dir);
        dltest::ChunkedWriter writer;
        std::atomic<int> earlyEvents{0};
        dltest::WatchSession watch(optionsFor(dir, tmp.path / "cache"), [&](const dl::WatchEvent& e) {
            if (e.kind == dl::WatchEventKind::Overflow && e.json["first_overflow"]["op_name"] == want["op_name"] &&
                !writer.complete(want["path"]))
                ++earlyEvents;
        });
        ASSERT_TRUE(watch.waitForKind(dl::WatchEventKind::Watching));
        const auto files = dumpFiles(source, false);
        writer.landAll(dir, files, 3ms);
        ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
            return e.kind == dl::WatchEventKind::Overflow && e.json["first_overflow"]["op_name"] == want["op_name"];
        }));
        // Everything indexed: the answer can no longer move.
        ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
            return e.kind == dl::WatchEventKind::Progress && e.json["files"] == files.size() &&
                e.json["files_being_written"] == 0;
        }));
        const dl::WatchSummary s = watch.stop();
        EXPECT_EQ(earlyEvents.load(), 0);
        const auto overflows = watch.events(dl::WatchEventKind::Overflow);
        ASSERT_FALSE(overflows.empty());
        const json& fo = overflows.back().json["first_overflow"];
        EXPECT_EQ(fo["op_type"], want["op_type"]);
        EXPECT_EQ(fo["op_name"], want["op_name"]);
        EXPECT_EQ(fo["iteration"], want["iteration"]);
        EXPECT_EQ(fo["tensor"], "output." + std::to_string(want["slot"].get<int>()));
        // Shaped as analyze --json's, field for field.
        const json finished = finishedFirstOverflow(dir);
        // Positions in an index (tensor_index, op_index) are the watcher's index at that moment, which
        // later files may shift: present, but not compared with the finished dump's.
        for (const auto& [key, value] : finished.items())
            if (key.ends_with("_index"))
                EXPECT_TRUE(fo.contains(key)) << key;
            else
                EXPECT_EQ(fo[key], value) << key;
        EXPECT_EQ(fo.size(), finished.size());
        EXPECT_TRUE(overflows.back().json["chain"].is_array());
        for (const auto& e : watch.events()) EXPECT_FALSE(unreadableWarning(e)) << e.json.dump();
        ASSERT_TRUE(s.overflow.has_value());
        EXPECT_EQ(s.overflow->opName, want["op_name"]);
        EXPECT_EQ(watch.events().back().kind, dl::WatchEventKind::Stopped);
        // Never wrote into the watched folder; the cache went beside it.
        std::set<std::string> landed;
        for (const auto& f : files) landed.insert(f.rel);
        EXPECT_EQ(filesUnder(dir), landed);
        EXPECT_FALSE(filesUnder(tmp.path / "cache").empty());
    }
}

TEST(DumpWatch, CleanRunGivesNoOverflowAndKeepsWatching) {
    const fs::path source = realDump("2.7.0", "train_fixed");
    ASSERT_TRUE(numpyVerdict(source).is_null());
    dltest::TempDir tmp;
    const fs::path dir = tmp.path / "dump";
    fs::create_directories(dir);
    dltest::WatchSession watch(optionsFor(dir, tmp.path / "cache"));
    ASSERT_TRUE(watch.waitForKind(dl::WatchEventKind::Watching));
    dltest::ChunkedWriter writer;
    const auto files = dumpFiles(source, false);
    writer.landAll(dir, files, 2ms);
    ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
        return e.kind == dl::WatchEventKind::Progress && e.json["files"] == files.size() &&
            e.json["files_being_written"] == 0;
    }));
    EXPECT_FALSE(watch.finished());  // still watching after the last file
    // More files of a clean run still give nothing: a later iteration's files land.
    writer.land(dir, "rank_0/extra_note.txt", "not a dump file\n", 1ms);
    ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
        return e.kind == dl::WatchEventKind::Progress && e.json["files"] == files.size() + 1;
    }));
    EXPECT_FALSE(watch.finished());
    const dl::WatchSummary s = watch.stop();
    EXPECT_TRUE(watch.events(dl::WatchEventKind::Overflow).empty());
    EXPECT_FALSE(s.overflow.has_value());
    EXPECT_TRUE(s.text.starts_with("clean so far: ")) << s.text;
    EXPECT_NE(s.text.find("ranks 0,"), std::string::npos) << s.text;
    const json stopped = watch.events().back().json;
    EXPECT_EQ(stopped["event"], "stopped");
    EXPECT_EQ(stopped["overflow"], false);
    EXPECT_TRUE(stopped["first_overflow"].is_null());
    // The same tensors as an index of the finished dump.
    dl::IndexOptions io;
    io.useCache = false;
    dl::DumpIndex index;
    dl::IndexReport report;
    std::string error;
    ASSERT_TRUE(dl::indexDump(dir.string(), io, index, report, error));
    EXPECT_EQ(s.tensors, index.tensors.size());
    for (const auto& e : watch.events()) EXPECT_FALSE(unreadableWarning(e)) << e.json.dump();
}

// Rank 0's files first, then rank 1's, whose overflow is an iteration earlier (two_rank_dump.h).
TEST(DumpWatch, LateRankMovesTheFirstOverflowEarlier) {
    dltest::TempDir tmp;
    const fs::path dir = tmp.path / "dump";
    fs::create_directories(dir);
    dltest::WatchSession watch(optionsFor(dir, tmp.path / "cache"));
    ASSERT_TRUE(watch.waitForKind(dl::WatchEventKind::Watching));
    dltest::ChunkedWriter writer;
    const auto early = dltest::rankFiles(0, dltest::kEarlyRankBadIteration);
    const auto late = dltest::rankFiles(1, dltest::kLateRankBadIteration);
    for (const auto& f : early) writer.land(dir, f.rel, f.bytes, 2ms);
    ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
        return e.kind == dl::WatchEventKind::Progress && e.json["files"] == early.size() &&
            e.json["files_being_written"] == 0;
    }));
    const auto before = watch.events(dl::WatchEventKind::Overflow);
    ASSERT_EQ(before.size(), 1u);
    const json firstSeen = before.back().json["first_overflow"];
    EXPECT_EQ(firstSeen["rank"], 0);
    EXPECT_EQ(firstSeen["iteration"], dltest::kEarlyRankBadIteration);
    EXPECT_EQ(firstSeen["op_name"], "Mul-op2");
    EXPECT_EQ(firstSeen["op_name"], finishedFirstOverflow(dir)["op_name"]);  // what analyze says of these files
    EXPECT_TRUE(before.back().json["moved_from"].is_null());
    for (const auto& f : late) writer.land(dir, f.rel, f.bytes, 2ms);
    ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
        return e.kind == dl::WatchEventKind::Overflow && e.json["first_overflow"]["rank"] == 1;
    }));
    ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
        return e.kind == dl::WatchEventKind::Progress && e.json["files"] == early.size() + late.size() &&
            e.json["files_being_written"] == 0;
    }));
    watch.stop();
    const auto overflows = watch.events(dl::WatchEventKind::Overflow);
    ASSERT_EQ(overflows.size(), 2u);  // the late rank's later iterations do not move it again
    const json& moved = overflows.back().json;
    EXPECT_EQ(moved["first_overflow"]["iteration"], dltest::kLateRankBadIteration);
    EXPECT_EQ(moved["first_overflow"]["op_name"], "Mul-op2");
    EXPECT_EQ(moved["moved_from"]["rank"], 0);
    EXPECT_EQ(moved["moved_from"]["iteration"], dltest::kEarlyRankBadIteration);
    const json finished = finishedFirstOverflow(dir);
    for (const char* key : {"op_name", "rank", "iteration", "tensor", "kind"})
        EXPECT_EQ(moved["first_overflow"][key], finished[key]) << key;
    for (const auto& e : watch.events()) EXPECT_FALSE(unreadableWarning(e)) << e.json.dump();
}

// The demo cluster (4 pipeline stages, the origin on rank 3 and its overflow carried to the other
// ranks in the same iteration), files interleaved across ranks as the job writes them.
TEST(DumpWatch, InterleavedRanksEndOnTheFinishedDumpsAnswer) {
    for (const bool kbk : {false}) {
        SCOPED_TRACE(kbk ? "MindSpore 2.4 kernel by kernel" : "MindSpore 2.2 A+M");
        dl::demo::DemoOptions o;  // three iterations, the overflow in the last: ~1,700 files
        o.iterations = 3;
        o.overflowIteration = 2;
        o.decoyIteration = 1;
        if (kbk) o.layout = dl::demo::DemoLayout::Ms24KernelByKernel;
        dl::demo::DemoVariantInfo info;
        const fs::path source = dltest::sharedDemoVariant(o, info);
        const json want = finishedFirstOverflow(source);
        dltest::TempDir tmp;
        const fs::path dir = tmp.path / "dump";
        fs::create_directories(dir);
        dltest::WatchSession watch(optionsFor(dir, tmp.path / "cache"));
        ASSERT_TRUE(watch.waitForKind(dl::WatchEventKind::Watching));
        dltest::ChunkedWriter writer;
        const auto files = dumpFiles(source, true);
        writer.landAll(dir, files, 0ms);
        const bool settled = watch.waitFor([&](const dl::WatchEvent& e) {
            return e.kind == dl::WatchEventKind::Progress && e.json["files"] == files.size() &&
                e.json["files_being_written"] == 0;
        });
        if (!settled) {  // say where it stopped: the last progress and every warning or note
            const auto progress = watch.events(dl::WatchEventKind::Progress);
            ADD_FAILURE() << files.size() << " files landed; last progress: "
                          << (progress.empty() ? std::string("none") : progress.back().json.dump());
            for (const auto& e : watch.events())
                if (e.kind == dl::WatchEventKind::Warning || e.kind == dl::WatchEventKind::Note)
                    ADD_FAILURE() << e.json.dump();
            return;
        }
        const dl::WatchSummary summary = watch.stop();
        // Every analysis ran on the cut index (the whole one only when it cannot number an op).
        EXPECT_GT(summary.analyses, 0u);
        EXPECT_EQ(summary.cutAnalyses, summary.analyses);
        const auto overflows = watch.events(dl::WatchEventKind::Overflow);
        ASSERT_FALSE(overflows.empty());
        for (const char* key : {"op_name", "op_type", "rank", "iteration", "tensor", "kind"})
            EXPECT_EQ(overflows.back().json["first_overflow"][key], want[key]) << key;
        for (const auto& e : watch.events()) EXPECT_FALSE(unreadableWarning(e)) << e.json.dump();
    }
}

TEST(DumpWatch, FolderCreatedAfterTheWatchStarts) {
    const fs::path source = realDump("2.10.0", "forward_mul");
    const json want = numpyVerdict(source);
    dltest::TempDir tmp;
    const fs::path dir = tmp.path / "later" / "dump";  // neither folder exists yet
    dltest::WatchSession watch(optionsFor(dir, tmp.path / "cache"));
    ASSERT_TRUE(watch.waitForKind(dl::WatchEventKind::Note));
    EXPECT_NE(watch.events().front().text.find("waiting for"), std::string::npos);
    EXPECT_TRUE(watch.events(dl::WatchEventKind::Watching).empty());
    EXPECT_FALSE(fs::exists(tmp.path / "later"));  // the watch made nothing
    fs::create_directories(tmp.path / "later");
    // The job makes its whole tree as it goes: rank_0/, then the net and iteration folders.
    dltest::ChunkedWriter writer;
    writer.landAll(dir, dumpFiles(source, false), 2ms);
    ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
        return e.kind == dl::WatchEventKind::Overflow && e.json["first_overflow"]["op_name"] == want["op_name"];
    }));
    watch.stop();
    EXPECT_EQ(watch.events(dl::WatchEventKind::Watching).size(), 1u);
    EXPECT_EQ(watch.events(dl::WatchEventKind::Watching).front().json["dir"], fs::weakly_canonical(dir).string());
}

TEST(DumpWatch, MsprobeDumpJsonLandsAfterItsTensors) {
    // Tensor mode: dump_tensor_data/*.pt land first (msprobe saves them as the step runs), dump.json
    // at the end of the step. Before dump.json they must not pass for tensor files of their own.
    const fs::path source = fs::path(DUMPLENS_TEST_DATA_DIR) / "real/msprobe/dumps/26.2.0/tensor_L1/fp16_overflow";
    ASSERT_TRUE(fs::exists(source));
    dl::IndexOptions io;
    io.useCache = false;
    dl::DumpIndex finished;
    dl::IndexReport report;
    std::string error;
    ASSERT_TRUE(dl::indexDump(source.string(), io, finished, report, error)) << error;
    ASSERT_TRUE(finishedFirstOverflow(source).is_null());  // msprobe's corpus run is clean
    std::vector<dltest::Landing> tensors, tables;
    for (const auto& e : fs::recursive_directory_iterator(source))
        if (e.is_regular_file()) {
            const std::string rel = fs::relative(e.path(), source).generic_string();
            (rel.find("dump_tensor_data/") != std::string::npos ? tensors : tables).push_back({e.path(), rel});
        }
    std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) { return a.rel < b.rel; });
    dltest::TempDir tmp;
    const fs::path dir = tmp.path / "dump";
    fs::create_directories(dir);
    dltest::WatchSession watch(optionsFor(dir, tmp.path / "cache"));
    ASSERT_TRUE(watch.waitForKind(dl::WatchEventKind::Watching));
    dltest::ChunkedWriter writer;
    writer.landAll(dir, tensors, 0ms);
    ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
        return e.kind == dl::WatchEventKind::Progress && e.json["files"] == tensors.size() &&
            e.json["files_being_written"] == 0;
    }));
    for (const auto& e : watch.events(dl::WatchEventKind::Progress)) EXPECT_EQ(e.json["tensors"], 0) << e.json.dump();
    writer.landAll(dir, tables, 20ms);
    ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
        return e.kind == dl::WatchEventKind::Progress && e.json["files"] == tensors.size() + tables.size() &&
            e.json["files_being_written"] == 0;
    }));
    const dl::WatchSummary s = watch.stop();
    EXPECT_EQ(s.tensors, finished.tensors.size());
    EXPECT_TRUE(watch.events(dl::WatchEventKind::Overflow).empty());
    for (const auto& e : watch.events()) EXPECT_FALSE(unreadableWarning(e)) << e.json.dump();
}

// msprobe rewrites dump.json whole (json.dump of every entry so far, every 1,000 entries and at
// stop): there is no "where it was left" to read on from, the file is truncated and written again.
// So it is read once per rewrite, when the rewrite is complete; never half-written. Here three
// rewrites, each of more entries, each written in two chunks with a pause past the settle time.
TEST(DumpWatch, MsprobeDumpJsonRewrittenWholeIsReadOncePerRewrite) {
    const fs::path source = fs::path(DUMPLENS_TEST_DATA_DIR) / "real/msprobe/dumps/26.2.0/statistics_L1/fp16_overflow";
    ASSERT_TRUE(fs::exists(source / "dump.json"));
    // The versions msprobe would write: the head, the first n entries of "data" (one per line
    // "  \"Name\": {" at indent 2), the closing brackets; as json.dump(indent=1) writes them.
    std::vector<std::string> lines;
    {
        std::istringstream in(dltest::readText(source / "dump.json"));
        for (std::string l; std::getline(in, l);) lines.push_back(l);
    }
    std::vector<std::size_t> entryStarts;
    for (std::size_t i = 0; i < lines.size(); ++i)
        if (lines[i].starts_with("  \"")) entryStarts.push_back(i);
    ASSERT_EQ(entryStarts.size(), 66u);
    const auto version = [&](std::size_t entries) {
        std::string out;
        const std::size_t end = entries < entryStarts.size() ? entryStarts[entries] : lines.size() - 2;
        for (std::size_t i = 0; i < end; ++i) out += lines[i] + "\n";
        if (out.ends_with("},\n")) out.replace(out.size() - 3, 3, "}\n");
        return out + " }\n}";
    };
    ASSERT_EQ(version(66), dltest::readText(source / "dump.json"));
    dltest::TempDir tmp;
    const fs::path dir = tmp.path / "dump";
    fs::create_directories(dir);
    dltest::WatchSession watch(optionsFor(dir, tmp.path / "cache"));
    ASSERT_TRUE(watch.waitForKind(dl::WatchEventKind::Watching));
    dltest::ChunkedWriter writer;
    writer.land(dir, "construct.json", dltest::readText(source / "construct.json"), 0ms);
    writer.land(dir, "stack.json", dltest::readText(source / "stack.json"), 0ms);
    ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
        return e.kind == dl::WatchEventKind::Progress && e.json["files"] == 2 && e.json["files_being_written"] == 0;
    }));
    std::size_t want = 0;
    for (const std::size_t entries : {22, 44, 66}) {
        SCOPED_TRACE(entries);
        const std::string text = version(entries);
        {  // what `index` gives for this version
            dltest::TempDir alone;
            dltest::writeFile(alone.path / "dump.json", text);
            dl::IndexOptions io;
            io.useCache = false;
            dl::DumpIndex idx;
            dl::IndexReport report;
            std::string error;
            ASSERT_TRUE(dl::indexDump(alone.path.string(), io, idx, report, error)) << error;
            ASSERT_GT(idx.tensors.size(), want);
            want = idx.tensors.size();
        }
        writer.land(dir, "dump.json", text, 150ms);  // truncated, then two chunks 150 ms apart
        ASSERT_TRUE(watch.waitFor([&](const dl::WatchEvent& e) {
            return e.kind == dl::WatchEventKind::Progress && e.json["tensors"] == want;
        }));
    }
    const dl::WatchSummary s = watch.stop();
    EXPECT_EQ(s.tablesParsed, 3u);  // once per rewrite, never a half-written one
    EXPECT_EQ(s.tensors, want);
    // analyze of the finished dump: clean (its Mean and L2 norm overflowed in fp16, not its values).
    const json finished = finishedFirstOverflow(source);
    EXPECT_TRUE(finished.is_null());
    EXPECT_TRUE(watch.events(dl::WatchEventKind::Overflow).empty());
    for (const auto& e : watch.events()) EXPECT_FALSE(unreadableWarning(e)) << e.json.dump();
}

}  // namespace

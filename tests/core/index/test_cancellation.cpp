// Every long core job stops mid-way when its stop token is requested, returns with `cancelled` set
// and publishes none of its partial work. The stop is requested from the job's own progress
// callback after a known amount of work, so what "mid-way" means is exact, not timed.
#include <gtest/gtest.h>

#include <filesystem>
#include <stop_token>

#include "core/analysis/overflow_analyzer.h"
#include "core/compare/run_comparison.h"
#include "core/index/dump_indexer.h"
#include "core/index/shard_builder.h"
#include "core/query/op_state.h"
#include "core/timeline/timeline_data.h"
#include "tests/core/analysis_test_builder.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;
using dltest::IndexBuilder;

namespace {

constexpr std::uint32_t kOps = 3 * kWorkStride + 17;  // three progress strides and a bit

// kOps clean MatMuls on two ranks, the last one overflowing: only a complete analysis finds it.
// `scale` changes every statistic, so that two runs built with different scales diverge everywhere.
IndexBuilder bigRun(double scale = 1.0) {
    IndexBuilder b;
    for (std::uint32_t i = 0; i < kOps; ++i) {
        const bool last = i + 1 == kOps;
        const dl::TensorStats s = last ? dltest::dataStats(65504.0, 3) : dltest::dataStats(scale * (1.0 + i % 7));
        b.op(i < kOps / 2 ? 0 : 1, 0, "MatMul", "MatMul-op" + std::to_string(i),
             {dltest::in(0, dltest::dataStats(1.0)), dltest::out(0, s)});
    }
    return b;
}

// Built once: every test reads it.
const DumpIndex& runA() {
    static const IndexBuilder a = bigRun();
    return a.idx;
}

// A progress callback that requests a stop on its `stopAt`-th call and counts every call.
struct StopAfter {
    std::stop_source source;
    int stopAt = 1;
    int calls = 0;
    WorkCallback callback() {
        return [this](std::uint64_t, std::uint64_t) {
            if (++calls == stopAt) source.request_stop();
        };
    }
};

TEST(Cancellation, AnalyzeStopsMidWayAndPublishesNothing) {
    const AnalysisResult full = analyze(runA());
    ASSERT_FALSE(full.cancelled);
    ASSERT_TRUE(full.overflow);  // the last op: found only by a pass over every op
    EXPECT_EQ(full.tensorsExamined, 2u * kOps);

    StopAfter stop;
    AnalysisOptions opt;
    opt.stop = stop.source.get_token();
    opt.progress = stop.callback();
    const AnalysisResult r = analyze(runA(), opt);
    EXPECT_TRUE(r.cancelled);
    EXPECT_EQ(stop.calls, 1);  // stopped at the first look after the stop: no further stride done
    EXPECT_FALSE(r.overflow);
    EXPECT_FALSE(r.firstOverflow);
    EXPECT_TRUE(r.chain.empty());
    EXPECT_TRUE(r.iterations.empty());
    EXPECT_EQ(r.tensorsExamined, 0u);
    EXPECT_TRUE(r.nearLimitTensors.empty());
    EXPECT_TRUE(r.evidence.empty());
}

TEST(Cancellation, TimelineStopsInEitherPhaseAndPublishesNothing) {
    const OpStates states = computeOpStates(runA(), nullptr);
    const TimelineData full = buildTimeline(runA(), nullptr, states, {});
    ASSERT_FALSE(full.cancelled);
    ASSERT_EQ(full.opsShown, std::size_t(kOps));
    // Call 1 comes from the pass placing ops, the last (after every stride) before the lanes are sorted.
    const int calls = int((kOps - 1) / kWorkStride) + 1;
    for (const int stopAt : {1, calls}) {
        StopAfter stop;
        stop.stopAt = stopAt;
        TimelineOptions opt;
        opt.stop = stop.source.get_token();
        opt.progress = stop.callback();
        const TimelineData d = buildTimeline(runA(), nullptr, states, opt);
        EXPECT_TRUE(d.cancelled) << "stop at call " << stopAt;
        EXPECT_EQ(stop.calls, stopAt);
        EXPECT_TRUE(d.lanes.empty());
        EXPECT_TRUE(d.where.empty());
        EXPECT_EQ(d.opsShown, 0u);
    }
}

TEST(Cancellation, CompareStopsMidWayAndLeavesEveryRowUnjudged) {
    const IndexBuilder b = bigRun(3.0);
    CompareOptions opt;
    opt.threads = 1;  // chunks run one after another: the stop is seen by the next chunk
    const RunComparison full = compareRuns(runA(), b.idx, opt);
    ASSERT_FALSE(full.cancelled);
    ASSERT_EQ(full.rows.size(), full.alignment.tensors.size());
    ASSERT_GT(full.diverged, 0u);

    StopAfter stop;
    opt.stop = stop.source.get_token();
    opt.progress = stop.callback();
    const RunComparison c = compareRuns(runA(), b.idx, opt);
    EXPECT_TRUE(c.cancelled);
    EXPECT_EQ(stop.calls, 1);
    ASSERT_EQ(c.rows.size(), full.rows.size());  // one row per aligned tensor, as always
    for (const TensorComparison& row : c.rows) {
        EXPECT_EQ(row.verdict, Verdict::Unknown);
        EXPECT_FALSE(row.diverged);
    }
    EXPECT_EQ(c.diverged, 0u);
    EXPECT_EQ(c.firstDivergence, -1);
    EXPECT_EQ(c.bytesCompared, 0u);
}

// rank_0 with kFiles small fp16 tensors in MindSpore's npy grammar.
constexpr int kFiles = 24;
void writeDump(const fs::path& root) {
    const fs::path it = root / "rank_0/Net/0/1";
    fs::create_directories(it);
    for (int i = 0; i < kFiles; ++i)
        dltest::writeNpy(it.string(),
                         "Add.Add-op" + std::to_string(i) + ".7.2." + std::to_string(1700000000000100 + i) +
                             ".output.0.DefaultFormat.npy",
                         DType::Float16, {4}, {1.0f, 2.0f, float(i), 0.5f});
}

std::size_t filesUnder(const fs::path& dir) {
    std::size_t n = 0;
    if (fs::exists(dir))
        for (const auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file();
    return n;
}

TEST(Cancellation, IndexStopsAfterOneFileAndWritesNoCache) {
    dltest::TempDir dump, cache;
    writeDump(dump.path);
    std::stop_source source;
    int calls = 0;
    IndexOptions opt;
    opt.threads = 1;
    opt.cacheDir = cache.path.string();
    opt.stop = source.get_token();
    opt.progress = [&](const Progress& p) {
        if (p.phase == ProgressPhase::Reading && ++calls == 1) source.request_stop();  // the listing goes on
    };
    DumpIndex out;
    IndexReport report;
    std::string error;
    ASSERT_TRUE(indexDump(dump.path.string(), opt, out, report, error)) << error;
    EXPECT_TRUE(report.cancelled);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(report.filesRead, 1u);  // the one file before the stop; every other job saw it
    EXPECT_TRUE(out.ops.empty());
    EXPECT_TRUE(out.tensors.empty());
    EXPECT_EQ(filesUnder(cache.path), 0u);

    // The same dump, not stopped: every file read and its shard cached.
    IndexOptions whole = opt;
    whole.stop = {};
    whole.progress = {};
    DumpIndex all;
    IndexReport fullReport;
    ASSERT_TRUE(indexDump(dump.path.string(), whole, all, fullReport, error)) << error;
    EXPECT_FALSE(fullReport.cancelled);
    EXPECT_EQ(fullReport.filesRead, std::size_t(kFiles));
    EXPECT_EQ(all.tensors.size(), std::size_t(kFiles));
    EXPECT_EQ(filesUnder(cache.path), 1u);
}

// The progress is determinate from the listing pass on: it names the dump's file count first (0
// of 24 listed) and ends with every file listed, before any tensor file is read; the reading then
// counts the same 24 files.
TEST(Cancellation, IndexProgressCountsTheFilesFromTheListingOn) {
    dltest::TempDir dump;
    writeDump(dump.path);
    IndexOptions opt;
    opt.threads = 1;
    opt.useCache = false;
    std::vector<Progress> calls;
    opt.progress = [&](const Progress& p) { calls.push_back(p); };
    DumpIndex out;
    IndexReport report;
    std::string error;
    ASSERT_TRUE(indexDump(dump.path.string(), opt, out, report, error)) << error;
    ASSERT_GE(calls.size(), 3u);
    EXPECT_EQ(calls.front().phase, ProgressPhase::Listing);
    EXPECT_EQ(calls.front().filesDone, 0u);
    EXPECT_EQ(calls.front().filesTotal, std::uint64_t(kFiles));
    std::size_t lastListing = 0;
    for (std::size_t i = 0; i < calls.size(); ++i)
        if (calls[i].phase == ProgressPhase::Listing) lastListing = i;
    EXPECT_EQ(calls[lastListing].filesDone, std::uint64_t(kFiles));  // all listed, one shard
    for (std::size_t i = lastListing + 1; i < calls.size(); ++i) {
        EXPECT_EQ(calls[i].phase, ProgressPhase::Reading);  // the passes do not interleave
        EXPECT_EQ(calls[i].filesTotal, std::uint64_t(kFiles));
    }
    EXPECT_EQ(calls.back().filesDone, std::uint64_t(kFiles));
    EXPECT_GT(calls.back().bytesTotal, 0u);
}

// (A stop before indexDump starts: test_dump_indexer.cpp, CancelledBeforeStartReturnsWithoutCaching.)
TEST(Cancellation, StoppedScanListsNoJobs) {
    dltest::TempDir dump;
    writeDump(dump.path);
    const ScanResult scan = scanFolder(dump.path.string());
    ASSERT_EQ(scan.files.size(), std::size_t(kFiles));
    std::vector<const ScannedFile*> files;
    for (const ScannedFile& f : scan.files) files.push_back(&f);

    ShardBuilder open(dump.path.string(), "rank_0", nullptr);
    ASSERT_TRUE(open.scan(files));
    EXPECT_EQ(open.jobs().size(), std::size_t(kFiles));

    std::stop_source source;
    source.request_stop();
    ShardBuilder stopped(dump.path.string(), "rank_0", nullptr);
    EXPECT_FALSE(stopped.scan(files, source.get_token()));
    EXPECT_TRUE(stopped.jobs().empty());
}

}  // namespace

// A watch analyses a first overflow on its index cut down to what the analysis reads of the clean
// iterations before it (IncrementalIndex::mergedForFirstOverflow): the iteration folders written
// out of memory stand in by their side entries (comm ops, a loss/head op, an untimed op) or not at
// all. Its first overflow and chain, numbered back, must be those of the whole merged index, on
// pipelines (hundreds of Send/Receive pairs), clusters with and without timestamps, and the demo
// dumps; a damaged side file costs a read of the units, never a different answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/demo/cluster_scenario.h"
#include "core/demo/pipeline_scenario.h"
#include "core/index/dump_scanner.h"
#include "core/io/npy_writer.h"
#include "core/watch/incremental_index.h"
#include "tests/core/shared_demo.h"
#include "tests/core/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The folder's files in landing order: context files first, then iteration by iteration (the
// number of the iteration folder holding the file), every rank.
std::vector<dl::WatchedFile> inLandingOrder(const fs::path& root) {
    static const std::regex iterationFolder(R"(/(\d+)/[^/]+$)");
    std::vector<std::pair<long, dl::WatchedFile>> files;
    for (const dl::ScannedFile& f : dl::scanFolder(root.string()).files) {
        std::smatch m;
        const long it = std::regex_search(f.rel, m, iterationFolder) ? std::stol(m[1]) : -1;
        files.push_back({it, {f.rel, f.size, f.mtimeNs, f.stamp}});
    }
    std::stable_sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<dl::WatchedFile> out;
    for (auto& [it, f] : files) out.push_back(std::move(f));
    return out;
}

struct Outcome {
    std::uint64_t unitsCut = 0, unitsLeftOut = 0;
    std::size_t cutOps = 0, wholeOps = 0, spilledBefore = 0, spilledAfter = 0;
    std::uintmax_t spillBytes = 0, sideBytes = 0;  // the spill folder, its side file
    std::vector<std::string> notes;                // what the cut merge said
};

// The folder fed to a spilling IncrementalIndex a few files at a time, every folder settled; the
// cut analysis against the whole one.
Outcome expectCutGivesTheWholeAnswer(const fs::path& root, const std::function<void(const fs::path&)>& damage = {}) {
    SCOPED_TRACE(root.string());
    Outcome out;
    dltest::TempDir spill("dumplens_cut_spill_");
    const fs::path spillDir = spill.path / "spill";
    dl::IncrementalIndex idx(fs::absolute(root).lexically_normal().string(), "", 1);
    idx.setSpill(spillDir.string(), 1);
    const std::vector<dl::WatchedFile> files = inLandingOrder(root);
    for (std::size_t at = 0; at < files.size(); at += 16)
        idx.update(
            {files.begin() + std::ptrdiff_t(at), files.begin() + std::ptrdiff_t(std::min(files.size(), at + 16))}, {});
    for (int i = 0; i < 3; ++i) idx.update({}, {});
    EXPECT_GT(idx.spilledUnits(), 0u);
    out.spilledBefore = idx.spilledUnits();
    for (const auto& e : fs::directory_iterator(spillDir)) {
        out.spillBytes += e.file_size();
        if (e.path().extension() == ".dlside") out.sideBytes += e.file_size();
    }
    if (damage) damage(spillDir);

    dl::AnalysisOptions ao;
    ao.replay = false;
    const dl::IncrementalIndex::CutIndex cut = idx.mergedForFirstOverflow();
    out.spilledAfter = idx.spilledUnits();
    out.notes = idx.takeNotes();
    const dl::DumpIndex whole = idx.merged();
    const dl::AnalysisResult part = dl::analyze(cut.index, ao), all = dl::analyze(whole, ao);
    EXPECT_TRUE(all.firstOverflow) << dl::toText(whole, all);
    if (!all.firstOverflow || !part.firstOverflow) {
        ADD_FAILURE() << "no first overflow in the cut index";
        return out;
    }
    json first = dl::firstOverflowJson(cut.index, part), chain = dl::chainJson(cut.index, part);
    const auto op = [&](std::uint32_t i) { return cut.wholeOp(i); };
    const auto tensor = [&](std::uint32_t i) { return cut.wholeTensor(i); };
    EXPECT_TRUE(dl::renumberIndices(first, op, tensor));
    EXPECT_TRUE(dl::renumberIndices(chain, op, tensor));
    EXPECT_EQ(first.dump(1), dl::firstOverflowJson(whole, all).dump(1));
    EXPECT_EQ(chain.dump(1), dl::chainJson(whole, all).dump(1));
    EXPECT_EQ(part.clockOffsetUs, all.clockOffsetUs);
    EXPECT_EQ(part.stages.stageOfRank, all.stages.stageOfRank);
    EXPECT_EQ(part.pairs.size(), all.pairs.size());
    EXPECT_EQ(cut.from, *all.firstBadIteration);
    out.unitsCut = cut.unitsCut;
    out.unitsLeftOut = cut.unitsLeftOut;
    out.cutOps = cut.index.ops.size();
    out.wholeOps = whole.ops.size();
    return out;
}

::testing::AssertionResult writeCluster(const fs::path& root, dl::demo::ClusterScenario scenario,
                                        const dl::demo::ClusterScenarioOptions& o) {
    dl::demo::ClusterScenarioTruth truth;
    std::string error;
    if (dl::demo::writeClusterScenario(root.string(), scenario, o, truth, error)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << error;
}

TEST(WatchCutAnalysis, PipelineWithManyMicroBatches) {
    dltest::TempDir dir("dumplens_cut_");
    dl::demo::PipelineSpec spec;
    spec.pipelineStages = 4;
    spec.tensorParallel = 2;
    spec.layersPerStage = 1;
    spec.microBatches = 24;
    spec.iterations = 5;
    spec.originIteration = 3;
    spec.killedIteration = 4;
    dl::demo::ClusterScenarioOptions o;
    o.stagesInRankTable = false;
    o.rankClockOffsetUs = dl::demo::pipelineClockOffsets(8, 500000);
    dl::demo::ClusterScenarioTruth truth;
    std::string error;
    const fs::path root = dir.path / "pp4_tp2_mb24";
    ASSERT_TRUE(dl::demo::writePipelineRun(root.string(), spec, o, truth, error)) << error;
    const Outcome got = expectCutGivesTheWholeAnswer(root);
    // Every clean folder holds Send/Receive: each stands in by its side entry, far smaller.
    EXPECT_EQ(got.unitsCut, 8u * 3u);
    EXPECT_EQ(got.unitsLeftOut, 0u);
    EXPECT_LT(got.cutOps, got.wholeOps * 3 / 4);
}

TEST(WatchCutAnalysis, ClustersWithAndWithoutTimestamps) {
    for (const bool timestamps : {true, false}) {
        SCOPED_TRACE(timestamps ? "timestamps" : "no timestamps");
        dltest::TempDir dir("dumplens_cut_");
        dl::demo::ClusterScenarioOptions o;
        o.timestamps = timestamps;
        const fs::path root = dir.path / "run";
        ASSERT_TRUE(writeCluster(root, dl::demo::ClusterScenario::GlobalNorm, o));
        const Outcome got = expectCutGivesTheWholeAnswer(root);
        EXPECT_GT(got.unitsCut, 0u);
        EXPECT_LT(got.cutOps, got.wholeOps);
    }
}

// The demo dumps (their clean folders hold Send/Receive: each stands in by its side entry).
TEST(WatchCutAnalysis, DemoDumps) {
    dl::demo::DemoSummary summary;
    const std::string dumps = dltest::sharedDemoDumps(summary);
    int checked = 0;
    std::uint64_t cut = 0;
    for (const std::string& v : summary.variants) {
        dl::IncrementalIndex probe(fs::absolute(fs::path(dumps) / v).lexically_normal().string(), "", 1);
        probe.update(inLandingOrder(fs::path(dumps) / v), {});
        dl::AnalysisOptions ao;
        ao.replay = false;
        const dl::AnalysisResult r = dl::analyze(probe.merged(), ao);
        if (!r.firstBadIteration || *r.firstBadIteration == 0) continue;
        SCOPED_TRACE(v);
        const Outcome got = expectCutGivesTheWholeAnswer(fs::path(dumps) / v);
        cut += got.unitsCut;  // none in the overflow-only dump: it holds no clean op
        ++checked;
    }
    EXPECT_GE(checked, 3);
    EXPECT_GT(cut, 0u);
}

// Folders without comm ops (a data-parallel job's async dump between its AllReduces, the watch
// bench's fleet): after a rank's first clean folder, the rest are left out; the untimed op and the
// loss op a rank holds only early are kept.
TEST(WatchCutAnalysis, CleanFoldersWithoutCommOpsAreLeftOut) {
    dltest::TempDir dir("dumplens_cut_");
    const fs::path root = dir.path / "run";
    const auto write = [&](int rank, int iteration, const std::string& stem, long ts, bool inf) {
        const fs::path folder = root / ("rank_" + std::to_string(rank)) / "Net/0" / std::to_string(iteration);
        fs::create_directories(folder);
        std::vector<float> v = {1, 2, 3, 4};
        if (inf) v[2] = std::numeric_limits<float>::infinity();
        std::string payload, error;
        ASSERT_TRUE(dl::encodeFloats(v, dl::DType::Float16, payload, error)) << error;
        std::ofstream(folder / (stem + ".0.0." + std::to_string(ts) + ".output.0.DefaultFormat.npy"), std::ios::binary)
            << dl::makeNpyHeader("<f2", {4}) + payload;
    };
    for (int it = 0; it < 6; ++it)
        for (int rank = 0; rank < 4; ++rank)
            for (int k = 0; k < 5; ++k) {
                const long ts = 1700000000000000L + it * 100000L + k * 100L + rank;
                // Rank 2's loss op only in iteration 1; one op without a time stamp in iteration 2.
                const std::string stem = rank == 2 && it == 1 && k == 4 ? "SoftmaxCrossEntropyWithLogits.Loss-op9"
                                                                        : "Add.Add-op" + std::to_string(k);
                write(rank, it, stem, rank == 1 && it == 2 && k == 3 ? 0 : ts, rank == 3 && it == 4 && k == 2);
            }
    const Outcome got = expectCutGivesTheWholeAnswer(root);
    EXPECT_GT(got.unitsLeftOut, 4u);
    EXPECT_LT(got.cutOps, got.wholeOps / 2);
    // Written out compressed: the index encoding's 4 KiB section alignment would make each entry
    // ~37 KB of padding (7 GB of side file and as much of spills for 200k folders).
    ASSERT_GT(got.spilledBefore, 0u);
    EXPECT_LT(got.sideBytes / got.spilledBefore, 1024u) << got.sideBytes;
    EXPECT_LT(got.spillBytes / got.spilledBefore, 4096u) << got.spillBytes;
}

// The side file damaged behind the watch: the merge says so once and reads every folder written
// out so far whole (one pass more, not one per folder), the answer the same.
TEST(WatchCutAnalysis, ADamagedSideFileCostsReadsNotTheAnswer) {
    dltest::TempDir dir("dumplens_cut_");
    const fs::path root = dir.path / "run";
    ASSERT_TRUE(writeCluster(root, dl::demo::ClusterScenario::TensorParallel, {}));
    bool damaged = false;
    const Outcome got = expectCutGivesTheWholeAnswer(root, [&](const fs::path& spillDir) {
        const fs::path side = spillDir / "clean_iterations.dlside";
        ASSERT_TRUE(fs::exists(side));
        std::fstream f(side, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(40);
        f.write("damaged!", 8);
        damaged = true;
    });
    EXPECT_TRUE(damaged);
    ASSERT_EQ(got.notes.size(), 1u);
    EXPECT_NE(got.notes[0].find("side file unreadable"), std::string::npos) << got.notes[0];
    EXPECT_EQ(got.unitsCut, 0u);                     // every folder read whole
    EXPECT_EQ(got.spilledAfter, got.spilledBefore);  // and none taken back into memory
}

}  // namespace

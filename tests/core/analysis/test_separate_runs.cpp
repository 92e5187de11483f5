// Two runs in one parent folder (issue 27): two MindSpore rank_0 trees or two msprobe step trees
// under one root are named in the verdict (text, JSON, warning) and on their shared timeline lane;
// one run's ranks under one root, or hosts of one run with disjoint ranks, are not.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/analysis/separate_runs.h"
#include "core/query/op_state.h"
#include "core/timeline/timeline_data.h"
#include "tests/core/index_uncached.h"
#include "tests/core/temp_dir.h"

using namespace dl;
namespace fs = std::filesystem;

namespace {

void statisticCsv(const fs::path& rankDir, double maxValue) {
    dltest::writeFile(
        rankDir / "Net/0/0/statistic.csv",
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,Avg "
        "Value,Count,Negative Zero Count,Positive Zero Count,NaN Count,Negative Inf Count,Positive Inf Count,Zero "
        "Count\n"
        "Add,Add-op1,7,2,1700000000000100,output,0,8,float16,\"(4)\"," +
            std::to_string(maxValue) + ",1,2,4,0,4,0,0,0,0\n");
}

DumpIndex withRanks(const std::vector<std::pair<std::uint32_t, std::string>>& ranks) {
    DumpIndex idx;
    for (const auto& [r, folder] : ranks) {
        RankInfo info;
        info.rank = r;
        info.folder = folder;
        idx.ranks.push_back(info);
    }
    return idx;
}

}  // namespace

TEST(SeparateRuns, RunRootIsThePathAboveTheRankOrStepFolder) {
    EXPECT_EQ(runRootOf("rank_0"), "");
    EXPECT_EQ(runRootOf("runA/rank_0"), "runA");
    EXPECT_EQ(runRootOf("exp/2024-05-01/rank_3"), "exp/2024-05-01");
    EXPECT_EQ(runRootOf("step0/rank0"), "");
    EXPECT_EQ(runRootOf("runB/step1/rank0"), "runB");
    EXPECT_EQ(runRootOf("old/device_2"), "old");
    EXPECT_EQ(runRootOf(""), "");
}

TEST(SeparateRuns, OnlyARankUnderTwoRootsMakesTwoRuns) {
    EXPECT_TRUE(separateRuns(withRanks({{0, "rank_0"}, {1, "rank_1"}})).empty());
    // msprobe: one run's steps hold the same rank.
    EXPECT_TRUE(separateRuns(withRanks({{0, "step0/rank0"}, {0, "step1/rank0"}, {1, "step0/rank1"}})).empty());
    // Hosts of one run: disjoint ranks.
    EXPECT_TRUE(separateRuns(withRanks({{0, "host0/rank_0"}, {1, "host0/rank_1"}, {2, "host1/rank_2"}})).empty());
    EXPECT_EQ(separateRuns(withRanks({{0, "runB/rank_0"}, {0, "runA/rank_0"}, {1, "runA/rank_1"}})),
              (std::vector<std::string>{"runA", "runB"}));
    EXPECT_EQ(separateRuns(withRanks({{0, "rank_0"}, {0, "copy/rank_0"}})), (std::vector<std::string>{".", "copy"}));
    EXPECT_EQ(separateRuns(withRanks({{0, "a/step0/rank0"}, {0, "b/step0/rank0"}})),
              (std::vector<std::string>{"a", "b"}));
}

// Two MindSpore runs' rank_0 trees side by side, indexed: the verdict, its JSON and the CLI's text
// name both runs, and the one rank 0 lane says it holds two.
TEST(SeparateRuns, TwoRank0TreesAreNamedInTheVerdictAndTheLane) {
    dltest::TempDir root;
    statisticCsv(root.path / "fp16_run/rank_0", 3);
    statisticCsv(root.path / "bf16_run/rank_0", 5);
    const DumpIndex idx = dltest::indexUncached(root.path.string());
    ASSERT_EQ(idx.ranks.size(), 2u);
    const AnalysisResult r = analyze(idx);
    EXPECT_EQ(r.separateRuns, (std::vector<std::string>{"bf16_run", "fp16_run"}));
    const std::string text = toText(idx, r);
    EXPECT_NE(text.find("Separate runs: this folder holds 2 separate runs (bf16_run, fp16_run)"), std::string::npos)
        << text;
    const nlohmann::json j = toJson(idx, r);
    EXPECT_EQ(j["separate_runs"], nlohmann::json({"bf16_run", "fp16_run"}));
    bool warned = false;
    for (const auto& w : j["warnings"])
        warned |=
            w["reason"].get<std::string>().find("holds 2 separate runs (bf16_run, fp16_run)") != std::string::npos;
    EXPECT_TRUE(warned) << j["warnings"].dump();
    const TimelineData t = buildTimeline(idx, &r, computeOpStates(idx, &r), {});
    ASSERT_EQ(t.lanes.size(), 1u);
    EXPECT_EQ(t.lanes[0].rank, 0u);
    EXPECT_EQ(t.lanes[0].runs, 2u);
}

// Two msprobe step trees (the same dump.json in each): two runs; one run's rank folders: none.
TEST(SeparateRuns, TwoMsprobeStepTreesAreTwoRuns) {
    const fs::path sample = fs::path(DUMPLENS_SAMPLES_DIR) / "msprobe/visualization_ut_input_step0_rank0/dump.json";
    ASSERT_TRUE(fs::exists(sample)) << sample;
    dltest::TempDir root;
    for (const char* run : {"baseline", "candidate"}) {
        fs::create_directories(root.path / run / "step0/rank0");
        fs::copy_file(sample, root.path / run / "step0/rank0/dump.json");
    }
    const DumpIndex idx = dltest::indexUncached(root.path.string());
    ASSERT_FALSE(idx.ops.empty());
    EXPECT_EQ(analyze(idx).separateRuns, (std::vector<std::string>{"baseline", "candidate"}));

    dltest::TempDir one;
    statisticCsv(one.path / "rank_0", 3);
    statisticCsv(one.path / "rank_1", 4);
    const DumpIndex single = dltest::indexUncached(one.path.string());
    const AnalysisResult r = analyze(single);
    EXPECT_TRUE(r.separateRuns.empty());
    EXPECT_EQ(toText(single, r).find("Separate runs"), std::string::npos);
    for (const auto& lane : buildTimeline(single, &r, computeOpStates(single, &r), {}).lanes) EXPECT_EQ(lane.runs, 1u);
}

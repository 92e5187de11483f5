// msprobe's dump.json (and a statistic.csv without count columns) says only that a tensor holds
// some Inf/NaN (Max=+Inf, Min=-Inf): its count is "at least 1", never a made-up exact 1, in the
// report and in compare's JSON, and two runs are not told apart by such a count.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/analysis/overflow_analyzer.h"
#include "core/compare/compare_json.h"
#include "core/compare/run_comparison.h"
#include "core/compare/tensor_metrics.h"
#include "core/index/dump_indexer.h"
#include "core/query/stat_figures.h"
#include "core/report/report_content.h"
#include "tests/core/index_uncached.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;
using dltest::TempDir;
using dltest::writeFile;

namespace {

// Functional.linear.0.forward: input finite (max 900), output with the given Max/Min tokens.
std::string dumpJson(const std::string& outMax, const std::string& outMin) {
    return R"({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {
 "Functional.linear.0.forward": {
  "input_args": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [4], "Max": 900.0, "Min": -3.0, "Mean": 1.0, "Norm": 901.0}],
  "output": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [4], "Max": )" +
        outMax + R"(, "Min": )" + outMin +
        R"(, "Mean": NaN, "Norm": Infinity}]
 }}})";
}

DumpIndex indexOf(const fs::path& root) { return dltest::indexUncached(root.string()); }

const TensorRecord& outputOf(const DumpIndex& idx) {
    const auto it =
        std::find_if(idx.tensors.begin(), idx.tensors.end(), [](const TensorRecord& t) { return t.io == Io::Output; });
    EXPECT_NE(it, idx.tensors.end());
    return *it;
}

}  // namespace

TEST(NonFiniteLowerBound, MsprobeInfIsAtLeastOneNotOne) {
    TempDir d;
    writeFile(d.path / "step0" / "rank0" / "dump.json", dumpJson("Infinity", "-Infinity"));
    const DumpIndex idx = indexOf(d.path);
    const TensorStats s = idx.stats(outputOf(idx));
    EXPECT_TRUE(s.nonFiniteCountsAreLowerBounds());
    EXPECT_EQ(s.infCount(), 2u);  // one +Inf and one -Inf at least
    EXPECT_EQ(nonFiniteCountText(s, s.infCount()), "at least 2");
    // The report's origin line.
    const AnalysisResult r = analyze(idx);
    ASSERT_TRUE(r.overflow);
    const ReportContent c = buildReportContent(idx, r);
    const auto tensor =
        std::find_if(c.origin.begin(), c.origin.end(), [](const ReportField& f) { return f.label == "Tensor"; });
    ASSERT_NE(tensor, c.origin.end());
    EXPECT_NE(tensor->value.find("+ at least 2 inf"), std::string::npos) << tensor->value;
    EXPECT_EQ(tensor->value.find("+2 inf"), std::string::npos) << tensor->value;
    // Finite input: exact (no NaN/Inf count set), not a bound.
    const auto input =
        std::find_if(idx.tensors.begin(), idx.tensors.end(), [](const TensorRecord& t) { return t.io == Io::Input; });
    EXPECT_FALSE(idx.stats(*input).nonFiniteCountsAreLowerBounds());
}

TEST(NonFiniteLowerBound, CompareJsonGivesNullAndTheBound) {
    TempDir a, b;
    writeFile(a.path / "step0" / "rank0" / "dump.json", dumpJson("Infinity", "2.0"));
    writeFile(b.path / "step0" / "rank0" / "dump.json", dumpJson("NaN", "2.0"));
    const DumpIndex ia = indexOf(a.path), ib = indexOf(b.path);
    const nlohmann::json j = nlohmann::json::parse(compareJson(compareRuns(ia, ib, {}), ia, ib));
    bool seen = false;
    for (const auto& row : j["rows"]) {
        const auto& sa = row.at("stats_a");
        const auto& sb = row.at("stats_b");
        if (!sa.contains("inf_at_least")) continue;
        seen = true;
        EXPECT_TRUE(sa.at("inf").is_null()) << sa;
        EXPECT_EQ(sa.at("inf_at_least").get<int>(), 1) << sa;
        EXPECT_TRUE(sb.at("nan").is_null()) << sb;
        ASSERT_TRUE(sb.contains("nan_at_least")) << sb;
        EXPECT_EQ(sb.at("nan_at_least").get<int>(), 1) << sb;
    }
    EXPECT_TRUE(seen) << j.dump(1).substr(0, 4000);
}

TEST(NonFiniteLowerBound, StatisticCsvWithoutCountsIsABoundWithCountsExact) {
    TempDir d;
    const std::string head =
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value";
    writeFile(d.path / "bound" / "rank_0" / "net" / "0" / "1" / "statistic.csv",
              head + "\nAdd,Add-op1,1,1,1700000000000001,output,0,8,float16,\"(4)\",inf,1\n");
    writeFile(d.path / "exact" / "rank_0" / "net" / "0" / "1" / "statistic.csv",
              head + ",Positive Inf Count\nAdd,Add-op1,1,1,1700000000000001,output,0,8,float16,\"(4)\",inf,1,3\n");
    const DumpIndex bound = indexOf(d.path / "bound"), exact = indexOf(d.path / "exact");
    const TensorStats sb = bound.stats(outputOf(bound)), se = exact.stats(outputOf(exact));
    EXPECT_TRUE(sb.nonFiniteCountsAreLowerBounds());
    EXPECT_EQ(nonFiniteCountText(sb, sb.infCount()), "at least 1");
    EXPECT_FALSE(se.nonFiniteCountsAreLowerBounds());
    EXPECT_EQ(nonFiniteCountText(se, se.infCount()), "3");
    // "At least 1" and 3 do not disagree: both hold +Inf.
    TensorMetrics m;
    computeStatsMetrics(sb, se, m);
    EXPECT_FALSE(m.nanInfMismatch);
}

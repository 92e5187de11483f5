// The framework a dump came from, where the dump says it: msprobe's dump.json "framework" and
// "level" (PyTorch / MindSpore, L0 / L1 / mix) in analyze text and JSON, the index summary and the
// report; MindSpore's .dump_metadata version otherwise. Kept through shards, merges and .dlx files.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/index/dump_indexer.h"
#include "core/index/index_file.h"
#include "core/index/index_summary.h"
#include "core/index/run_framework.h"
#include "core/report/report_content.h"
#include "tests/core/index_uncached.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;
using dltest::TempDir;
using dltest::writeFile;

namespace {

// One statistics entry; `framework` empty: a dump.json from before msprobe wrote the key.
std::string dumpJson(const std::string& framework, const std::string& level) {
    std::string s = "{\n \"task\": \"statistics\",\n \"level\": \"" + level + "\",\n";
    if (!framework.empty()) s += " \"framework\": \"" + framework + "\",\n";
    return s + R"( "dump_data_dir": null,
 "data": {
  "Functional.linear.0.forward": {
   "input_args": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2], "Max": 3.0, "Min": 1.0, "Mean": 2.0, "Norm": 3.2}],
   "output": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2], "Max": 6.0, "Min": 2.0, "Mean": 4.0, "Norm": 6.3}]
  }
 }
})";
}

DumpIndex indexOf(const fs::path& root) { return dltest::indexUncached(root.string()); }

std::string reportFramework(const DumpIndex& idx) {
    const ReportContent c = buildReportContent(idx, analyze(idx));
    const auto it =
        std::find_if(c.run.begin(), c.run.end(), [](const ReportField& f) { return f.label == "Framework"; });
    return it == c.run.end() ? std::string("(none)") : it->value;
}

}  // namespace

TEST(RunFramework, MsprobePyTorchLevelMixInEveryOutput) {
    TempDir d;
    // Two ranks: two shards merged, the metadata kept through the merge.
    writeFile(d.path / "step0" / "rank0" / "dump.json", dumpJson("pytorch", "mix"));
    writeFile(d.path / "step0" / "rank1" / "dump.json", dumpJson("pytorch", "mix"));
    const DumpIndex idx = indexOf(d.path);
    const RunFramework fw = runFramework(idx);
    EXPECT_EQ(fw.name, "PyTorch");
    EXPECT_EQ(fw.msprobeLevel, "mix");
    EXPECT_EQ(fw.msprobeTask, "statistics");
    EXPECT_EQ(reportFramework(idx), "PyTorch (msprobe, level mix)");
    const AnalysisResult r = analyze(idx);
    EXPECT_NE(toText(idx, r).find("Framework: PyTorch (msprobe, level mix)\n"), std::string::npos) << toText(idx, r);
    const nlohmann::json j = toJson(idx, r);
    EXPECT_EQ(j["framework"]["name"], "PyTorch");
    EXPECT_EQ(j["framework"]["msprobe_level"], "mix");
    EXPECT_EQ(j["framework"]["version"], nullptr);
    EXPECT_NE(indexSummaryText(idx, {}).find("Framework PyTorch (msprobe, level mix)"), std::string::npos);
    // Through a .dlx file.
    TempDir out;
    std::string error;
    ASSERT_TRUE(saveIndexFile((out.path / "x.dlx").string(), idx, error)) << error;
    const DumpIndex back = indexOf(out.path / "x.dlx");
    EXPECT_EQ(reportFramework(back), "PyTorch (msprobe, level mix)");
}

TEST(RunFramework, MsprobeMindSporeLevelL0) {
    TempDir d;
    writeFile(d.path / "step3" / "rank" / "dump.json", dumpJson("mindspore", "L0"));
    const DumpIndex idx = indexOf(d.path);
    EXPECT_EQ(reportFramework(idx), "MindSpore (msprobe, level L0)");
    EXPECT_EQ(toJson(idx, analyze(idx))["framework"]["name"], "MindSpore");
}

TEST(RunFramework, OldDumpJsonWithoutFrameworkSaysUnknownButKeepsTheLevel) {
    TempDir d;
    writeFile(d.path / "step0" / "rank0" / "dump.json", dumpJson("", "L1"));
    const DumpIndex idx = indexOf(d.path);
    EXPECT_EQ(reportFramework(idx), "unknown (msprobe, level L1)");
    EXPECT_EQ(toJson(idx, analyze(idx))["framework"]["name"], nullptr);
    EXPECT_EQ(toJson(idx, analyze(idx))["framework"]["msprobe_level"], "L1");
}

TEST(RunFramework, MindSporeVersionFromDumpMetadata) {
    TempDir d;
    writeFile(d.path / "rank_0" / ".dump_metadata" / "config.json",
              R"({"device_target":"Ascend","ms_version":"2.3.1"})");
    writeFile(d.path / "rank_0" / "net" / "0" / "1" / "statistic.csv",
              "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value\n"
              "Add,Add-op1,1,1,1700000000000001,output,0,4,float16,\"(2)\",3,1\n");
    const DumpIndex idx = indexOf(d.path);
    EXPECT_EQ(reportFramework(idx), "MindSpore 2.3.1");
    EXPECT_EQ(toJson(idx, analyze(idx))["framework"]["version"], "2.3.1");
    EXPECT_EQ(toJson(idx, analyze(idx))["framework"]["msprobe_level"], nullptr);
}

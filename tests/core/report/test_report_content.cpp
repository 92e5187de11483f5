// The report content model on the demo dumps: the motivating case and its clean bf16 twin.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>

#include "core/analysis/overflow_analyzer.h"
#include "core/demo/demo_dumps.h"
#include "core/index/dump_indexer.h"
#include "core/report/report_content.h"
#include "tests/core/shared_demo.h"

using namespace dl;

namespace {

struct DemoRun {
    demo::DemoVariantInfo info;
    DumpIndex index;
    AnalysisResult result;
};

std::string field(const ReportContent& c, const std::string& label) {
    for (const auto& f : c.origin)
        if (f.label == label) return f.value;
    for (const auto& f : c.run)
        if (f.label == label) return f.value;
    for (const auto& f : c.headroom)
        if (f.label == label) return f.value;
    return "<missing " + label + ">";
}

class ReportContentTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = ::testing::TempDir() + "/dl_report_content_" + std::to_string(::getpid());
        std::filesystem::remove_all(m_dir);
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }

    // A shared variant (written once per ctest run, tests/core/shared_demo.h), or with `irFor` an
    // own copy with the graph IR it returns for the written variant in rank_<culprit>/graphs.
    void load(DemoRun& r, const std::string& name, const demo::DemoOptions& o,
              const std::function<std::string(const demo::DemoVariantInfo&)>& irFor = {}) {
        std::string error;
        std::string root;
        if (!irFor) {
            root = dltest::sharedDemoVariant(o, r.info);
        } else {
            root = m_dir + "/" + name;
            ASSERT_TRUE(demo::writeDemoVariant(root, o, r.info, error)) << error;
            const std::string graphs = root + "/rank_" + std::to_string(r.info.culpritRank) + "/graphs";
            std::filesystem::create_directories(graphs);
            std::ofstream(graphs + "/ms_output_trace_code_graph_0.ir") << irFor(r.info);
        }
        IndexOptions io;
        io.useCache = false;
        IndexReport report;
        ASSERT_TRUE(indexDump(root, io, r.index, report, error)) << error;
        r.result = analyze(r.index);
    }
    std::string m_dir;
};

TEST_F(ReportContentTest, MotivatingCase) {
    demo::DemoOptions o;
    o.layout = demo::DemoLayout::Ms24KernelByKernel;  // scoped names in the dump
    // Source lines come from rank_N/graphs/*.ir of the culprit's rank.
    const auto ir = [](const demo::DemoVariantInfo& info) {
        return "  %1 = SqrtGrad(%0)\n      : full_name_with_scope: (" + info.culpritFullName +
            ")\n      # In file /models/baichuan.py:97/ w = self.weight / norm/\n";
    };
    DemoRun withIr;
    ASSERT_NO_FATAL_FAILURE(load(withIr, "kbk_ir", o, ir));
    ASSERT_FALSE(withIr.info.culpritFullName.empty());
    const ReportContent c = buildReportContent(withIr.index, withIr.result);

    ASSERT_TRUE(c.overflow);
    EXPECT_NE(c.verdict.find("SqrtGrad"), std::string::npos) << c.verdict;
    EXPECT_NE(c.verdict.find("rank " + std::to_string(withIr.info.culpritRank)), std::string::npos) << c.verdict;
    EXPECT_EQ(field(c, "Op type"), "SqrtGrad");
    EXPECT_EQ(field(c, "Full scope"), withIr.info.culpritFullName);
    EXPECT_EQ(field(c, "Rank").substr(0, 1), std::to_string(withIr.info.culpritRank));
    EXPECT_EQ(field(c, "Iteration"), std::to_string(withIr.info.firstOverflowIteration));
    EXPECT_EQ(field(c, "Pipeline stage").substr(0, 1), "3");
    EXPECT_EQ(field(c, "Kind"), "saturated") << "the demo default is saturation mode";
    EXPECT_EQ(field(c, "Source"), "In file /models/baichuan.py:97/ w = self.weight / norm/");
    EXPECT_EQ(field(c, "Framework"), "MindSpore 2.4.1");
    EXPECT_EQ(field(c, "Ranks").substr(0, 1), "4");
    EXPECT_EQ(field(c, "Iterations").substr(0, 1), "8");

    ASSERT_FALSE(c.chain.empty());
    EXPECT_EQ(c.chain.front().steps.front().role, "origin");
    EXPECT_EQ(c.chain.front().stage, 3);
    std::size_t steps = 0;
    for (const auto& b : c.chain) steps += b.steps.size();
    EXPECT_EQ(steps, withIr.result.chain.size());
    EXPECT_EQ(c.chainTable.rows.size(), steps);
    ASSERT_EQ(c.chainTable.emphasis.size(), steps);
    EXPECT_TRUE(c.chainTable.emphasis[0]);

    // The timeline excerpt has the origin in the middle of its rank's ops.
    int originRows = 0;
    for (std::size_t i = 0; i < c.timelineNeighbours.rows.size(); ++i)
        if (c.timelineNeighbours.emphasis[i]) {
            ++originRows;
            EXPECT_EQ(c.timelineNeighbours.rows[i][2], "SqrtGrad");
            EXPECT_EQ(c.timelineNeighbours.rows[i][4].rfind("ORIGIN", 0), 0u);
        }
    EXPECT_EQ(originRows, 1);
    EXPECT_GT(c.timelineNeighbours.rows.size(), 3u);

    // Histograms: every tensor of the origin, outputs anomalous.
    const OpRecord& op = withIr.index.ops[c.originOp];
    EXPECT_EQ(c.histogramTensors.size(), op.tensorCount);
    bool anomalousOutput = false;
    for (const auto& h : c.histogramTensors) anomalousOutput |= h.anomalous && h.label.rfind("output", 0) == 0;
    EXPECT_TRUE(anomalousOutput);

    ASSERT_EQ(c.replay.rows.size(), 3u);
    EXPECT_EQ(c.replay.rows[0][3], "YES");  // fp16 overflows
    EXPECT_EQ(c.replay.rows[1][3], "no");   // bf16 does not
    EXPECT_NE(c.replayStatus.find("reproduces"), std::string::npos);
    EXPECT_NE(c.recommendation.find("bfloat16"), std::string::npos) << c.recommendation;
    EXPECT_GE(c.nearLimitTotal, 1u);
    EXPECT_FALSE(c.nearLimit.empty());
    EXPECT_TRUE(c.headroom.empty());
}

TEST_F(ReportContentTest, CleanRunIsShortAndShowsHeadroom) {
    DemoRun r;
    demo::DemoOptions o;
    o.sqrtGradPrecision = DType::BFloat16;
    ASSERT_NO_FATAL_FAILURE(load(r, "bf16", o));
    const ReportContent c = buildReportContent(r.index, r.result);
    EXPECT_FALSE(c.overflow);
    EXPECT_EQ(c.verdict.rfind("Clean run", 0), 0u) << c.verdict;
    EXPECT_EQ(c.originOp, kNoIndex);
    EXPECT_TRUE(c.origin.empty());
    EXPECT_TRUE(c.chain.empty());
    EXPECT_TRUE(c.histogramTensors.empty());
    EXPECT_TRUE(c.timelineNeighbours.empty());
    // The decoy near 40000 is the largest fp16 value: about 61% of 65504.
    const std::string largest = field(c, "Largest |x|");
    EXPECT_NE(largest.find("of the fp16 max 65504"), std::string::npos) << largest;
    const std::string headroom = field(c, "Headroom");
    EXPECT_NE(headroom.find("before fp16 overflows"), std::string::npos) << headroom;
    EXPECT_NE(field(c, "Where").find(", rank "), std::string::npos) << field(c, "Where");
    const double pct = std::stod(largest.substr(largest.find('(') + 1));
    EXPECT_GT(pct, 50.0) << largest;   // the run comes close (the near-limit values) ...
    EXPECT_LT(pct, 100.0) << largest;  // ... but never reaches 65504
    // Headroom is the room left: the share of 65504 and the headroom make the whole.
    EXPECT_NEAR(std::stod(headroom), 100.0 - pct, 0.11) << headroom << " / " << largest;
    EXPECT_GE(c.nearLimitTotal, 1u);
    // The near-limit table says the same in its two columns, for every row.
    const auto col = [&](const std::string& name) {
        return std::find(c.nearLimit.columns.begin(), c.nearLimit.columns.end(), name) - c.nearLimit.columns.begin();
    };
    const auto share = col("% of fp16 max"), room = col("Headroom");
    ASSERT_LT(std::size_t(share), c.nearLimit.columns.size());
    ASSERT_LT(std::size_t(room), c.nearLimit.columns.size());
    ASSERT_FALSE(c.nearLimit.rows.empty());
    for (std::size_t i = 0; i < c.nearLimit.rows.size(); ++i) {
        const auto& row = c.nearLimit.rows[i];
        const double s = std::stod(row[std::size_t(share)]), h = std::stod(row[std::size_t(room)]);
        EXPECT_NEAR(s + h, 100.0, 0.11) << row[0];
        EXPECT_NEAR(s, 100.0 * r.result.nearLimit[i].maxAbs / 65504.0, 0.051) << row[0];
    }
}

TEST_F(ReportContentTest, SourceIsSaidToBeMissingWithoutGraphs) {
    DemoRun r;
    ASSERT_NO_FATAL_FAILURE(load(r, "plain", demo::DemoOptions{}));
    ReportOptions opt;
    const ReportContent c = buildReportContent(r.index, r.result, opt);
    EXPECT_TRUE(c.sourceLines.empty());
    EXPECT_NE(field(c, "Source").find("not available"), std::string::npos);
    opt.readGraphIr = false;
    opt.nearLimitRows = 1;
    const ReportContent d = buildReportContent(r.index, r.result, opt);
    EXPECT_LE(d.nearLimit.rows.size(), 1u);
}

}  // namespace

// The appendix lists what could not be read; the index's notes on how it read the rest (here:
// ops ordered by file name) are warnings, not unreadable files.
TEST(ReportContentAppendix, NotesAreWarningsNotUnreadableFiles) {
    DumpIndex ix;
    ix.root = "/dump";
    ix.warnings.push_back({"device_0/iteration_1",
                           "no timestamps in the file names and no execution_order/"
                           "ms_execution_order_graph_N.csv or graphs/*.ir listing its ops for rank 0: "
                           "ops are ordered by file name",
                           WarningSeverity::Note});
    ix.warnings.push_back({"rank_0/a.npy", "not an npy file (bad magic)", WarningSeverity::Unreadable});
    const AnalysisResult r = analyze(ix);
    EXPECT_EQ(r.unreadableFiles, 1u);
    const ReportContent c = buildReportContent(ix, r);
    ASSERT_EQ(c.unreadable.size(), 1u);
    EXPECT_EQ(c.unreadable[0], "rank_0/a.npy: not an npy file (bad magic)");
    EXPECT_EQ(c.unreadableTotal, 1u);
    EXPECT_TRUE(std::any_of(c.warnings.begin(), c.warnings.end(),
                            [](const std::string& w) { return w.find("ordered by file name") != std::string::npos; }));
}

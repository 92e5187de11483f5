// The trace export (core/export/trace_events.h) on every kind of dump: the bundled demo (4 ranks,
// a chain across stages), a pipeline-simulator run (PP4 x TP2, clocks off by up to 0.2 s), real
// MindSpore and msprobe dumps (the latter without timestamps: the execution-order axis). Each
// output is parsed with nlohmann::json and checked by tests/core/export/trace_checks.h against the
// format's rules and the index; then streaming (chunks, not one string), cancellation and a sink
// that fails.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/analysis/overflow_analyzer.h"
#include "core/demo/pipeline_scenario.h"
#include "core/export/trace_events.h"
#include "core/index/dump_indexer.h"
#include "core/query/op_state.h"
#include "tests/core/export/trace_checks.h"
#include "tests/core/shared_demo.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Exported {
    dl::DumpIndex index;
    dl::AnalysisResult analysis;
    dl::OpStates states;
    std::string text;
    dl::TraceExportSummary summary;
    std::size_t chunks = 0, largestChunk = 0;
};

void exportDump(const std::string& dir, Exported& x, bool alignClocks = true) {
    dl::IndexOptions io;
    io.useCache = false;
    dl::IndexReport rep;
    std::string error;
    ASSERT_TRUE(dl::indexDump(dir, io, x.index, rep, error)) << error;
    x.analysis = dl::analyze(x.index);
    x.states = dl::computeOpStates(x.index, &x.analysis, x.analysis.nearLimitThreshold);
    dl::TraceExportOptions opt;
    opt.alignClocks = alignClocks;
    const dl::TraceSink sink = [&x](const char* d, std::size_t n, std::string&) {
        x.text.append(d, n);
        ++x.chunks;
        x.largestChunk = std::max(x.largestChunk, n);
        return true;
    };
    ASSERT_TRUE(dl::writeTraceEvents(x.index, &x.analysis, x.states, opt, sink, x.summary, error)) << error;
    EXPECT_EQ(x.summary.bytes, x.text.size());
}

json parse(const std::string& text) {
    json j = json::parse(text, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON";
    return j;
}

std::string realData(const std::string& rel) { return std::string(DUMPLENS_TEST_DATA_DIR) + "/real/" + rel; }

}  // namespace

TEST(TraceEvents, DemoHasEveryRankAndItsOrigin) {
    // The bundled case (the origin on the last stage), its Inf/NaN twin (figures JSON cannot hold
    // as numbers) and the forward origin on rank 1. None of their chains leaves its origin within
    // the analysed iteration (the flows are the pipeline test's).
    struct Variant {
        dl::demo::DemoScenario scenario;
        dl::demo::OverflowMode mode;
    };
    for (const Variant v : {Variant{dl::demo::DemoScenario::NormHeadBackward, dl::demo::OverflowMode::Saturation},
                            Variant{dl::demo::DemoScenario::NormHeadBackward, dl::demo::OverflowMode::InfNan},
                            Variant{dl::demo::DemoScenario::ForwardOrigin, dl::demo::OverflowMode::Saturation}}) {
        SCOPED_TRACE(int(v.scenario) * 10 + int(v.mode));
        dl::demo::DemoOptions o;
        o.scenario = v.scenario;
        o.mode = v.mode;
        dl::demo::DemoVariantInfo info;
        const std::string dir = dltest::sharedDemoVariant(o, info);
        Exported x;
        ASSERT_NO_FATAL_FAILURE(exportDump(dir, x));
        ASSERT_TRUE(x.analysis.overflow);
        const json j = parse(x.text);
        const dltest::TraceFacts f = dltest::checkTrace(j, x.index, x.analysis, x.states);
        EXPECT_EQ(x.summary.processes, x.index.ranks.size());
        EXPECT_EQ(f.flows, x.summary.flows);
        EXPECT_TRUE(x.summary.originMarked);
        // The origin slice is the op the analysis names, on its rank's process.
        const auto& origin = j["traceEvents"][f.sliceOfOp.at(x.analysis.firstOverflow->op)];
        EXPECT_EQ(origin["args"]["state"], "origin");
        EXPECT_EQ(origin["args"]["rank"].get<std::uint32_t>(), x.analysis.firstOverflow->rank);
        if (v.mode == dl::demo::OverflowMode::InfNan) {
            const bool nonFinite = x.text.find("\"max_abs\":\"inf\"") != std::string::npos ||
                x.text.find("\"max_abs\":\"nan\"") != std::string::npos;
            EXPECT_TRUE(nonFinite) << "no Inf/NaN figure written as a string";
        }
    }
}

TEST(TraceEvents, RawClocksKeepEachRanksOwnTime) {
    dl::demo::DemoVariantInfo info;
    const std::string dir = dltest::sharedDemoVariant(dl::demo::DemoOptions{}, info);
    Exported x;
    ASSERT_NO_FATAL_FAILURE(exportDump(dir, x, false));
    const json j = parse(x.text);
    dltest::checkTrace(j, x.index, x.analysis, x.states, false);
    EXPECT_EQ(j["otherData"]["clock_aligned"], false);
}

TEST(TraceEvents, PipelineSimulatorRun) {
    dltest::TempDir tmp("dumplens_trace_pp_");
    dl::demo::PipelineSpec spec;
    spec.pipelineStages = 4;
    spec.tensorParallel = 2;
    spec.layersPerStage = 2;
    spec.microBatches = 4;
    spec.originStage = 2;
    spec.originLane = 1;
    spec.killedIteration = 3;
    dl::demo::ClusterScenarioOptions o;
    o.stagesInRankTable = false;
    o.rankClockOffsetUs = dl::demo::pipelineClockOffsets(8, 200000);
    dl::demo::ClusterScenarioTruth truth;
    std::string error;
    const std::string root = (tmp.path / "pp4_tp2").string();
    ASSERT_TRUE(dl::demo::writePipelineRun(root, spec, o, truth, error)) << error;
    Exported x;
    ASSERT_NO_FATAL_FAILURE(exportDump(root, x));
    ASSERT_TRUE(x.analysis.firstOverflow);
    const json j = parse(x.text);
    const dltest::TraceFacts f = dltest::checkTrace(j, x.index, x.analysis, x.states);
    EXPECT_TRUE(f.timestamps);
    EXPECT_EQ(x.summary.processes, 8u);
    EXPECT_EQ(int(x.analysis.firstOverflow->rank), truth.origin.rank);
    EXPECT_GE(x.summary.flows, 3u);  // the damage reaches other stages and TP peers
    EXPECT_EQ(j["otherData"]["clock_aligned"], x.analysis.clocksAligned);
    // Streamed: many chunks, none much over a MiB (one event past the flush threshold).
    EXPECT_GT(x.chunks, 1u) << x.text.size() << " bytes";
    EXPECT_LT(x.largestChunk, (std::size_t(1) << 20) + 65536);
}

TEST(TraceEvents, RealMindSporeDump) {
    for (const char* v : {"2.0.0/multigraph", "2.7.0/train_sqrtgrad", "2.10.0/train_sqrtgrad", "2.10.0/multigraph"}) {
        SCOPED_TRACE(v);
        const std::string dir = realData(std::string("mindspore/") + v);
        ASSERT_TRUE(fs::exists(dir)) << dir;
        Exported x;
        ASSERT_NO_FATAL_FAILURE(exportDump(dir, x));
        ASSERT_GT(x.index.ops.size(), 0u);
        const json j = parse(x.text);
        const dltest::TraceFacts f = dltest::checkTrace(j, x.index, x.analysis, x.states);
        EXPECT_TRUE(f.timestamps);  // MindSpore's file names carry each op's time
        EXPECT_EQ(x.summary.slices + x.summary.opsWithoutTime, x.index.ops.size());
        EXPECT_EQ(x.summary.originMarked, x.analysis.firstOverflow.has_value());
    }
}

TEST(TraceEvents, RealMsprobeDumpUsesTheExecutionOrder) {
    for (const char* d : {"statistics_mix/fp16_overflow", "tensor_L1/fp16_overflow", "statistics_L1/softmax_good"}) {
        SCOPED_TRACE(d);
        Exported x;
        ASSERT_NO_FATAL_FAILURE(exportDump(realData(std::string("msprobe/dumps/8.3.3/") + d), x));
        ASSERT_GT(x.index.ops.size(), 0u);
        const json j = parse(x.text);
        const dltest::TraceFacts f = dltest::checkTrace(j, x.index, x.analysis, x.states);
        EXPECT_EQ(f.slices, x.index.ops.size());
        // dump.json has no times: the execution order is the axis.
        EXPECT_FALSE(f.timestamps);
        EXPECT_EQ(j["otherData"]["time_base"], "execution_order");
    }
}

TEST(TraceEvents, NamesThatAreNotUtf8StillParse) {
    // A name with a quote, a backslash, a control character and a byte that is no UTF-8.
    dltest::TempDir tmp("dumplens_trace_names_");
    dl::DumpIndex index;
    index.root = tmp.path.string();
    index.ranks.push_back({});
    dl::OpRecord o;
    o.name = index.strings.intern(std::string("Add\"\\\x01\xff-op1"));
    o.type = index.strings.intern("Add");
    o.startUs = 100;
    index.ops.push_back(o);
    dl::AnalysisResult a;
    const dl::OpStates st = dl::computeOpStates(index, &a);
    std::string text, error;
    dl::TraceExportSummary sum;
    ASSERT_TRUE(dl::writeTraceEvents(
        index, &a, st, {},
        [&](const char* d, std::size_t n, std::string&) {
            text.append(d, n);
            return true;
        },
        sum, error));
    const json j = parse(text);
    ASSERT_FALSE(j.is_discarded());
    bool found = false;
    for (const auto& e : j["traceEvents"])
        if (e["ph"] == "X") found = e["name"] == "Add\"\\\x01\xef\xbf\xbd-op1";
    EXPECT_TRUE(found) << text;
}

TEST(TraceEvents, StoppedOrFailingWriteLeavesNoFile) {
    dl::demo::DemoVariantInfo info;
    const std::string dir = dltest::sharedDemoVariant(dl::demo::DemoOptions{}, info);
    Exported x;
    ASSERT_NO_FATAL_FAILURE(exportDump(dir, x));
    dltest::TempDir tmp("dumplens_trace_stop_");
    const fs::path out = tmp.path / "run.json";
    std::string error;
    dl::TraceExportSummary sum;
    {  // Stopped before it starts: false, cancelled, nothing at the path.
        std::stop_source stop;
        stop.request_stop();
        dl::TraceExportOptions opt;
        opt.stop = stop.get_token();
        EXPECT_FALSE(dl::exportTraceFile(out.string(), x.index, &x.analysis, x.states, opt, sum, error));
        EXPECT_TRUE(sum.cancelled);
        EXPECT_FALSE(fs::exists(out));
    }
    {  // A sink that fails: its reason comes back.
        const dl::TraceSink full = [](const char*, std::size_t, std::string& e) {
            e = "disk full";
            return false;
        };
        EXPECT_FALSE(dl::writeTraceEvents(x.index, &x.analysis, x.states, {}, full, sum, error));
        EXPECT_EQ(error, "disk full");
    }
    {  // Written whole: the file is the sink's text.
        ASSERT_TRUE(dl::exportTraceFile(out.string(), x.index, &x.analysis, x.states, {}, sum, error)) << error;
        EXPECT_EQ(dltest::readText(out), x.text);
        std::size_t leftovers = 0;
        for (const auto& e : fs::directory_iterator(tmp.path)) leftovers += e.path() != out;
        EXPECT_EQ(leftovers, 0u) << "temporary left behind";
    }
}

// Dumps written by MindSpore itself (tests/data/real/mindspore/<version>/<net>, made by make.sh
// with MindSpore 2.0.0, 2.7.0 and 2.10.0 on CPU) must read back exactly what NumPy read from the
// same files (expected.json beside each dump, written by expected.py): every tensor's name,
// type, io, slot, dtype, shape, counts and finite min/max/mean, the op order of execution_order/,
// no warning (graphs/*.ir and .pb included), the framework and device of .dump_metadata, the
// first overflow, and the fixed run clean.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/analysis/overflow_analyzer.h"
#include "core/formats/mindspore/graph_ir.h"
#include "core/index/dump_indexer.h"
#include "core/io/protobuf_reader.h"
#include "core/report/report_content.h"
#include "core/util/dtype.h"
#include "tests/core/cli_run.h"

namespace fs = std::filesystem;
using namespace dl;
using nlohmann::json;

namespace {

const char* const kVersions[] = {"2.0.0", "2.7.0", "2.10.0"};
const char* const kNets[] = {"forward_mul", "train_sqrtgrad", "train_fixed", "multigraph"};

fs::path dumpDir(const std::string& version, const std::string& net) {
    return fs::path(DUMPLENS_TEST_DATA_DIR) / "real" / "mindspore" / version / net;
}

json expected(const fs::path& dir) {
    std::ifstream in(dir / "expected.json");
    return json::parse(in);
}

void near(double got, const json& want, const std::string& what) {
    if (want.is_null()) {
        EXPECT_TRUE(std::isnan(got)) << what << ": " << got;
        return;
    }
    const double w = want.get<double>();
    EXPECT_NEAR(got, w, 1e-6 * std::max(1.0, std::fabs(w))) << what;
}

struct Indexed {
    DumpIndex idx;
    IndexReport report;
};

void indexReal(const fs::path& dir, Indexed& out) {
    IndexOptions o;
    o.useCache = false;
    std::string error;
    ASSERT_TRUE(indexDump(dir.string(), o, out.idx, out.report, error)) << dir << ": " << error;
}

void checkTensors(const std::string& version, const std::string& net) {
    SCOPED_TRACE(version + "/" + net);
    const fs::path dir = dumpDir(version, net);
    const json want = expected(dir);
    Indexed r;
    indexReal(dir, r);
    const DumpIndex& idx = r.idx;
    // The one word the index says: a note per constants/ folder, with NumPy's count of its files.
    std::size_t constantNotes = 0;
    for (const auto& w : idx.warnings) {
        if (w.severity == WarningSeverity::Note && w.path.ends_with("/constants")) {
            EXPECT_TRUE(
                w.reason.starts_with(std::to_string(want["constant_files"].get<std::size_t>()) + " graph constant"))
                << w.reason;
            ++constantNotes;
            continue;
        }
        ADD_FAILURE() << "warning: " << w.path << ": " << w.reason;
    }
    EXPECT_EQ(constantNotes, want["constant_files"].get<std::size_t>() ? 1u : 0u);
    std::map<std::string, const TensorRecord*> byPath;
    for (const auto& t : idx.tensors)
        if (t.side) byPath[idx.strings.str(idx.side(t).file)] = &t;
    ASSERT_EQ(idx.tensors.size(), want["tensor_files"].get<std::size_t>());
    for (const json& e : want["tensors"]) {
        const std::string path = e["path"];
        SCOPED_TRACE(path);
        auto it = byPath.find(path);
        ASSERT_NE(it, byPath.end());
        const TensorRecord& t = *it->second;
        const OpRecord& op = idx.ops[t.op];
        EXPECT_EQ(idx.strings.str(op.type), e["op_type"].get<std::string>());
        EXPECT_EQ(idx.strings.str(op.name), e["op_name"].get<std::string>());
        EXPECT_EQ(op.iteration, e["iteration"].get<std::uint32_t>());
        EXPECT_EQ(op.graph, e["graph"].get<std::uint32_t>());
        EXPECT_EQ(t.io == Io::Input ? "input" : "output", e["io"].get<std::string>());
        EXPECT_EQ(t.slot, e["slot"].get<int>());
        EXPECT_EQ(std::string(dtypeName(t.dtype)), e["dtype"].get<std::string>());
        std::vector<std::int64_t> shape = e["shape"];
        EXPECT_EQ(idx.shape(t), shape);
        const TensorStats s = idx.stats(t);
        EXPECT_EQ(s.count, e["count"].get<std::uint64_t>());
        EXPECT_EQ(s.nanCount, e["nan"].get<std::uint64_t>());
        EXPECT_EQ(s.posInfCount, e["pos_inf"].get<std::uint64_t>());
        EXPECT_EQ(s.negInfCount, e["neg_inf"].get<std::uint64_t>());
        near(s.min, e["finite_min"], "finite min");
        near(s.max, e["finite_max"], "finite max");
        near(s.mean, e["finite_mean"], "finite mean");
    }
    // Op order within each (graph, iteration) is the order MindSpore wrote the tensors in (the
    // file timestamps NumPy's side parsed). On CPU that is not always the line order of
    // ms_execution_order_graph_G.csv (2.0.0 lists the backward Tile first and runs it after the
    // forward); both are topological orders of the kernel graph, the timestamps are what ran.
    std::map<std::string, std::int64_t> firstTs;
    for (const json& e : want["tensors"]) {
        const std::string p = e["path"];
        firstTs[p] = e["timestamp"].get<std::int64_t>();
    }
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint32_t>> perGraphIteration;
    for (std::uint32_t i = 0; i < idx.ops.size(); ++i)
        perGraphIteration[{idx.ops[i].graph, idx.ops[i].iteration}].push_back(i);
    auto opStart = [&](std::uint32_t i) {
        std::int64_t m = INT64_MAX;
        const OpRecord& o = idx.ops[i];
        for (std::uint32_t k = 0; k < o.tensorCount; ++k)
            m = std::min(m, firstTs.at(idx.strings.str(idx.side(idx.tensors[o.firstTensor + k]).file)));
        return m;
    };
    for (auto& [key, ops] : perGraphIteration) {
        std::sort(ops.begin(), ops.end(),
                  [&](std::uint32_t a, std::uint32_t b) { return idx.ops[a].execPos < idx.ops[b].execPos; });
        for (std::size_t i = 1; i < ops.size(); ++i) {
            if (idx.strings.str(idx.ops[ops[i]].type) == "Parameter") continue;  // written after the kernels
            EXPECT_LE(opStart(ops[i - 1]), opStart(ops[i])) << "graph " << key.first << " iteration " << key.second
                                                            << ": " << idx.strings.str(idx.ops[ops[i]].name);
        }
    }
    for (const auto& [file, lines] : want["execution_order"].items()) {
        if (!file.starts_with("ms_execution_order_graph_")) continue;
        const std::uint32_t graph = std::stoul(file.substr(std::string("ms_execution_order_graph_").size()));
        // Every kernel that wrote a tensor is matched to its execution-order line.
        for (const auto& op : idx.ops) {
            if (op.graph == graph && idx.strings.str(op.type) != "Parameter") {
                EXPECT_NE(op.scope, 0u) << idx.strings.str(op.name) << " has no scope from " << file;
            }
        }
    }
    EXPECT_EQ(idx.iterations(), want["iterations"].get<std::vector<std::uint32_t>>());
}

json analyzeJson(const fs::path& dir) {
    const dltest::CliRun r = dltest::runCli("analyze --json --no-cache " + dir.string(), 60, "2>/dev/null");
    EXPECT_EQ(r.code, 0) << r.output;
    return json::parse(r.output, nullptr, false);
}

}  // namespace

TEST(RealMindSporeDumps, TensorsReadAsNumPyReadsThem) {
    for (const char* v : kVersions)
        for (const char* n : kNets) checkTensors(v, n);
}

TEST(RealMindSporeDumps, DumpMetadataGivesVersionAndDevice) {
    for (const char* v : kVersions) {
        const dltest::CliRun r = dltest::runCli("index --no-cache " + dumpDir(v, "forward_mul").string());
        EXPECT_EQ(r.code, 0) << r.output;
        EXPECT_NE(r.output.find(std::string("Framework MindSpore ") + v + " on CPU"), std::string::npos) << r.output;
        EXPECT_NE(r.output.find("Warnings  0"), std::string::npos) << r.output;
    }
}

TEST(RealMindSporeDumps, FirstOverflowIsTheOneNumPyFinds) {
    for (const char* v : kVersions)
        for (const char* n : {"forward_mul", "train_sqrtgrad"}) {
            SCOPED_TRACE(std::string(v) + "/" + n);
            const json want = expected(dumpDir(v, n))["first_nonfinite_output"];
            const json got = analyzeJson(dumpDir(v, n));
            ASSERT_TRUE(got.is_object());
            EXPECT_EQ(got["verdict"], "overflow");
            const json& fo = got["first_overflow"];
            EXPECT_EQ(fo["op_type"], want["op_type"]);
            EXPECT_EQ(fo["op_name"], want["op_name"]);
            EXPECT_EQ(fo["iteration"], want["iteration"]);
            EXPECT_EQ(fo["tensor"], "output." + std::to_string(want["slot"].get<int>()));
            for (const json& w : got["warnings"]) {  // only the constants/ note (unreadable: false)
                EXPECT_FALSE(w["unreadable"].get<bool>()) << w.dump();
                EXPECT_TRUE(w["path"].get<std::string>().ends_with("/constants")) << w.dump();
            }
        }
}

// The inserted Cast's input file is the first half of SqrtGrad's float32 buffer read as fp16
// (NumPy: SqrtGrad output viewed as float32 holds 508400, past 65504), so the op to name is SqrtGrad.
TEST(RealMindSporeDumps, InsertedCastOverflowNamesTheOpThatMadeTheValue) {
    for (const char* v : kVersions) {
        SCOPED_TRACE(v);
        const json got = analyzeJson(dumpDir(v, "train_sqrtgrad"));
        ASSERT_TRUE(got.is_object());
        EXPECT_EQ(got["first_overflow"]["op_type"], "Cast");
        const json& made = got["first_overflow"]["value_made_by"];
        ASSERT_TRUE(made.is_object()) << got["first_overflow"].dump();
        EXPECT_EQ(made["op_type"], "SqrtGrad");
        const std::string rec = got["replay"]["recommendation"];
        EXPECT_NE(rec.find("SqrtGrad " + made["op_name"].get<std::string>()), std::string::npos) << rec;
        EXPECT_EQ(rec.find("run Cast"), std::string::npos) << rec;
    }
}

TEST(RealMindSporeDumps, FixedStepAndMultiGraphNetAreClean) {
    for (const char* v : kVersions)
        for (const char* n : {"train_fixed", "multigraph"}) {
            SCOPED_TRACE(std::string(v) + "/" + n);
            ASSERT_TRUE(expected(dumpDir(v, n))["first_nonfinite_output"].is_null());
            const json got = analyzeJson(dumpDir(v, n));
            ASSERT_TRUE(got.is_object());
            EXPECT_EQ(got["verdict"], "clean");
            EXPECT_TRUE(got["first_overflow"].is_null());
        }
}

// The kernel-graph IR MindSpore wrote beside each dump (graphs/ms_output_trace_code_graph_G.ir):
// every file reads, and its kernels in IR order are the lines of that graph's execution-order
// file (the IR test data for the dataflow work: tests/data/real/mindspore/<version>/*/rank_0/graphs/).
TEST(RealMindSporeDumps, GraphIrListsTheExecutionOrderKernels) {
    for (const char* v : kVersions)
        for (const char* n : kNets) {
            SCOPED_TRACE(std::string(v) + "/" + n);
            const fs::path dir = dumpDir(v, n);
            const json want = expected(dir);
            std::size_t irFiles = 0;
            for (const json& g : want["graph_files"]) {
                const std::string rel = g;
                if (!rel.ends_with(".ir")) continue;
                ++irFiles;
                std::vector<std::string> names;
                std::string error;
                ASSERT_TRUE(readGraphIrOpOrder((dir / rel).string(), names, error)) << rel << ": " << error;
                const std::int64_t graph = graphIrGraphId(fs::path(rel).filename().string());
                ASSERT_GE(graph, 0) << rel;
                const std::string order = "ms_execution_order_graph_" + std::to_string(graph) + ".csv";
                ASSERT_TRUE(want["execution_order"].contains(order)) << order;
                std::vector<std::string> lines = want["execution_order"][order];
                lines.erase(lines.begin());  // the header line
                std::vector<std::string> kernels;
                for (const std::string& s : names)
                    if (std::find(lines.begin(), lines.end(), s) != lines.end()) kernels.push_back(s);
                EXPECT_EQ(std::set<std::string>(kernels.begin(), kernels.end()),
                          std::set<std::string>(lines.begin(), lines.end()))
                    << rel;
            }
            EXPECT_GT(irFiles, 0u);
        }
}

// 2.7.0 and 2.10.0 name the forward Cast's files "Default_net-SqrtNet_Cast-op0" while their
// execution order and IR call it "Default/net-SqrtNet/Cast-op1": the op id in a file name need
// not be the graph's. The only Cast of that scope still gets its full scope (and its position).
TEST(RealMindSporeDumps, FileOpIdThatDiffersFromTheGraphsStillFindsItsScope) {
    for (const char* v : {"2.7.0", "2.10.0"}) {
        SCOPED_TRACE(v);
        Indexed r;
        indexReal(dumpDir(v, "train_sqrtgrad"), r);
        std::size_t seen = 0;
        for (const auto& op : r.idx.ops)
            if (r.idx.strings.str(op.name) == "Default_net-SqrtNet_Cast-op0") {
                EXPECT_EQ(r.idx.strings.str(op.scope), "Default/net-SqrtNet/Cast-op1");
                ++seen;
            }
        EXPECT_EQ(seen, 3u);  // once per iteration
    }
}

// The PDF report's summary says the same as analyze: SqrtGrad made the value, not the Cast.
TEST(RealMindSporeDumps, ReportSummaryNamesTheOpThatMadeTheValue) {
    Indexed r;
    indexReal(dumpDir("2.10.0", "train_sqrtgrad"), r);
    const AnalysisResult a = analyze(r.idx);
    ASSERT_TRUE(a.valueMadeBy);
    const ReportContent c = buildReportContent(r.idx, a);
    std::string summary;
    for (const std::string& s : c.summary) summary += s + "\n";
    EXPECT_NE(summary.find("The value was made by SqrtGrad (Gradients_Default_net-SqrtNet_Grad_Sqrt_SqrtGrad-op0)"),
              std::string::npos)
        << summary;
    EXPECT_NE(summary.find("Recommendation: keep the output of SqrtGrad"), std::string::npos) << summary;
}

// DumpLens does not interpret graphs/*.pb (the .ir carries what it uses), but the index lists it
// without a warning (checked above), and the file is well-formed protobuf: its top-level message
// (the debugger's ModelProto) and its graph (field 4) walk to the end, and it names every kernel of
// the graph's execution-order file.
TEST(RealMindSporeDumps, GraphPbIsWellFormedAndNamesTheKernels) {
    for (const char* v : kVersions)
        for (const char* n : kNets) {
            SCOPED_TRACE(std::string(v) + "/" + n);
            const fs::path dir = dumpDir(v, n);
            const json want = expected(dir);
            for (const json& g : want["graph_files"]) {
                const std::string rel = g;
                if (!rel.ends_with(".pb")) continue;
                std::ifstream in(dir / rel, std::ios::binary);
                const std::string bytes((std::istreambuf_iterator<char>(in)), {});
                ProtoReader top(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
                ProtoField f;
                bool sawGraph = false;
                while (top.next(f)) {
                    if (f.number != 4 || f.wire != WireType::Bytes) continue;
                    sawGraph = true;
                    ProtoReader graph(f.data, f.size);
                    ProtoField gf;
                    while (graph.next(gf)) {}
                    EXPECT_TRUE(graph.atEnd() && std::string(graph.error()).empty()) << rel << ": " << graph.error();
                }
                EXPECT_TRUE(top.atEnd() && std::string(top.error()).empty()) << rel << ": " << top.error();
                EXPECT_TRUE(sawGraph) << rel;
                const std::string id = rel.substr(rel.rfind('_') + 1, rel.size() - rel.rfind('_') - 4);
                const json& lines = want["execution_order"]["ms_execution_order_graph_" + id + ".csv"];
                for (std::size_t i = 1; i < lines.size(); ++i)
                    EXPECT_NE(bytes.find(lines[i].get<std::string>()), std::string::npos) << rel << ": " << lines[i];
            }
        }
}

// Op order within an iteration: timestamps when the names carry them (the execution order breaks
// ties), else the execution_order file of the rank folder, else the graph IR, else file name with a
// warning. The dumps below are written here; in each, file-name order puts the residual Add (also
// inf) before the MatMul that overflowed first, so a wrong order names the wrong op.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/analysis/overflow_analyzer.h"
#include "core/formats/mindspore/execution_order.h"
#include "core/formats/mindspore/graph_ir.h"
#include "core/index/dump_indexer.h"
#include "core/io/npy_writer.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct Kernel {
    std::string type, scope;  // scope = full scoped name as execution_order lists it
    std::vector<float> output;
};

// The true execution order of one decoder-layer slice. The MatMul overflows; the residual Add
// after it adds that inf in; the earlier Add and the RMSNorm Mul are finite.
const std::vector<Kernel>& kernels() {
    static const std::string layer = "Default/network-WithLossCell/_backbone-Llama/layers-CellList/";
    static const std::vector<Kernel> k = {
        {"Add", layer + "0-DecoderLayer/Add-op3", {1, 2, 3, 4}},
        {"Mul", layer + "1-DecoderLayer/attention_norm-RMSNorm/Mul-op14", {0.5f, 1, 1.5f, 2}},
        {"MatMul", layer + "1-DecoderLayer/feed_forward-FeedForward/w1-Linear/MatMul-op21", {60000, kInf, 3, -kInf}},
        {"Add", layer + "1-DecoderLayer/Add-op22", {kInf, kInf, 1, 2}},
    };
    return k;
}
const char* kParam = "layers.1.feed_forward.w1.weight";

// The first kernel in execution order with a non-finite output, found from the values written.
std::string firstNonFiniteScope() {
    for (const Kernel& k : kernels())
        if (std::any_of(k.output.begin(), k.output.end(), [](float v) { return !std::isfinite(v); })) return k.scope;
    return {};
}

std::string f16Bytes(const std::vector<float>& v) {
    std::string bytes, error;
    EXPECT_TRUE(encodeFloats(v, DType::Float16, bytes, error)) << error;
    return bytes;
}

void writeNpy(const fs::path& p, const std::vector<float>& v) {
    fs::create_directories(p.parent_path());
    std::string error;
    ASSERT_TRUE(writeNpyFile(p.string(), DType::Float16, {std::int64_t(v.size())}, f16Bytes(v), error)) << error;
}

std::string executionOrderCsv(std::vector<std::string> scopes) {
    std::string s = "NodeExecutionOrder-FullNameWithScope\n";
    for (const auto& n : scopes) s += n + "\n";
    return s;
}
std::vector<std::string> trueOrder() {
    std::vector<std::string> s;
    for (const Kernel& k : kernels()) s.push_back(k.scope);
    return s;
}

// Text IR as MindSpore prints the kernel graph: node lines, then their scope and source traces.
std::string graphIr() {
    std::string s = "# IR entry: @kernel_graph_0\n%para1_" + std::string(kParam) + " : <Tensor[Float16], (4)>\n";
    int n = 0;
    for (const Kernel& k : kernels()) {
        s += "  %" + std::to_string(n) + "(CNode_" + std::to_string(n + 1) + ") = " + k.type + "(%para1)\n";
        s += "      : (<Tensor[Float16], (4)>) -> (<Tensor[Float16], (4)>)\n";
        s += "      : full_name_with_scope: (" + k.scope + ")\n";
        s += "      # In file /models/llama.py:" + std::to_string(100 + n) + "/        x = op(x)/\n";
        ++n;
    }
    return s;
}

enum class Order { ExecutionOrder, GraphIr, None };

// MindSpore <=1.2 GPU sync dump, outputs only: {net}/device_0/iteration_1/{scope with
// --}_output_0_shape_4_Float16_DefaultFormat.bin
fs::path writeBin12(const fs::path& root, Order order) {
    const fs::path dev = root / "llama/device_0";
    for (const Kernel& k : kernels())
        dltest::writeFile(
            dev / "iteration_1" /
                (scopeToFileName(k.scope, ScopeNameForm::BinMs12) + "_output_0_shape_4_Float16_DefaultFormat.bin"),
            f16Bytes(k.output));
    dltest::writeFile(dev / "iteration_1" / (std::string(kParam) + "_output_0_shape_4_Float16_DefaultFormat.bin"),
                      f16Bytes({0.1f, 0.2f, 0.3f, 0.4f}));
    if (order == Order::ExecutionOrder)
        dltest::writeFile(dev / "execution_order/ms_execution_order_graph_0.csv", executionOrderCsv(trueOrder()));
    if (order == Order::GraphIr) dltest::writeFile(dev / "graphs/ms_output_trace_code_graph_0.ir", graphIr());
    dltest::writeFile(root / ".metadata/data_dump.json",
                      R"({"common_dump_settings":{"dump_mode":0,"path":"/d","net_name":"llama","iteration":1,)"
                      R"("input_output":2,"kernels":[],"support_device":[0]},"e2e_dump_settings":{"enable":true}})");
    return root;
}

// MindSpore 1.3+ sync tree rank_0/{net}/0/1/: `scoped` writes 2.4 9-field names ('_' scopes),
// else 1.3-2.2 short names; every file carries timestamp `ts` (0: stripped; equal: one tie).
fs::path writeNpyTree(const fs::path& root, bool scoped, std::int64_t ts, std::vector<std::string> listed) {
    const fs::path it = root / "rank_0/llama/0/1";
    const std::string t = "0.0." + std::to_string(ts) + ".output.0.DefaultFormat" + (scoped ? ".float16" : "");
    for (const Kernel& k : kernels()) {
        const std::string name =
            scopeToFileName(k.scope, scoped ? ScopeNameForm::ScopedMs23 : ScopeNameForm::ShortMs22);
        writeNpy(it / (k.type + "." + name + "." + t + ".npy"), k.output);
    }
    writeNpy(it / ("Parameter." + std::string(kParam) + "." + t + ".npy"), {0.1f, 0.2f, 0.3f, 0.4f});
    dltest::writeFile(root / "rank_0/execution_order/ms_execution_order_graph_0.csv", executionOrderCsv(listed));
    // Iterations the graph ran, not an op order: must not be read as one.
    dltest::writeFile(root / "rank_0/execution_order/ms_global_execution_order_graph_0.csv", "0\n1\n");
    return root;
}

DumpIndex indexOf(const fs::path& root) {
    DumpIndex idx;
    IndexReport report;
    IndexOptions o;
    o.useCache = false;
    o.threads = 1;
    std::string error;
    EXPECT_TRUE(indexDump(root.string(), o, idx, report, error)) << error;
    return idx;
}

// Op names in index order (the order the analysis walks), kernels as full scopes where known.
std::vector<std::string> indexOrder(const DumpIndex& idx) {
    std::vector<std::string> names;
    for (const OpRecord& op : idx.ops) names.push_back(op.scope ? idx.strings.str(op.scope) : idx.strings.str(op.name));
    return names;
}

std::vector<std::string> paramThenTrueOrder() {
    std::vector<std::string> s = {kParam};
    for (const auto& n : trueOrder()) s.push_back(n);
    return s;
}

bool warnsByFileName(const DumpIndex& idx) {
    return std::any_of(idx.warnings.begin(), idx.warnings.end(), [](const IndexWarning& w) {
        return w.reason.find("ordered by file name") != std::string::npos;
    });
}

std::string firstOverflowScope(const DumpIndex& idx, AnalysisResult& r) {
    AnalysisOptions o;
    o.replay = false;
    r = analyze(idx, o);
    if (!r.firstOverflow) return "(none)";
    const OpRecord& op = idx.ops[r.firstOverflow->op];
    return op.scope ? idx.strings.str(op.scope) : idx.strings.str(op.name);
}

void expectOrderedByTrueOrder(const DumpIndex& idx, const char* source) {
    EXPECT_EQ(indexOrder(idx), paramThenTrueOrder());
    ASSERT_EQ(idx.ranks.size(), 1u);
    EXPECT_EQ(idx.ranks[0].orderSource, source);
    EXPECT_FALSE(warnsByFileName(idx));
    AnalysisResult r;
    EXPECT_EQ(firstOverflowScope(idx, r), firstNonFiniteScope());
    EXPECT_EQ(idx.strings.str(idx.ops[r.firstOverflow->op].type), "MatMul");
}

}  // namespace

TEST(OpOrderTable, MatchesEveryEraForm) {
    OpOrderTable t;
    t.assign(trueOrder());
    const std::string& mm = kernels()[2].scope;
    const std::string* full = nullptr;
    EXPECT_EQ(t.find(mm, &full), 2);
    EXPECT_EQ(*full, mm);
    EXPECT_EQ(t.find(scopeToFileName(mm, ScopeNameForm::BinMs12)), 2);
    EXPECT_EQ(t.find(scopeToFileName(mm, ScopeNameForm::ScopedMs23)), 2);
    EXPECT_EQ(t.find("MatMul-op21"), 2);  // 1.3-2.2 short name
    EXPECT_EQ(t.find("Add-op22"), 3);
    EXPECT_EQ(t.find("MatMul-op99"), 2);  // renumbered: the only MatMul
    EXPECT_EQ(t.find("MatMul"), 2);
    EXPECT_EQ(t.find("Add-op7"), -1) << "two Adds: a renumbered Add is not placed by guess";
    EXPECT_EQ(t.find(kParam), -1);
    EXPECT_EQ(t.find(""), -1);
}

TEST(OpOrderTable, AmbiguousShortNamesAreNotPlaced) {
    OpOrderTable t;
    t.assign({"Default/a/Cast-op1", "Default/b/Cast-op1", "Default/a/Cast-op1", "Default/c/Neg-op2"});
    EXPECT_EQ(t.find("Cast-op1"), -1) << "same short name in two scopes";
    EXPECT_EQ(t.find("Default--b--Cast-op1"), 1);
    EXPECT_EQ(t.find("Default_a_Cast-op1"), 0) << "a kernel listed twice keeps its first position";
    EXPECT_EQ(t.find("Neg-op2"), 3);
    EXPECT_EQ(stripOpSuffix("Neg-op2"), "Neg");
    EXPECT_EQ(stripOpSuffix("Neg-opx"), "Neg-opx");
    EXPECT_EQ(stripOpSuffix("-op2"), "-op2");
}

TEST(GraphIrOrder, ScopesInNodeOrderOnce) {
    std::vector<std::string> names;
    parseGraphIrOpOrder(graphIr() + "  %9(x) = Add()\n      # scope: (" + kernels()[0].scope + ")\n", names);
    EXPECT_EQ(names, trueOrder());
    EXPECT_EQ(graphIrGraphId("ms_output_trace_code_graph_3.ir"), 3);
    EXPECT_EQ(graphIrGraphId("ms_output_trace_code_graph_3.pb"), -1);
    EXPECT_EQ(graphIrGraphId("hwopt_d_end_graph_3.ir"), -1);
}

TEST(OpOrder, Bin12ByDeviceExecutionOrder) {
    dltest::TempDir tmp;
    const DumpIndex idx = indexOf(writeBin12(tmp.path, Order::ExecutionOrder));
    expectOrderedByTrueOrder(idx, "execution_order");
}

TEST(OpOrder, Bin12ByGraphIrWhenNoExecutionOrder) {
    dltest::TempDir tmp;
    const DumpIndex idx = indexOf(writeBin12(tmp.path, Order::GraphIr));
    expectOrderedByTrueOrder(idx, "graph_ir");
}

TEST(OpOrder, Bin12WithoutOrderSourceWarns) {
    dltest::TempDir tmp;
    const DumpIndex idx = indexOf(writeBin12(tmp.path, Order::None));
    ASSERT_EQ(idx.ranks.size(), 1u);
    EXPECT_EQ(idx.ranks[0].orderSource, "file_name");
    EXPECT_TRUE(warnsByFileName(idx));
    EXPECT_EQ(std::count_if(idx.warnings.begin(), idx.warnings.end(),
                            [](const IndexWarning& w) { return w.reason.find("file name") != std::string::npos; }),
              1);
    AnalysisResult r;
    // The fixture discriminates: file-name order puts the residual Add (inf too) before the MatMul.
    EXPECT_EQ(firstOverflowScope(idx, r), scopeToFileName(kernels()[3].scope, ScopeNameForm::BinMs12));
    EXPECT_TRUE(std::any_of(r.evidence.begin(), r.evidence.end(),
                            [](const std::string& e) { return e.find("by file name") != std::string::npos; }));
}

TEST(OpOrder, ShortNamesSharingOneTimestampByExecutionOrder) {
    dltest::TempDir tmp;
    const DumpIndex idx = indexOf(writeNpyTree(tmp.path, false, 1700000000000000, trueOrder()));
    expectOrderedByTrueOrder(idx, "timestamps");
}

TEST(OpOrder, ScopedNamesWithoutTimestampsByExecutionOrder) {
    dltest::TempDir tmp;
    const DumpIndex idx = indexOf(writeNpyTree(tmp.path, true, 0, trueOrder()));
    expectOrderedByTrueOrder(idx, "execution_order");
}

TEST(OpOrder, UnlistedOpsWithoutTimestampsGoLastWithAWarning) {
    dltest::TempDir tmp;
    std::vector<std::string> listed = trueOrder();
    const std::string dropped = listed[1];  // the Mul
    listed.erase(listed.begin() + 1);
    const DumpIndex idx = indexOf(writeNpyTree(tmp.path, true, 0, listed));
    std::vector<std::string> expected = {kParam};
    expected.insert(expected.end(), listed.begin(), listed.end());
    expected.push_back(scopeToFileName(dropped, ScopeNameForm::ScopedMs23));
    EXPECT_EQ(indexOrder(idx), expected);
    EXPECT_TRUE(std::any_of(idx.warnings.begin(), idx.warnings.end(), [](const IndexWarning& w) {
        return w.reason.find("1 op(s) without timestamps are not in") != std::string::npos;
    }));
}

TEST(OpOrder, TimestampsWinOverAConflictingExecutionOrder) {
    dltest::TempDir tmp;
    const fs::path it = tmp.path / "rank_0/llama/0/1";
    // The MatMul ran (and was written) before the Add, though the stale order file lists the Add first.
    writeNpy(it / "MatMul.MatMul-op21.0.0.1700000000000200.output.0.DefaultFormat.npy", kernels()[2].output);
    writeNpy(it / "Add.Add-op22.0.0.1700000000000300.output.0.DefaultFormat.npy", kernels()[3].output);
    dltest::writeFile(tmp.path / "rank_0/execution_order/ms_execution_order_graph_0.csv",
                      executionOrderCsv({kernels()[3].scope, kernels()[2].scope}));
    const DumpIndex idx = indexOf(tmp.path);
    EXPECT_EQ(indexOrder(idx), (std::vector<std::string>{kernels()[2].scope, kernels()[3].scope}));
    EXPECT_EQ(idx.ranks.at(0).orderSource, "timestamps");
}

TEST(OpOrder, CliShowsTheOrderSourceAndNamesTheMatMul) {
    dltest::TempDir tmp;
    writeBin12(tmp.path, Order::ExecutionOrder);
    auto run = [&](const std::string& sub) {
        const std::string cmd =
            std::string(DUMPLENS_CLI_PATH) + " " + sub + " --json --no-cache '" + tmp.path.string() + "'";
        FILE* p = ::popen(cmd.c_str(), "r");
        std::string out;
        char buf[4096];
        while (p && std::fgets(buf, sizeof buf, p)) out += buf;
        if (p) ::pclose(p);
        return nlohmann::json::parse(out, nullptr, false);
    };
    const auto index = run("index");
    ASSERT_FALSE(index.is_discarded());
    ASSERT_EQ(index["ranks"].size(), 1u);
    EXPECT_EQ(index["ranks"][0]["order_source"], "execution_order");
    const auto analysis = run("analyze");
    ASSERT_FALSE(analysis.is_discarded());
    EXPECT_EQ(analysis["first_overflow"]["op_type"], "MatMul");
    EXPECT_EQ(analysis["first_overflow"]["op_name"], scopeToFileName(firstNonFiniteScope(), ScopeNameForm::BinMs12));
}

TEST(OpOrder, OrderSourceSurvivesTheCache) {
    dltest::TempDir tmp, cache;
    writeBin12(tmp.path, Order::GraphIr);
    IndexOptions o;
    o.cacheDir = cache.path.string();
    o.threads = 1;
    for (int pass = 0; pass < 2; ++pass) {
        DumpIndex idx;
        IndexReport report;
        std::string error;
        ASSERT_TRUE(indexDump(tmp.path.string(), o, idx, report, error)) << error;
        EXPECT_EQ(report.shardsIndexed == 0, pass == 1) << "the second pass reopens every shard from the cache";
        ASSERT_EQ(idx.ranks.size(), 1u);
        EXPECT_EQ(idx.ranks[0].orderSource, "graph_ir");
        EXPECT_EQ(indexOrder(idx), paramThenTrueOrder());
    }
}

TEST(OpOrder, Bin12IterationFolderHoldsEveryGraphGraphByGraph) {
    dltest::TempDir tmp;
    writeBin12(tmp.path, Order::ExecutionOrder);
    // <=1.2 iteration folders have no graph level: a second graph's kernel sits among the first's.
    const std::string cast = "Default/optimizer-Momentum/Cast-op1";
    const fs::path dev = tmp.path / "llama/device_0";
    dltest::writeFile(
        dev / "iteration_1" /
            (scopeToFileName(cast, ScopeNameForm::BinMs12) + "_output_0_shape_4_Float16_DefaultFormat.bin"),
        f16Bytes({1, 1, 1, 1}));
    dltest::writeFile(dev / "execution_order/ms_execution_order_graph_1.csv", executionOrderCsv({cast}));
    const DumpIndex idx = indexOf(tmp.path);
    std::vector<std::string> expected = paramThenTrueOrder();
    expected.push_back(cast);
    EXPECT_EQ(indexOrder(idx), expected);
    EXPECT_EQ(idx.ranks.at(0).orderSource, "execution_order");
    EXPECT_TRUE(idx.warnings.empty()) << idx.warnings.front().reason;
}

// The kernel-graph IR's dataflow (core/formats/mindspore/graph_ir_edges.h): on MindSpore's own IR
// (the real 2.0.0 / 2.7.0 / 2.10.0 dumps and an excerpt of the documentation), every edge it reads
// is one the dumped tensors confirm (the producer's output holds the consumer's input), and the
// spellings that vary between versions read the same.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/analysis/overflow_analyzer.h"
#include "core/formats/mindspore/graph_ir.h"
#include "core/formats/mindspore/graph_ir_edges.h"
#include "core/index/dump_indexer.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

std::string readText(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// "producer:slot->consumer:slot" with short names (the text after the last '/'), for readable sets.
std::string shortName(const std::string& n) { return n.substr(n.rfind('/') + 1); }
std::set<std::string> edgeSet(const IrDataflow& f) {
    std::set<std::string> s;
    for (const IrEdge& e : f.edges)
        s.insert(shortName(f.kernels[e.from].name) + ":" + std::to_string(e.fromSlot) + "->" +
                 shortName(f.kernels[e.to].name) + ":" + std::to_string(e.toSlot));
    return s;
}
std::set<std::string> sourceSet(const IrDataflow& f) {
    std::set<std::string> s;
    for (const IrSourceInput& x : f.sources)
        s.insert((x.kind == IrSourceInput::Kind::Parameter ? "param " + x.label : std::string("const")) + "->" +
                 shortName(f.kernels[x.to].name) + ":" + std::to_string(x.toSlot));
    return s;
}

fs::path realDir(const std::string& version, const std::string& net) {
    return fs::path(DUMPLENS_TEST_DATA_DIR) / "real" / "mindspore" / version / net;
}

}  // namespace

// 2.0.0's training step, read by hand from the file: Load passes the weight on, Depend and
// UpdateState carry no data, the ReduceSum axis and the loss scale are constants.
TEST(GraphIrEdges, RealTrainingStepOf200) {
    IrDataflow f;
    std::string error;
    ASSERT_TRUE(readGraphIrFolder((realDir("2.0.0", "train_sqrtgrad") / "rank_0/graphs").string(), f, error)) << error;
    std::set<std::string> kernels;
    for (const IrKernel& k : f.kernels) kernels.insert(shortName(k.name) + "/" + k.type);
    EXPECT_EQ(kernels,
              (std::set<std::string>{"Mul-op25/Mul", "Sqrt-op26/Sqrt", "Cast-op27/Cast", "ReduceSum-op28/ReduceSum",
                                     "Mul-op29/Mul", "Cast-op30/Cast", "Tile-op22/Tile", "Cast-op23/Cast",
                                     "Cast-op24/Cast", "SqrtGrad-op31/SqrtGrad", "Cast-op32/Cast", "Mul-op33/Mul",
                                     "Mul-op34/Mul", "Sub-op35/Sub", "Assign-op36/Assign"}));
    EXPECT_EQ(edgeSet(f),
              (std::set<std::string>{"Mul-op25:0->Sqrt-op26:0", "Sqrt-op26:0->Cast-op27:0",
                                     "Cast-op27:0->ReduceSum-op28:0", "ReduceSum-op28:0->Mul-op29:0",
                                     "Sqrt-op26:0->Cast-op30:0", "Tile-op22:0->Cast-op23:0", "Cast-op23:0->Cast-op24:0",
                                     "Cast-op30:0->SqrtGrad-op31:0", "Cast-op24:0->SqrtGrad-op31:1",
                                     "SqrtGrad-op31:0->Cast-op32:0", "Cast-op32:0->Mul-op33:1",
                                     "Mul-op33:0->Mul-op34:0", "Mul-op34:0->Sub-op35:1", "Sub-op35:0->Assign-op36:1"}));
    EXPECT_EQ(
        sourceSet(f),
        (std::set<std::string>{"param net.w->Mul-op25:0", "param x->Mul-op25:1", "const->ReduceSum-op28:1",
                               "const->Mul-op29:1", "const->Tile-op22:0", "const->Tile-op22:1", "param x->Mul-op33:0",
                               "const->Mul-op34:1", "param net.w->Sub-op35:0", "param net.w->Assign-op36:0"}));
    // UpdateState-op38 orders Mul-op25 and Sub-op35 before the Assign; never as data.
    std::set<std::string> control;
    for (const IrEdge& e : f.controlEdges)
        control.insert(shortName(f.kernels[e.from].name) + "->" + shortName(f.kernels[e.to].name));
    EXPECT_EQ(control, (std::set<std::string>{"Mul-op25->Assign-op36", "Sub-op35->Assign-op36"}));
    // The path from the forward Sqrt to the backward Mul, and none the other way.
    const auto sqrt = f.find(0, "Sqrt-op26"), mul = f.find(0, "Mul-op33");
    ASSERT_GE(sqrt, 0);
    ASSERT_GE(mul, 0);
    const auto p = f.path(std::uint32_t(sqrt), std::uint32_t(mul));
    ASSERT_EQ(p.size(), 4u);  // Sqrt -> Cast-op30 -> SqrtGrad -> Cast-op32 -> Mul-op33
    EXPECT_EQ(shortName(f.kernels[p[1].to].name), "SqrtGrad-op31");
    EXPECT_EQ(p[1].toSlot, 0);
    EXPECT_TRUE(f.path(std::uint32_t(mul), std::uint32_t(sqrt)).empty());
    EXPECT_EQ(f.find(0, "Default--net-SqrtNet--Sqrt-op26"), sqrt) << "the <=1.2 file-name form finds it too";
    EXPECT_EQ(f.find(1, "Sqrt-op26"), -1) << "another graph id";
}

// Every edge read from every real IR is confirmed by the dump: in each iteration the producer's
// dumped output has exactly the figures of the consumer's dumped input (MindSpore writes both
// from the same buffer); the kernels are those of the execution-order files.
TEST(GraphIrEdges, EveryRealEdgeCarriesTheDumpedValue) {
    std::size_t checked = 0;
    for (const char* v : {"2.0.0", "2.7.0", "2.10.0"})
        for (const char* n : {"forward_mul", "train_sqrtgrad", "train_fixed", "multigraph"}) {
            SCOPED_TRACE(std::string(v) + "/" + n);
            const fs::path dir = realDir(v, n);
            IrDataflow f;
            std::string error;
            ASSERT_TRUE(readGraphIrFolder((dir / "rank_0/graphs").string(), f, error)) << error;
            DumpIndex idx;
            IndexReport report;
            IndexOptions o;
            o.useCache = false;
            ASSERT_TRUE(indexDump(dir.string(), o, idx, report, error)) << error;
            // Kernels of each graph = the lines of its execution-order file (independent of the IR).
            std::map<std::uint32_t, std::set<std::string>> irKernels, listed;
            for (const IrKernel& k : f.kernels) irKernels[k.graph].insert(k.name);
            for (const auto& e : fs::directory_iterator(dir / "rank_0/execution_order")) {
                bool global = false;
                const auto g = executionOrderGraphId(e.path().filename().string(), &global);
                if (g < 0 || global) continue;
                std::vector<std::string> names;
                ASSERT_TRUE(parseExecutionOrderCsv(readText(e.path()), names, error));
                listed[std::uint32_t(g)].insert(names.begin(), names.end());
            }
            for (auto& [g, names] : listed) {
                if (!names.empty()) {
                    EXPECT_EQ(irKernels[g], names) << "graph " << g;
                }
            }
            // (iteration, graph, kernel) -> the dump op.
            std::map<std::tuple<std::uint32_t, std::uint32_t, std::int64_t>, std::uint32_t> opOf;
            for (std::uint32_t i = 0; i < idx.ops.size(); ++i) {
                const OpRecord& op = idx.ops[i];
                const std::string name = idx.strings.str(op.scope ? op.scope : op.name);
                const std::int64_t k = f.find(op.graph, name);
                if (k >= 0) opOf[{op.iteration, op.graph, k}] = i;
            }
            const auto tensorOf = [&](std::uint32_t op, Io io, std::uint16_t slot) -> const TensorRecord* {
                const OpRecord& o = idx.ops[op];
                for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t)
                    if (idx.tensors[t].io == io && idx.tensors[t].slot == slot) return &idx.tensors[t];
                return nullptr;
            };
            for (const IrEdge& e : f.edges)
                for (const auto& [key, from] : opOf) {
                    const auto [it, g, k] = key;
                    if (k != e.from) continue;
                    auto to = opOf.find({it, g, e.to});
                    if (to == opOf.end()) continue;
                    const TensorRecord* out = tensorOf(from, Io::Output, e.fromSlot);
                    const TensorRecord* in = tensorOf(to->second, Io::Input, e.toSlot);
                    if (!out || !in) continue;
                    const TensorStats a = idx.stats(*out), b = idx.stats(*in);
                    const std::string what = f.kernels[e.from].name + " -> " + f.kernels[e.to].name;
                    const auto same = [](double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
                    EXPECT_EQ(a.count, b.count) << what;
                    EXPECT_EQ(a.infCount(), b.infCount()) << what;
                    EXPECT_EQ(a.nanCount, b.nanCount) << what;
                    EXPECT_TRUE(same(a.maxAbs, b.maxAbs) && same(a.min, b.min) && same(a.max, b.max) &&
                                same(a.mean, b.mean))
                        << what << ": " << a.min << ".." << a.max << " vs " << b.min << ".." << b.max;
                    ++checked;
                }
        }
    EXPECT_GE(checked, 60u) << "edges confirmed by the dumps";
}

// The documentation's if/else example: the true branch is Partial(@g, %Add, %Sub) behind a Switch,
// called through %5[@FuncUnion(...)](); g's formal parameters take the bound arguments in order.
TEST(GraphIrEdges, DocsExcerptThroughPartialAndSwitch) {
    IrDataflow f;
    parseGraphIrDataflow(readText(fs::path(DUMPLENS_TEST_DATA_DIR) / "graph_ir/docs_2x_if_partial_switch.ir"), 0, f);
    f.finish();
    std::set<std::string> kernels;
    for (const IrKernel& k : f.kernels) kernels.insert(k.name + "/" + k.type);
    EXPECT_EQ(kernels,
              (std::set<std::string>{"Default/Sub-op1/Sub", "Default/Add-op1/Add", "Default/Cast-op1/Cast",
                                     "Default/Div-op1/Div", "Default/Mul-op1/Mul"}));
    EXPECT_EQ(edgeSet(f),
              (std::set<std::string>{"Sub-op1:0->Add-op1:0", "Add-op1:0->Cast-op1:0",
                                     // Div(%para4 = %0 Sub, %para3 = %1 Add), Mul(%para3 = Add, Div)
                                     "Sub-op1:0->Div-op1:0", "Add-op1:0->Div-op1:1", "Add-op1:0->Mul-op1:0",
                                     "Div-op1:0->Mul-op1:1"}));
    EXPECT_EQ(
        sourceSet(f),
        (std::set<std::string>{"param x->Sub-op1:0", "const->Sub-op1:1", "param y->Add-op1:1", "const->Cast-op1:1"}));
}

// What the real files do not show: a multi-output kernel read through TupleGetItem (2.x
// "I64(1)", 1.x "1", getitem), a MakeTuple unfolding into AddN's inputs, Depend passing its
// first input on, nodes outside a subgraph block with 1.x scope lines, an input defined nowhere
// (no edge and no constant), and a second graph id.
TEST(GraphIrEdges, TupleOutputsDependAndOlderSpellings) {
    const std::string ir =
        "# IR entry: @kernel_graph_3\n"
        "%para1_x : <Tensor[Float16], (8)>\n"
        "subgraph @kernel_graph_3() {\n"
        "  %0(a) = PrimFunc_Split(%para1_x, I64(0), I64(2))\n"
        "      : (<Tensor[Float16], (8)>) -> (<Tuple[Tensor[Float16]*2]>)\n"
        "      # Fullname with scope: (Default/Split-op1)\n"
        "  %1(b) = TupleGetItem(%0, I64(1))\n"
        "      # Fullname with scope: (Default/TupleGetItem-op2)\n"
        "  %2(c) = tuple_getitem(%0, 0)\n"
        "  %3(d) = Relu(%1)\n"
        "      # Fullname with scope: (Default/Relu-op3)\n"
        "  %4(e) = Depend(%2, %3)\n"
        "  %5(f) = MakeTuple(%4, %3, %99)\n"
        "  %6(g) = AddN(%5)\n"
        "      # Fullname with scope: (Default/AddN-op4)\n"
        "  %7(h) = getitem(%0, Tensor(shape=[], dtype=Int64, value=1))\n"
        "  %8(i) = Mul(%7, %99)\n"
        "      # Fullname with scope: (Default/Mul-op5)\n"
        "  Return(%6)\n"
        "}\n";
    const std::string older =
        "  %0 = ReLU(%para1_x) {instance name: relu}\n"
        "      : (<Tensor[Float32]x[const vector][2]>) -> (<Tensor[Float32]x[const vector][2]>)\n"
        "      : full_name_with_scope: (Default/network/ReLU-op7)\n"
        "  %1 = Square(%0)\n"
        "      # scope: (Default/network/Square-op8)\n";
    IrDataflow f;
    parseGraphIrDataflow(ir, 3, f);
    parseGraphIrDataflow(older, 4, f);
    f.finish();
    EXPECT_EQ(f.kernels.size(), 6u) << "TupleGetItem, Depend, MakeTuple are not kernels";
    EXPECT_EQ(
        edgeSet(f),
        (std::set<std::string>{"Split-op1:1->Relu-op3:0",
                               // AddN(MakeTuple(Depend(Split[0], Relu), Relu, ?)): inputs 0, 1; the unknown %99 none
                               "Split-op1:0->AddN-op4:0", "Relu-op3:0->AddN-op4:1", "Split-op1:1->Mul-op5:0",
                               "ReLU-op7:0->Square-op8:0"}));
    std::set<std::string> control;
    for (const IrEdge& e : f.controlEdges)
        control.insert(shortName(f.kernels[e.from].name) + "->" + shortName(f.kernels[e.to].name));
    EXPECT_EQ(control, (std::set<std::string>{"Relu-op3->AddN-op4"}));
    EXPECT_EQ(sourceSet(f),
              (std::set<std::string>{"param x->Split-op1:0", "const->Split-op1:1", "const->Split-op1:2",
                                     "param x->ReLU-op7:0"}));
    EXPECT_GE(f.find(4, "Default--network--Square-op8"), 0);
    EXPECT_EQ(f.find(3, "Default/network/Square-op8"), -1);
}

TEST(GraphIrEdges, MissingFolderAndUnreadableFileSaySo) {
    IrDataflow f;
    std::string error;
    const fs::path dir = fs::path(::testing::TempDir()) / ("dl_ir_edges_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    EXPECT_FALSE(readGraphIrFolder(dir.string(), f, error));
    EXPECT_NE(error.find("no graph IR"), std::string::npos) << error;
    EXPECT_FALSE(readGraphIrDataflow((dir / "nope.ir").string(), 0, f, error));
    EXPECT_NE(error.find("nope.ir"), std::string::npos) << error;
    // Truncated and garbled lines give no edge, never a crash.
    parseGraphIrDataflow(
        "subgraph @g() {\n  %0(x) = Mul(%para1_a, \n  %1 = (\n  %2(y) = Add(%0)\n"
        "      # Fullname with scope: (Default/Add-op1\n  Return(\n}\n}\n",
        0, f);
    f.finish();
    EXPECT_TRUE(f.edges.empty());
    fs::remove_all(dir);
}

// On the real training step the origin is the Cast after SqrtGrad; the IR names SqrtGrad as the
// producer of its input: the op the analysis found independently by byte equality (value_made_by).
TEST(GraphIrEdges, RealOriginNamesTheOpThatMadeItsInput) {
    for (const char* v : {"2.0.0", "2.7.0", "2.10.0"}) {
        SCOPED_TRACE(v);
        DumpIndex idx;
        IndexReport report;
        IndexOptions o;
        o.useCache = false;
        std::string error;
        ASSERT_TRUE(indexDump(realDir(v, "train_sqrtgrad").string(), o, idx, report, error)) << error;
        const AnalysisResult r = analyze(idx);
        ASSERT_TRUE(r.firstOverflow && r.valueMadeBy);
        EXPECT_TRUE(r.graphIrRead);
        ASSERT_EQ(r.originInputs.size(), 1u);
        const OriginInput& in = r.originInputs[0];
        EXPECT_EQ(in.source, "kernel");
        EXPECT_EQ(in.slot, 0);
        EXPECT_EQ(in.producerOp, *r.valueMadeBy);
        EXPECT_EQ(idx.strings.str(idx.ops[in.producerOp].type), "SqrtGrad");
        ASSERT_NE(in.producerTensor, kNoIndex);
        EXPECT_EQ(idx.stats(idx.tensors[in.producerTensor]).maxAbs, idx.stats(idx.tensors[in.tensor]).maxAbs);
    }
}

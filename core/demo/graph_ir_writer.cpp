#include "core/demo/graph_ir_writer.h"

#include "core/demo/cluster_scenario.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <unordered_map>

namespace dl::demo {

namespace {

// "(<Tensor[Float16], (2, 8)>, ...)": the type list of n tensors (the demo's shapes are not the IR's subject).
std::string types(std::size_t n) {
    std::string s = "(";
    for (std::size_t i = 0; i < n; ++i) s += std::string(i ? ", " : "") + "<Tensor[Float16], (2, 8)>";
    return s + ")";
}

}  // namespace

std::string kernelGraphIr(std::uint32_t graph, const std::vector<KernelSpec>& kernels,
                          const std::vector<KernelEdge>& edges) {
    // input (kernel, slot) -> its producer (kernel, slot)
    std::map<std::pair<std::uint32_t, std::uint16_t>, std::pair<std::uint32_t, std::uint16_t>> fed;
    for (const KernelEdge& e : edges) fed[{e.to, e.toSlot}] = {e.from, e.fromSlot};
    std::vector<std::string> params;  // one per unfed input
    std::map<std::pair<std::uint32_t, std::uint16_t>, std::size_t> paramOf;
    for (std::uint32_t k = 0; k < kernels.size(); ++k)
        for (std::uint16_t j = 0; j < kernels[k].inputs; ++j)
            if (!fed.count({k, j})) {
                paramOf[{k, j}] = params.size();
                params.push_back("input" + std::to_string(j) + "_of_" + kernels[k].type + std::to_string(k));
            }
    const std::string name = "kernel_graph_" + std::to_string(graph);
    std::string out = "# IR entry: @" + name +
        "\n# Total subgraphs: 1\n\n# Attrs:\nenable_zero_copy_in_graph: 1\n\n# Total params: " +
        std::to_string(params.size()) + "\n# Params:\n";
    for (std::size_t p = 0; p < params.size(); ++p)
        out += "%para" + std::to_string(p + 1) + "_" + params[p] +
            ": <Ref[Tensor[Float16]], (2, 8), ref_key=" + params[p] +
            ">  :  has_default  :  <Float16xDefaultFormat[const vector]{2, 8}>  :  IsWeight: true\n";
    out += "\nsubgraph attr:\nenable_zero_copy_in_graph: 1\nsubgraph instance: " + name +
        " : 0x5555deadbeef\nsubgraph @" + name + "() {\n";
    std::uint32_t next = 0;
    std::vector<std::uint32_t> nodeOf(kernels.size());
    std::map<std::pair<std::uint32_t, std::uint16_t>, std::uint32_t>
        getItem;               // (kernel, slot) -> its TupleGetItem node
    std::int64_t state = -1;   // the latest UpdateState node
    std::uint32_t helper = 0;  // -opN of the nodes DumpLens must not take for kernels
    const auto line = [&](const std::string& debug, const std::string& rhs, const std::string& typeLine,
                          const std::string& scope) {
        out += "  %" + std::to_string(next) + "(" + debug + ") = " + rhs + "\n      : " + typeLine +
            "\n      # Fullname with scope: (" + scope + ")\n";
        return next++;
    };
    for (std::uint32_t k = 0; k < kernels.size(); ++k) {
        const KernelSpec& s = kernels[k];
        std::string args;
        for (std::uint16_t j = 0; j < s.inputs; ++j) {
            std::string a;
            if (auto f = fed.find({k, j}); f != fed.end()) {
                const auto [pk, ps] = f->second;
                if (kernels[pk].outputs > 1) {
                    auto g = getItem.find({pk, ps});
                    if (g == getItem.end())
                        g = getItem
                                .emplace(std::pair{pk, ps},
                                         line("CNode_get" + std::to_string(pk) + "_" + std::to_string(ps),
                                              "TupleGetItem(%" + std::to_string(nodeOf[pk]) + ", I64(" +
                                                  std::to_string(ps) + "))",
                                              "(<Tuple[Tensor[Float16]*" + std::to_string(kernels[pk].outputs) +
                                                  "]>, <Int64, NoShape>) -> (<Tensor[Float16], (2, 8)>)",
                                              "Default/TupleGetItem-op" + std::to_string(++helper)))
                                .first;
                    a = "%" + std::to_string(g->second);
                } else {
                    a = "%" + std::to_string(nodeOf[pk]);
                }
            } else {
                const std::size_t p = paramOf[{k, j}];
                a = "%" +
                    std::to_string(
                        line("CNode_load" + std::to_string(p),
                             "Load(%para" + std::to_string(p + 1) + "_" + params[p] + ", UMonad[U])",
                             "(<Ref[Tensor[Float16]], (2, 8)>, <UMonad, NoShape>) -> (<Tensor[Float16], (2, 8)>)",
                             "Default/Load-op" + std::to_string(++helper)));
            }
            args += (j ? ", " : "") + a;
        }
        if (s.updatesState && state >= 0) args += (s.inputs ? ", %" : "%") + std::to_string(state);
        const std::string outType =
            s.outputs > 1 ? "(<Tuple[Tensor[Float16]*" + std::to_string(s.outputs) + "]>)" : types(s.outputs ? 1 : 0);
        nodeOf[k] = line("CNode_" + std::to_string(k),
                         "PrimFunc_" + s.type + "(" + args + ") primitive_attrs: {IsFeatureMapOutput: Bool(1)}",
                         types(s.inputs) + " -> " + outType, s.fullName);
        if (s.updatesState)
            state = line("CNode_state" + std::to_string(k),
                         "UpdateState(" + (state >= 0 ? "%" + std::to_string(state) : std::string("UMonad[U]")) +
                             ", %" + std::to_string(nodeOf[k]) + ")",
                         "(<UMonad, NoShape>, <Tensor[Float16], (2, 8)>) -> (<UMonad, NoShape>)",
                         "Default/UpdateState-op" + std::to_string(++helper));
    }
    // The graph's output: its last kernel, ordered after the last state update by a Depend.
    std::string result = kernels.empty() ? "" : "%" + std::to_string(nodeOf.back());
    if (state >= 0 && !result.empty())
        result = "%" +
            std::to_string(line("CNode_depend",
                                "Depend(" + result + ", %" + std::to_string(state) +
                                    ") primitive_attrs: {side_effect_propagate: I64(1)}",
                                "(<Tensor[Float16], (2, 8)>, <UMonad, NoShape>) -> (<Tensor[Float16], (2, 8)>)",
                                "Default/Depend-op" + std::to_string(++helper)));
    const std::uint32_t tuple =
        line("CNode_output", "MakeTuple(" + result + ")", "(<Tensor[Float16], (2, 8)>) -> (<Tuple[Tensor[Float16]]>)",
             "Default/MakeTuple-op" + std::to_string(++helper));
    out += "  Return(%" + std::to_string(tuple) +
        ")\n      : (<Tuple[Tensor[Float16]]>)\n      # Fullname with scope: (Default/Return-op" +
        std::to_string(++helper) + ")\n}\n";
    return out;
}

namespace {

// An input is fed by the latest earlier op of the same rank and iteration that output the same tensor object.
template <class Op>
std::vector<KernelEdge> dataEdges(const std::vector<Op>& ops, int rank, int iteration) {
    std::vector<KernelEdge> edges;
    std::unordered_map<const DemoTensor*, std::pair<std::uint32_t, std::uint16_t>> producer;
    for (const Op& op : ops) {
        if (op.rank != rank || op.iteration != iteration) continue;
        for (std::size_t j = 0; j < op.inputs.size(); ++j)
            if (auto p = producer.find(op.inputs[j].get()); p != producer.end())
                edges.push_back({p->second.first, op.position, p->second.second, std::uint16_t(j)});
        for (std::size_t s = 0; s < op.outputs.size(); ++s)
            producer[op.outputs[s].get()] = {op.position, std::uint16_t(s)};
    }
    return edges;
}

template <class Op, class IsOptimizer>
std::string rankGraphIr(const std::vector<Op>& ops, const std::vector<std::string>& names, int rank,
                        std::uint32_t graph, IsOptimizer isOptimizer) {
    std::vector<KernelSpec> kernels(names.size());
    for (std::size_t k = 0; k < names.size(); ++k) kernels[k].fullName = names[k];
    for (const Op& op : ops) {
        if (op.rank != rank || op.iteration != 0 || op.position >= kernels.size()) continue;
        KernelSpec& s = kernels[op.position];
        s.type = op.type;
        s.inputs = std::uint16_t(op.inputs.size());
        s.outputs = std::uint16_t(op.outputs.size());
        s.updatesState = isOptimizer(op);
    }
    return kernelGraphIr(graph, kernels, dataEdges(ops, rank, 0));
}

bool writeFile(const std::string& dir, std::uint32_t graph, const std::string& text, std::string& error) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const std::string file = dir + "/ms_output_trace_code_graph_" + std::to_string(graph) + ".ir";
    std::ofstream out(file, std::ios::binary);
    out << text;
    if (ec || !out) {
        error = "cannot write " + file;
        return false;
    }
    return true;
}

}  // namespace

std::vector<KernelEdge> clusterDataEdges(const ClusterTrace& trace, int rank, int iteration) {
    return dataEdges(trace.ops, rank, iteration);
}

std::vector<KernelEdge> demoDataEdges(const DemoTrace& trace, int rank, int iteration) {
    return dataEdges(trace.ops, rank, iteration);
}

bool writeDemoGraphIr(const std::string& rankDir, const DemoTrace& trace, int rank, std::uint32_t graph,
                      std::string& error) {
    const std::string text = rankGraphIr(trace.ops, trace.execOrder.at(std::size_t(rank)), rank, graph,
                                         [](const DemoOp& op) { return op.type == "ApplyMomentum"; });
    return writeFile(rankDir + "/graphs", graph, text, error);
}

bool writeClusterGraphIr(const std::string& root, const ClusterTrace& trace, std::string& error) {
    for (int r = 0; r < trace.ranks; ++r) {
        const std::string text = rankGraphIr(trace.ops, trace.execOrder.at(std::size_t(trace.stageOf(r))), r, 0,
                                             [](const ClusterOp& op) { return op.kind == ClusterOpKind::Optimizer; });
        if (!writeFile(root + "/rank_" + std::to_string(r) + "/graphs", 0, text, error)) return false;
    }
    return true;
}

bool writeGraphIrAndTruth(const std::string& root, const ClusterTrace& trace, ClusterScenarioTruth& truth,
                          std::string& error) {
    if (!writeClusterGraphIr(root, trace, error)) return false;
    for (int r = 0; r < trace.ranks; ++r)
        for (int it = 0; it < trace.iterations; ++it) truth.dataEdges[{r, it}] = clusterDataEdges(trace, r, it);
    return true;
}

}  // namespace dl::demo

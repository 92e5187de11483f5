#include "core/query/op_graph.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_set>

namespace dl {

namespace {

using nlohmann::json;

std::uint32_t worstTensorOf(const DumpIndex& index, const OpStates& states, std::uint32_t op) {
    const OpRecord& o = index.ops[op];
    std::uint32_t best = kNoIndex;
    double bestMax = -1;
    for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t) {
        const double m = index.stats(index.tensors[t]).maxAbs;
        const double mv = std::isfinite(m) ? m : 0;
        if (best == kNoIndex || states.tensor[t] > states.tensor[best] ||
            (states.tensor[t] == states.tensor[best] && mv > bestMax)) {
            best = t;
            bestMax = mv;
        }
    }
    return best;
}

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// The kernels within `hops` of `centre` with their distances, in the order they are met: producers
// breadth first, then consumers, each kernel once at its shortest distance. Stops (false) once it
// holds more than `limit` kernels (0: no limit).
bool gather(const IrDataflow& g, std::uint32_t centre, int hops, std::size_t limit,
            std::vector<std::pair<std::uint32_t, int>>& out) {
    out.clear();
    std::unordered_set<std::uint32_t> seen{centre};
    out.push_back({centre, 0});
    for (const int dir : {-1, 1}) {
        std::vector<std::uint32_t> frontier{centre};
        for (int d = 1; d <= hops && !frontier.empty(); ++d) {
            std::vector<std::uint32_t> next;
            for (std::uint32_t k : frontier)
                for (std::uint32_t e : dir < 0 ? g.inEdges(k) : g.outEdges(k)) {
                    const IrEdge& edge = g.edges[e];
                    const std::uint32_t other = dir < 0 ? edge.from : edge.to;
                    if (!seen.insert(other).second) continue;
                    next.push_back(other);
                    out.push_back({other, dir * d});
                    if (limit && out.size() > limit) return false;
                }
            frontier = std::move(next);
        }
    }
    return true;
}

}  // namespace

std::string opGraphFigure(const DumpIndex& index, const OpGraphNode& n) {
    if (n.worstTensor == kNoIndex) return "-";
    const TensorStats st = index.stats(index.tensors[n.worstTensor]);
    std::string s;
    if (st.infCount()) s = std::to_string(st.infCount()) + " inf";
    if (st.nanCount) s += (s.empty() ? "" : ", ") + std::to_string(st.nanCount) + " nan";
    if (std::isfinite(st.maxAbs)) s += (s.empty() ? "" : ", ") + std::string("max|x| ") + number(st.maxAbs);
    return s.empty() ? "-" : s;
}

bool buildOpGraph(const DumpIndex& index, const AnalysisResult* analysis, const OpStates& states, RankDataflow& flow,
                  std::uint32_t op, int hops, OpGraph& out, std::string& error, std::size_t maxKernels) {
    out = {};
    const OpRecord& centreOp = index.ops[op];
    const IrDataflow* g = flow.graphOf(centreOp.rank);
    if (!g) {
        error = flow.error(centreOp.rank).empty() ? "no graph IR for rank " + std::to_string(centreOp.rank)
                                                  : flow.error(centreOp.rank);
        return false;
    }
    const std::int64_t centre = flow.kernelOf(op);
    if (centre < 0) {
        error = index.strings.str(centreOp.name) + " is not in the graph IR of rank " + std::to_string(centreOp.rank) +
            " (" + graphsFolderOf(index, centreOp.rank) + ")";
        return false;
    }
    const std::uint32_t rank = centreOp.rank, iteration = centreOp.iteration;
    // What of the chain lies in this rank and iteration: step ops and their dataflow edges.
    std::set<std::uint32_t> chainOps;
    std::set<std::tuple<std::string, std::string, std::uint16_t, std::uint16_t>> chainEdges;
    if (analysis)
        for (const ChainStep& s : analysis->chain) {
            if (s.at.rank != rank || s.at.iteration != iteration) continue;
            chainOps.insert(s.at.op);
            for (const DataflowEdge& e : s.path) chainEdges.insert({e.producer, e.consumer, e.outputSlot, e.inputSlot});
        }
    std::map<std::uint32_t, std::uint32_t> nodeOf;  // kernel -> node
    const auto addKernel = [&](std::uint32_t k, int distance) {
        auto [it, inserted] = nodeOf.emplace(k, std::uint32_t(out.nodes.size()));
        if (!inserted) return it->second;
        OpGraphNode n;
        n.name = g->kernels[k].name;
        n.opType = g->kernels[k].type;
        n.rank = rank;
        n.distance = distance;
        n.centre = k == std::uint32_t(centre);
        n.op = n.centre ? op : flow.opOf(rank, iteration, k, distance < 0 ? op : kNoIndex);
        if (n.op != kNoIndex) {
            n.opType = index.strings.str(index.ops[n.op].type);
            n.state = states.op[n.op];
            n.worstTensor = worstTensorOf(index, states, n.op);
            n.onChain = chainOps.count(n.op) > 0;
        }
        out.nodes.push_back(std::move(n));
        return it->second;
    };
    // The most whole hops that fit the cap; the nearest kernels of the first when not even it does.
    out.requestedHops = out.hops = hops;
    std::vector<std::pair<std::uint32_t, int>> kernels;
    while (!gather(*g, std::uint32_t(centre), out.hops, maxKernels, kernels) && out.hops > 1) --out.hops;
    if (maxKernels && kernels.size() > maxKernels) {
        kernels.resize(maxKernels);
        out.truncated = true;
    }
    for (const auto& [k, d] : kernels) addKernel(k, d);
    // Every IR edge between nodes of the neighbourhood.
    for (const auto& [k, n] : nodeOf)
        for (std::uint32_t e : g->outEdges(k)) {
            const IrEdge& edge = g->edges[e];
            auto to = nodeOf.find(edge.to);
            if (to == nodeOf.end()) continue;
            OpGraphEdge ge{n, to->second, edge.fromSlot, edge.toSlot, false};
            ge.onChain = chainEdges.count(
                             {g->kernels[edge.from].name, g->kernels[edge.to].name, edge.fromSlot, edge.toSlot}) > 0;
            if (ge.onChain) out.nodes[n].onChain = out.nodes[to->second].onChain = true;
            out.edges.push_back(ge);
        }
    // The centre's parameters and constants.
    for (const IrSourceInput* s : g->sourcesOf(std::uint32_t(centre))) {
        OpGraphNode n;
        n.kind = s->kind == IrSourceInput::Kind::Parameter ? "parameter" : "constant";
        n.name = s->label;
        n.opType = s->kind == IrSourceInput::Kind::Parameter ? "Parameter" : "Constant";
        n.rank = rank;
        n.distance = -1;
        n.worstTensor = flow.tensorOf(op, Io::Input, s->toSlot);
        if (n.worstTensor != kNoIndex) n.state = states.tensor[n.worstTensor];
        if (n.state == OpState::Origin) n.state = OpState::Normal;
        out.edges.push_back({std::uint32_t(out.nodes.size()), 0, 0, s->toSlot, false});
        out.nodes.push_back(std::move(n));
    }
    return true;
}

std::string opGraphJson(const DumpIndex& index, const OpGraph& g) {
    json nodes = json::array(), edges = json::array();
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const OpGraphNode& n = g.nodes[i];
        json worst = nullptr;
        if (n.worstTensor != kNoIndex) {
            const TensorRecord& t = index.tensors[n.worstTensor];
            const TensorStats st = index.stats(t);
            worst = {{"tensor", index.tensorLabel(t)},
                     {"max_abs", std::isfinite(st.maxAbs) ? json(st.maxAbs) : json(nullptr)},
                     {"inf_count", st.infCount()},
                     {"nan_count", st.nanCount},
                     {"text", opGraphFigure(index, n)}};
        }
        nodes.push_back({{"id", i},
                         {"op_name", n.op != kNoIndex ? json(index.strings.str(index.ops[n.op].name)) : json(nullptr)},
                         {"ir_name", n.name},
                         {"kind", n.kind},
                         {"op_type", n.opType},
                         {"rank", n.rank},
                         {"iteration", n.op != kNoIndex ? json(index.ops[n.op].iteration) : json(nullptr)},
                         {"op_index", n.op != kNoIndex ? json(n.op) : json(nullptr)},
                         {"dumped", n.op != kNoIndex},
                         {"state", opStateName(n.state)},
                         {"worst", worst},
                         {"distance", n.distance},
                         {"centre", n.centre},
                         {"on_chain", n.onChain}});
    }
    for (const OpGraphEdge& e : g.edges)
        edges.push_back({{"from", e.from},
                         {"to", e.to},
                         {"from_slot", e.fromSlot},
                         {"to_slot", e.toSlot},
                         {"on_chain", e.onChain}});
    return json{{"schema", "dumplens.graph/1"}, {"nodes", nodes}, {"edges", edges}}.dump(
        2, ' ', false, json::error_handler_t::replace);
}

std::string opGraphDot(const DumpIndex& index, const OpGraph& g) {
    static const char* const fill[] = {"#ffffff", "#ffe08a", "#ffb060", "#ff6b6b", "#d62728"};  // by OpState
    const auto quote = [](const std::string& s) {
        std::string q = "\"";
        for (char c : s) {
            if (c == '"' || c == '\\') q += '\\';
            q += c == '\n' ? ' ' : c;
        }
        return q + "\"";
    };
    std::string out = "digraph dumplens {\n  rankdir=LR;\n  node [shape=box, style=filled, fontname=\"Helvetica\"];\n";
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const OpGraphNode& n = g.nodes[i];
        const std::string shortName = n.name.substr(n.name.rfind('/') + 1);
        const std::string label =
            n.opType + "\\n" + shortName + "\\n" + opStateName(n.state) + "  " + opGraphFigure(index, n);
        std::string q = quote(label);
        // quote() escaped the label's "\n" separators: put them back.
        for (std::size_t p = 0; (p = q.find("\\\\n", p)) != std::string::npos;) q.replace(p, 3, "\\n");
        out += "  n" + std::to_string(i) + " [label=" + q + ", fillcolor=\"" + fill[int(n.state)] + "\"" +
            (n.kind != "kernel" ? ", shape=ellipse" : "") +
            (n.centre        ? ", penwidth=3"
                 : n.onChain ? ", penwidth=2"
                             : "") +
            (n.op == kNoIndex && n.kind == "kernel" ? ", style=\"filled,dashed\"" : "") + "];\n";
    }
    for (const OpGraphEdge& e : g.edges)
        out += "  n" + std::to_string(e.from) + " -> n" + std::to_string(e.to) + " [label=\"" +
            std::to_string(e.fromSlot) + ":" + std::to_string(e.toSlot) + "\"" +
            (e.onChain ? ", color=\"#d62728\", penwidth=2.5" : "") + "];\n";
    return out + "}\n";
}

}  // namespace dl

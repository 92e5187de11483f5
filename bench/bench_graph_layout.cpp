// The Graph tab's layered layout at scale (issue 30): layoutOpGraph on op graphs cut from a
// 100,000-kernel model graph, the one bench_graph_ir writes as IR (10-kernel layers: a two-output
// Split, two MatMuls, their Mul, a residual Add from six kernels back, RmsNorm, Cast, FastGeLU, a
// MatMul and the optimizer's ApplyMomentum), built here in memory, and the same graph with one hub:
// an attention-mask Cast every layer's Mul reads (10,000 consumers), the worst neighbourhood a
// model graph gives.
//   - whole: all 100k kernels and 130k edges laid out at once;
//   - model/6: the largest 6-hop neighbourhood of any kernel of the plain graph;
//   - hub/N: the hub's neighbourhood at N hops, uncapped (what buildOpGraph returns without a cap);
//   - hub capped/6: the same asked at 6 hops with the Graph tab's cap (kMaxGraphNodes kernels):
//     the most whole hops that fit it.
// Each case reports nodes, edges, layers, dummy nodes and the process's peak RSS; run one case per
// process (--benchmark_filter) to read its own peak. A graph whose layering would need more than
// 20M dummy nodes is not laid out (the case says so and how many).
//   build/ci/bench/bench_graph_layout --benchmark_filter='hub capped'
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/query/op_graph.h"
#include "core/query/op_graph_layout.h"

namespace {

constexpr std::uint32_t kKernels = 100000;

struct Graph {
    std::vector<std::string> type;
    std::vector<std::vector<std::pair<std::uint32_t, std::uint16_t>>> out, in;  // (other, slot pair packed)
    void edge(std::uint32_t a, std::uint32_t b) {
        out[a].push_back({b, 0});
        in[b].push_back({a, 0});
    }
};

// bench_graph_ir's model graph; with `hub`, kernel N (a Cast) feeds input 2 of every layer's Mul.
Graph modelGraph(bool hub) {
    static const char* const types[] = {"Split",   "MatMul", "MatMul",   "Mul",    "Add",
                                        "RmsNorm", "Cast",   "FastGeLU", "MatMul", "ApplyMomentum"};
    Graph g;
    const std::uint32_t n = kKernels + (hub ? 1 : 0);
    g.type.resize(n);
    g.out.resize(n);
    g.in.resize(n);
    for (std::uint32_t k = 0; k < kKernels; ++k) {
        const int t = int(k % 10);
        g.type[k] = types[t];
        if (k == 0) continue;
        if (t == 1 || t == 2)
            g.edge(k - std::uint32_t(t), k);  // the Split's two outputs
        else
            g.edge(k - 1, k);
        if (t == 4 && k >= 6) g.edge(k - 6, k);  // the residual
        if (t == 3) g.edge(k - 2, k);            // Mul(MatMul a, MatMul b)
    }
    if (hub) {
        g.type[kKernels] = "Cast";
        for (std::uint32_t k = 3; k < kKernels; k += 10) g.edge(kKernels, k);
    }
    return g;
}

// As buildOpGraph gathers it (core/query/op_graph.cpp): producers breadth first, then consumers,
// each kernel once at its shortest distance, then every edge between two of them; with a cap, the
// most whole hops that fit it (the nearest kernels of 1 hop when not even it does).
bool gather(const Graph& g, std::uint32_t centre, int hops, std::size_t limit,
            std::vector<std::pair<std::uint32_t, int>>& out) {
    out.assign(1, {centre, 0});
    std::unordered_map<std::uint32_t, bool> seen{{centre, true}};
    for (const int dir : {-1, 1}) {
        std::vector<std::uint32_t> frontier{centre};
        for (int d = 1; d <= hops && !frontier.empty(); ++d) {
            std::vector<std::uint32_t> next;
            for (std::uint32_t k : frontier)
                for (const auto& [other, slot] : dir < 0 ? g.in[k] : g.out[k]) {
                    if (!seen.emplace(other, true).second) continue;
                    next.push_back(other);
                    out.push_back({other, dir * d});
                    if (limit && out.size() > limit) return false;
                }
            frontier = std::move(next);
        }
    }
    return true;
}

dl::OpGraph neighbourhood(const Graph& g, std::uint32_t centre, int hops, std::size_t maxNodes = 0) {
    dl::OpGraph og;
    std::vector<std::pair<std::uint32_t, int>> kernels;
    og.requestedHops = og.hops = hops;
    while (!gather(g, centre, og.hops, maxNodes, kernels) && og.hops > 1) --og.hops;
    if (maxNodes && kernels.size() > maxNodes) kernels.resize(maxNodes);
    std::unordered_map<std::uint32_t, std::uint32_t> nodeOf;
    for (const auto& [k, d] : kernels) {
        nodeOf.emplace(k, std::uint32_t(og.nodes.size()));
        dl::OpGraphNode node;
        node.name = g.type[k] + "-op" + std::to_string(k);
        node.opType = g.type[k];
        node.distance = d;
        node.centre = d == 0;
        og.nodes.push_back(std::move(node));
    }
    for (const auto& [k, n] : nodeOf)
        for (const auto& [to, slot] : g.out[k])
            if (auto it = nodeOf.find(to); it != nodeOf.end()) og.edges.push_back({n, it->second, 0, 0, false});
    return og;
}

dl::OpGraph wholeGraph(const Graph& g) {
    dl::OpGraph og;
    og.nodes.resize(g.type.size());
    for (std::uint32_t k = 0; k < g.type.size(); ++k) og.nodes[k].opType = g.type[k];
    for (std::uint32_t k = 0; k < g.type.size(); ++k)
        for (const auto& [to, slot] : g.out[k]) og.edges.push_back({k, to, 0, 0, false});
    return og;
}

// The dummy nodes a longest-path layering of this (acyclic) graph needs: one per layer an edge
// crosses. layoutOpGraph allocates them all; past a few tens of millions it would not fit in memory.
std::uint64_t dummiesNeeded(const dl::OpGraph& og) {
    const std::size_t n = og.nodes.size();
    std::vector<std::vector<std::uint32_t>> succ(n);
    std::vector<int> indeg(n, 0), layer(n, 0);
    for (const auto& e : og.edges) {
        succ[e.from].push_back(e.to);
        ++indeg[e.to];
    }
    std::vector<std::uint32_t> queue;
    for (std::uint32_t v = 0; v < n; ++v)
        if (!indeg[v]) queue.push_back(v);
    for (std::size_t q = 0; q < queue.size(); ++q)
        for (std::uint32_t w : succ[queue[q]]) {
            layer[w] = std::max(layer[w], layer[queue[q]] + 1);
            if (--indeg[w] == 0) queue.push_back(w);
        }
    std::uint64_t d = 0;
    for (const auto& e : og.edges) d += std::uint64_t(std::max(0, layer[e.to] - layer[e.from] - 1));
    return d;
}

long peakRssKb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

void run(benchmark::State& state, const dl::OpGraph& og) {
    const std::uint64_t need = dummiesNeeded(og);
    state.counters["nodes"] = double(og.nodes.size());
    state.counters["edges"] = double(og.edges.size());
    state.counters["hops"] = og.hops;
    state.counters["dummies"] = double(need);
    if (need > 20'000'000) {  // ~100 bytes each: gigabytes before the first sweep
        state.SkipWithError(("not laid out: " + std::to_string(og.nodes.size()) + " nodes would need " +
                             std::to_string(need) + " dummy nodes")
                                .c_str());
        for (auto _ : state) {}
        return;
    }
    dl::OpGraphLayout l;
    for (auto _ : state) {
        l = dl::layoutOpGraph(og);
        benchmark::DoNotOptimize(l.pos.data());
    }
    state.counters["layers"] = l.layers;
    state.counters["max_rows"] = l.maxRows;
    state.counters["crossings"] = double(l.crossings);
    state.counters["peak_rss_mb"] = double(peakRssKb()) / 1024;
}

const Graph& plain() {
    static const Graph g = modelGraph(false);
    return g;
}
const Graph& withHub() {
    static const Graph g = modelGraph(true);
    return g;
}

void BM_Whole(benchmark::State& state) {
    static const dl::OpGraph og = wholeGraph(plain());
    run(state, og);
}

void BM_ModelLargest6(benchmark::State& state) {
    static const dl::OpGraph og = [] {
        dl::OpGraph best;
        for (std::uint32_t k = 0; k < kKernels; k += 1) {
            dl::OpGraph g = neighbourhood(plain(), k, 6);
            if (g.nodes.size() > best.nodes.size()) best = std::move(g);
        }
        return best;
    }();
    run(state, og);
}

void BM_Hub(benchmark::State& state) {
    const dl::OpGraph og = neighbourhood(withHub(), kKernels, int(state.range(0)));
    run(state, og);
}

void BM_HubCapped(benchmark::State& state) {
    const dl::OpGraph og = neighbourhood(withHub(), kKernels, 6, dl::kMaxGraphNodes);
    run(state, og);
}

}  // namespace

BENCHMARK(BM_Whole)->Name("whole")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_ModelLargest6)->Name("model/6")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Hub)->Name("hub")->DenseRange(1, 6)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_HubCapped)->Name("hub capped/6")->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();

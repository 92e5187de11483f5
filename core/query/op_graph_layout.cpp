#include "core/query/op_graph_layout.h"

#include <algorithm>
#include <numeric>

namespace dl {

std::uint64_t countLayerCrossings(std::vector<std::pair<int, int>> edges) {
    // Sorted by the upper end, then the lower end: every later edge with a smaller lower end crosses.
    std::sort(edges.begin(), edges.end());
    int maxLow = 0;
    for (const auto& e : edges) maxLow = std::max(maxLow, e.second);
    std::vector<std::uint64_t> tree(std::size_t(maxLow) + 2, 0);  // Fenwick tree over lower ends
    std::uint64_t crossings = 0, seen = 0;
    for (const auto& e : edges) {
        std::uint64_t notAbove = 0;  // earlier edges whose lower end is <= this one's
        for (int i = e.second + 1; i > 0; i -= i & -i) notAbove += tree[std::size_t(i)];
        crossings += seen - notAbove;
        for (int i = e.second + 1; i < int(tree.size()); i += i & -i) ++tree[std::size_t(i)];
        ++seen;
    }
    return crossings;
}

namespace {

struct Segment {
    int from, to;  // virtual nodes, layer[to] == layer[from] + 1
};

// Back edges of a depth-first search from every node in order (iterative: the IR may be long).
std::vector<bool> findBackEdges(const OpGraph& g) {
    const std::size_t n = g.nodes.size();
    std::vector<std::vector<std::size_t>> out(n);
    for (std::size_t e = 0; e < g.edges.size(); ++e) out[g.edges[e].from].push_back(e);
    std::vector<int> mark(n, 0);  // 0 new, 1 on the stack, 2 done
    std::vector<bool> back(g.edges.size(), false);
    std::vector<std::pair<std::uint32_t, std::size_t>> stack;
    for (std::uint32_t s = 0; s < n; ++s) {
        if (mark[s]) continue;
        stack.push_back({s, 0});
        mark[s] = 1;
        while (!stack.empty()) {
            auto& [v, next] = stack.back();
            if (next == out[v].size()) {
                mark[v] = 2;
                stack.pop_back();
                continue;
            }
            const std::size_t e = out[v][next++];
            const std::uint32_t w = g.edges[e].to;
            if (w == v || mark[w] == 1)
                back[e] = true;
            else if (mark[w] == 0) {
                mark[w] = 1;
                stack.push_back({w, 0});
            }
        }
    }
    return back;
}

}  // namespace

OpGraphLayout layoutOpGraph(const OpGraph& g, int sweeps) {
    OpGraphLayout L;
    const std::size_t n = g.nodes.size();
    L.layer.assign(n, 0);
    L.pos.assign(n, {});
    L.route.assign(g.edges.size(), {});
    if (n == 0) return L;
    L.backEdge = findBackEdges(g);

    // Longest-path layers over the acyclic edges (reversed back edges and self loops dropped), in
    // topological order (Kahn).
    std::vector<std::pair<std::uint32_t, std::uint32_t>> dag;  // from -> to, acyclic
    for (std::size_t e = 0; e < g.edges.size(); ++e) {
        const auto [f, t] = std::pair{g.edges[e].from, g.edges[e].to};
        if (f == t) continue;
        if (L.backEdge[e])
            dag.push_back({t, f});
        else
            dag.push_back({f, t});
    }
    std::vector<std::vector<std::uint32_t>> succ(n);
    std::vector<int> indeg(n, 0);
    for (const auto& [f, t] : dag) {
        succ[f].push_back(t);
        ++indeg[t];
    }
    std::vector<std::uint32_t> queue;
    for (std::uint32_t v = 0; v < n; ++v)
        if (!indeg[v]) queue.push_back(v);
    for (std::size_t q = 0; q < queue.size(); ++q)
        for (std::uint32_t w : succ[queue[q]]) {
            L.layer[w] = std::max(L.layer[w], L.layer[queue[q]] + 1);
            if (--indeg[w] == 0) queue.push_back(w);
        }
    for (int v : L.layer) L.layers = std::max(L.layers, v + 1);

    // Virtual nodes: the real ones, then one dummy per layer a long edge crosses.
    std::vector<int> vlayer(L.layer.begin(), L.layer.end());
    std::vector<Segment> segs;
    std::vector<std::vector<int>> chainOf(g.edges.size());  // per edge: its virtual nodes, lower layer first
    std::size_t di = 0;
    for (const auto& [f, t] : dag) {
        while (di < g.edges.size() && g.edges[di].from == g.edges[di].to) ++di;  // self loops have no route
        std::vector<int>& chain = chainOf[di++];
        chain.push_back(int(f));
        for (int l = vlayer[f] + 1; l < vlayer[t]; ++l) {
            vlayer.push_back(l);
            chain.push_back(int(vlayer.size() - 1));
        }
        chain.push_back(int(t));
        for (std::size_t i = 0; i + 1 < chain.size(); ++i) segs.push_back({chain[i], chain[i + 1]});
    }
    const std::size_t vn = vlayer.size();
    std::vector<std::vector<int>> rows(std::size_t(L.layers));
    // First order: node index (op_graph lists them outwards from the centre), dummies last.
    for (std::size_t v = 0; v < vn; ++v) rows[std::size_t(vlayer[v])].push_back(int(v));
    std::vector<std::vector<int>> up(vn), down(vn);
    for (const Segment& s : segs) {
        down[std::size_t(s.from)].push_back(s.to);
        up[std::size_t(s.to)].push_back(s.from);
    }
    std::vector<double> order(vn, 0);
    const auto renumber = [&] {
        for (auto& r : rows)
            for (std::size_t i = 0; i < r.size(); ++i) order[std::size_t(r[i])] = double(i);
    };
    const auto totalCrossings = [&] {
        std::uint64_t c = 0;
        for (int l = 0; l + 1 < L.layers; ++l) {
            std::vector<std::pair<int, int>> es;
            for (int v : rows[std::size_t(l)])
                for (int w : down[std::size_t(v)])
                    es.push_back({int(order[std::size_t(v)]), int(order[std::size_t(w)])});
            c += countLayerCrossings(std::move(es));
        }
        return c;
    };
    renumber();
    std::vector<std::vector<int>> best = rows;
    std::uint64_t bestCrossings = totalCrossings();
    for (int s = 0; s < sweeps && bestCrossings > 0; ++s) {
        const bool forward = s % 2 == 0;
        for (int k = 1; k < L.layers; ++k) {
            const int l = forward ? k : L.layers - 1 - k;
            std::vector<int>& r = rows[std::size_t(l)];
            std::vector<double> bary(vn, 0);
            for (int v : r) {
                const auto& nb = forward ? up[std::size_t(v)] : down[std::size_t(v)];
                if (nb.empty()) {
                    bary[std::size_t(v)] = order[std::size_t(v)];  // no neighbour on that side: stays
                    continue;
                }
                double sum = 0;
                for (int w : nb) sum += order[std::size_t(w)];
                bary[std::size_t(v)] = sum / double(nb.size());
            }
            std::stable_sort(r.begin(), r.end(),
                             [&](int a, int b) { return bary[std::size_t(a)] < bary[std::size_t(b)]; });
            for (std::size_t i = 0; i < r.size(); ++i) order[std::size_t(r[i])] = double(i);
        }
        const std::uint64_t c = totalCrossings();
        if (c < bestCrossings) {
            bestCrossings = c;
            best = rows;
        }
    }
    rows = best;
    renumber();
    L.crossings = bestCrossings;

    // Coordinates: layer across, rows centred on 0 down.
    std::vector<OpGraphPoint> vpos(vn);
    for (int l = 0; l < L.layers; ++l) {
        const auto& r = rows[std::size_t(l)];
        L.maxRows = std::max(L.maxRows, int(r.size()));
        for (std::size_t i = 0; i < r.size(); ++i)
            vpos[std::size_t(r[i])] = {double(l), double(i) - double(r.size() - 1) / 2.0};
    }
    for (std::size_t v = 0; v < n; ++v) L.pos[v] = vpos[v];
    for (std::size_t e = 0; e < g.edges.size(); ++e) {
        std::vector<OpGraphPoint>& pts = L.route[e];
        for (int v : chainOf[e]) pts.push_back(vpos[std::size_t(v)]);
        if (L.backEdge[e]) std::reverse(pts.begin(), pts.end());
        if (pts.empty()) pts = {L.pos[g.edges[e].from], L.pos[g.edges[e].to]};  // a self loop
    }
    return L;
}

}  // namespace dl

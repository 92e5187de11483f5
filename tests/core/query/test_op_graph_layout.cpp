// The layered layout of op graphs (core/query/op_graph_layout): crossings counted against a brute
// force pair check, layers that grow along every edge not reversed to break a cycle, one dummy per
// layer a long edge crosses, and the barycentric sweeps untangling a graph built crossed.
#include <gtest/gtest.h>

#include <random>

#include "core/query/op_graph_layout.h"

using namespace dl;

namespace {

OpGraph graphOf(std::size_t nodes, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges) {
    OpGraph g;
    g.nodes.resize(nodes);
    for (auto [f, t] : edges) g.edges.push_back({f, t});
    return g;
}

std::uint64_t bruteCrossings(const std::vector<std::pair<int, int>>& es) {
    std::uint64_t c = 0;
    for (std::size_t i = 0; i < es.size(); ++i)
        for (std::size_t j = i + 1; j < es.size(); ++j)
            c += (es[i].first < es[j].first && es[i].second > es[j].second) ||
                (es[i].first > es[j].first && es[i].second < es[j].second);
    return c;
}

}  // namespace

TEST(OpGraphLayout, CrossingsMatchPairwiseCount) {
    std::mt19937 rng(7);
    for (int round = 0; round < 200; ++round) {
        std::vector<std::pair<int, int>> es(std::size_t(rng() % 30));
        for (auto& e : es) e = {int(rng() % 8), int(rng() % 8)};
        EXPECT_EQ(countLayerCrossings(es), bruteCrossings(es)) << "round " << round;
    }
}

TEST(OpGraphLayout, LayersGrowAlongEdgesAndLongEdgesGetDummies) {
    // 0 -> 1 -> 2 -> 3 and a shortcut 0 -> 3: longest path puts 3 on layer 3, the shortcut crosses 2 layers.
    const OpGraph g = graphOf(4, {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
    const OpGraphLayout l = layoutOpGraph(g);
    EXPECT_EQ(l.layers, 4);
    for (std::size_t e = 0; e < g.edges.size(); ++e) {
        EXPECT_FALSE(l.backEdge[e]);
        EXPECT_EQ(l.layer[g.edges[e].to], l.layer[g.edges[e].from] + (e == 3 ? 3 : 1));
        ASSERT_EQ(l.route[e].size(), std::size_t(l.layer[g.edges[e].to] - l.layer[g.edges[e].from] + 1));
        for (std::size_t i = 0; i + 1 < l.route[e].size(); ++i) EXPECT_EQ(l.route[e][i + 1].x, l.route[e][i].x + 1);
    }
}

TEST(OpGraphLayout, CycleIsBrokenByOneReversedEdge) {
    const OpGraph g = graphOf(3, {{0, 1}, {1, 2}, {2, 0}});
    const OpGraphLayout l = layoutOpGraph(g);
    int reversed = 0;
    for (std::size_t e = 0; e < g.edges.size(); ++e) {
        if (l.backEdge[e]) {
            ++reversed;
            EXPECT_LT(l.layer[g.edges[e].to], l.layer[g.edges[e].from]);
        } else {
            EXPECT_GT(l.layer[g.edges[e].to], l.layer[g.edges[e].from]);
        }
    }
    EXPECT_EQ(reversed, 1);
}

TEST(OpGraphLayout, SweepsRemoveCrossingsOfACrossedBipartite) {
    // Two layers of 4, listed so that the first order crosses: a_i -> b_(3-i) with b in index order.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> es;
    for (std::uint32_t i = 0; i < 4; ++i) es.push_back({i, 4 + (3 - i)});
    const OpGraph g = graphOf(8, es);
    EXPECT_EQ(layoutOpGraph(g, 0).crossings, 6u);
    const OpGraphLayout l = layoutOpGraph(g);
    EXPECT_EQ(l.crossings, 0u);
    // The reported figure is the drawn one: recount from the positions.
    std::vector<std::pair<int, int>> drawn;
    for (const auto& e : g.edges) drawn.push_back({int(l.pos[e.from].y * 2), int(l.pos[e.to].y * 2)});
    EXPECT_EQ(bruteCrossings(drawn), 0u);
}

#pragma once
// A layered (Sugiyama) layout of an op graph, left to right along the dataflow: cycles broken by
// reversing DFS back edges, longest-path layers, a dummy node per layer a long edge crosses, and
// barycentric sweeps that keep the order with the fewest crossings. Plain numbers (layer and row
// units): the graph view and the report scale them.
#include <cstdint>
#include <vector>

#include "core/query/op_graph.h"

namespace dl {

struct OpGraphPoint {
    double x = 0, y = 0;  // x: layer (0 = leftmost), y: row within the layer, centred on 0
};

struct OpGraphLayout {
    int layers = 0;
    int maxRows = 0;                // the most nodes (dummies included) in one layer
    std::vector<int> layer;         // per node of the graph
    std::vector<OpGraphPoint> pos;  // per node
    // Per edge: from its source through the dummies to its target (a reversed back edge is listed
    // source to target all the same, so it runs right to left).
    std::vector<std::vector<OpGraphPoint>> route;
    std::vector<bool> backEdge;   // per edge: reversed to break a cycle
    std::uint64_t crossings = 0;  // edge crossings between adjacent layers, after ordering
};

OpGraphLayout layoutOpGraph(const OpGraph& g, int sweeps = 12);

// Crossings of the edges between two adjacent layers, the lower ends' orders given upper first
// (an inversion count, O(E log E)). Exposed for the tests.
std::uint64_t countLayerCrossings(std::vector<std::pair<int, int>> edges);

}  // namespace dl

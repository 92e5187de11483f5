#pragma once
// The neighbourhood of one op in its rank's graph IR: its producers and consumers up to N hops,
// each with its display state and worst figure, the edges with their slots, and what of it lies
// on the analysis's chain. What `dumplens-cli graph` prints and the graph view draws.
#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/analysis_result.h"
#include "core/analysis/rank_dataflow.h"
#include "core/model/dump_index.h"
#include "core/query/op_state.h"

namespace dl {

struct OpGraphNode {
    std::string name;             // the kernel's scoped name in the IR (parameter name, constant text)
    std::string kind = "kernel";  // "kernel", "parameter", "constant"
    std::string opType;
    std::uint32_t op = kNoIndex;  // the dump op (same rank and iteration), kNoIndex when not dumped
    std::uint32_t rank = 0;
    OpState state = OpState::Normal;
    std::uint32_t worstTensor = kNoIndex;  // the tensor of its worst state (largest max|x| among equals)
    int distance = 0;                      // hops from the centre: < 0 producers, > 0 consumers
    bool onChain = false;                  // a chain step or on a chain step's dataflow path
    bool centre = false;
};

struct OpGraphEdge {
    std::uint32_t from = 0, to = 0;  // indices into nodes
    std::uint16_t fromSlot = 0, toSlot = 0;
    bool onChain = false;  // an edge of a chain step's dataflow path
};

struct OpGraph {
    std::vector<OpGraphNode> nodes;  // the centre first
    std::vector<OpGraphEdge> edges;
    int requestedHops = 0;
    int hops = 0;            // the hops it holds: fewer than requested when a cap cut it (whole hops)
    bool truncated = false;  // even 1 hop held more kernels than the cap: its nearest kernels only
};

// The Graph tab's and the report's cap on the kernels of a neighbourhood: more are unreadable, and
// a hub (a mask every layer reads) gives tens of thousands at 6 hops, whose layout would take
// minutes (docs/PERFORMANCE.md, "The graph layout").
constexpr std::size_t kMaxGraphNodes = 400;

// The neighbourhood of dump op `op` (its producers and consumers up to `hops` edges away). False
// with `error` when the op's rank has no graph IR or the IR does not name the op. `analysis` may be null.
// maxKernels > 0: the most hops (down to 1) whose kernels number at most maxKernels, and when even
// 1 hop holds more, its first maxKernels (producers first); parameters and constants are not counted.
bool buildOpGraph(const DumpIndex& index, const AnalysisResult* analysis, const OpStates& states, RankDataflow& flow,
                  std::uint32_t op, int hops, OpGraph& out, std::string& error, std::size_t maxKernels = 0);

// {"nodes": [{"op_name", "op_type", "rank", "state", ...}], "edges": [{"from", "to", "from_slot", "to_slot"}]}
std::string opGraphJson(const DumpIndex& index, const OpGraph& g);
// Graphviz DOT, left to right, nodes filled by state.
std::string opGraphDot(const DumpIndex& index, const OpGraph& g);
// "max|x| 47580" / "3 inf" / "-": the worst figure of a node.
std::string opGraphFigure(const DumpIndex& index, const OpGraphNode& n);

}  // namespace dl

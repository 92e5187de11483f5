#pragma once
// Writes a kernel graph as MindSpore's text IR (rank_N/graphs/ms_output_trace_code_graph_{g}.ir,
// docs/formats.md 1.8) in the 2.x spelling: parameters read through Load, a multi-output kernel
// read through TupleGetItem, an UpdateState after each optimizer kernel and a Depend that orders
// the graph's output after it, so the demo's and the simulator's dumps carry the control nodes a
// real graph has. The edges are the simulation's own (which tensor object each kernel read).
#include <cstdint>
#include <string>
#include <vector>

#include "core/demo/cluster_trace.h"

namespace dl::demo {

// One data edge by positions in the graph's kernel list: output fromSlot of kernel `from` is input
// toSlot of kernel `to`.
struct KernelEdge {
    std::uint32_t from = 0, to = 0;
    std::uint16_t fromSlot = 0, toSlot = 0;
    friend bool operator==(const KernelEdge&, const KernelEdge&) = default;
};

struct KernelSpec {
    std::string fullName, type;
    std::uint16_t inputs = 0, outputs = 0;
    bool updatesState = false;  // an optimizer kernel: ordered by UpdateState
};

// The IR text of graph `graph`: `kernels` in execution order, `edges` between them; every input no
// edge feeds is a graph parameter.
std::string kernelGraphIr(std::uint32_t graph, const std::vector<KernelSpec>& kernels,
                          const std::vector<KernelEdge>& edges);

// The data edges of `rank`'s ops in `iteration`, by stage-graph position: an input is fed by the
// latest earlier op of the same rank and iteration that output the same tensor object.
std::vector<KernelEdge> clusterDataEdges(const ClusterTrace& trace, int rank, int iteration);

std::vector<KernelEdge> demoDataEdges(const DemoTrace& trace, int rank, int iteration);

// Writes m_rank{r}/graphs/ms_output_trace_code_graph_0.ir for every rank from its first iteration.
bool writeClusterGraphIr(const std::string& root, const ClusterTrace& trace, std::string& error);
// The bundled demo's: <rankDir>/graphs/ms_output_trace_code_graph_{graph}.ir from the rank's first iteration.
bool writeDemoGraphIr(const std::string& rankDir, const DemoTrace& trace, int rank, std::uint32_t graph,
                      std::string& error);

}  // namespace dl::demo

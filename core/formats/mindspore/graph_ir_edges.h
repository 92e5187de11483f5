#pragma once
// The dataflow of MindSpore's kernel-graph IR (rank_N/graphs/ms_output_trace_code_graph_{g}.ir,
// docs/formats.md 1.8): which output of which kernel feeds which input of which kernel. Node
// lines `%N(debug) = Op(%a, %para3_w, Tensor(...)) ...` name their inputs; a
// `# Fullname with scope: (…/Op-opK)` line names the kernel. TupleGetItem/getitem pick an output
// slot, MakeTuple builds a tuple, Depend passes its first input on (the rest order it), Load reads
// a parameter, UpdateState only orders, `@graph(...)`, Partial and Switch call subgraphs of the
// same file. Only what the text states becomes an edge: an input that cannot be resolved gives none.
// Read line by line: memory grows with the nodes, never with the file's text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/formats/mindspore/execution_order.h"

namespace dl {

struct IrKernel {
    std::string name;         // full scoped name, "Gradients/Default/net-SqrtNet/gradSqrt-expand/SqrtGrad-op31"
    std::string type;         // "SqrtGrad": from the name, else the primitive without "PrimFunc_"
    std::uint32_t graph = 0;  // graph id of its file
};

// Output `fromSlot` of kernel `from` is input `toSlot` of kernel `to` (indices into kernels).
struct IrEdge {
    std::uint32_t from = 0, to = 0;
    std::uint16_t fromSlot = 0, toSlot = 0;
    friend bool operator==(const IrEdge&, const IrEdge&) = default;
};

// A kernel input that no kernel produced: a graph parameter (weight or graph input) or a constant.
struct IrSourceInput {
    enum class Kind : std::uint8_t { Parameter, Constant };
    std::uint32_t to = 0;
    std::uint16_t toSlot = 0;
    Kind kind = Kind::Parameter;
    std::string label;  // "net.w", "Tensor(shape=[], dtype=Float32, value=1024)" (cut at 64 chars)
};

// One rank's kernels over all its graph files, with their data and control edges.
class IrDataflow {
public:
    std::vector<IrKernel> kernels;
    std::vector<IrEdge> edges;           // data; sorted and unique after finish()
    std::vector<IrEdge> controlEdges;    // ordering only (Depend, UpdateState): never data
    std::vector<IrSourceInput> sources;  // sorted by (to, toSlot) after finish()
    std::size_t filesRead = 0;

    // Sorts, removes duplicates and builds the lookups. Call once after the last file.
    void finish();
    // The kernel a dump names in graph `graph`, by its full scoped name or any file-name form of it
    // (OpOrderTable's tiers); -1 when none or ambiguous.
    std::int64_t find(std::uint32_t graph, std::string_view dumpName) const;
    // Edges into kernel k (its producers) and out of it (its consumers), as indices into edges.
    std::vector<std::uint32_t> inEdges(std::uint32_t k) const;
    std::vector<std::uint32_t> outEdges(std::uint32_t k) const;
    std::vector<const IrSourceInput*> sourcesOf(std::uint32_t k) const;
    // The shortest chain of data edges from kernel `from` to kernel `to` (at most maxHops edges,
    // at most maxVisited kernels looked at); empty when the IR has none.
    std::vector<IrEdge> path(std::uint32_t from, std::uint32_t to, std::size_t maxHops = 64,
                             std::size_t maxVisited = 1u << 20) const;

private:
    std::vector<std::uint32_t> m_outBegin, m_inBegin, m_inOrder;  // CSR over edges by from / by to
    struct GraphNames {
        OpOrderTable table;
        std::vector<std::uint32_t> kernel;
    };                                                                // position -> kernel
    mutable std::unordered_map<std::uint32_t, GraphNames> m_byGraph;  // built on first look-up (not thread-safe)
};

// Parses one file's text (tests); the file's kernels get graph id `graph`.
void parseGraphIrDataflow(std::string_view text, std::uint32_t graph, IrDataflow& out);
// Streams one .ir file; false with `error` when it cannot be read or exceeds maxBytes.
bool readGraphIrDataflow(const std::string& file, std::uint32_t graph, IrDataflow& out, std::string& error,
                         std::size_t maxBytes = std::size_t(1) << 34);
// Every ms_output_trace_code_graph_{g}.ir in graphsDir, then finish(). False when the folder holds
// none (`error` says so) or one cannot be read (`error` names it; the others are kept).
bool readGraphIrFolder(const std::string& graphsDir, IrDataflow& out, std::string& error);

}  // namespace dl

#pragma once
// Pairs the ops and tensors of two runs of the same network. Ops are grouped by (rank,
// iteration, graph); within a group identical op sequences pair one to one, otherwise a
// patience-style sequence alignment on (type, scope without -opN) signatures pairs them, so a
// Cast inserted around one op (which shifts every later -opN) or a recompiled graph still
// lines up. Tensors of paired ops pair by (io, slot). A mapping file pins pairs by hand.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/dump_index.h"

namespace dl {

enum class MatchKind : std::uint8_t {
    Exact,     // same op name (and scope when known)
    Tolerant,  // same type and scope with -opN ignored, found by sequence alignment
    Pinned,    // named in the mapping file
};
const char* matchKindName(MatchKind k);

struct OpPair {
    std::uint32_t a = 0, b = 0;  // op indices in run A / run B
    MatchKind kind = MatchKind::Exact;
};

struct TensorPair {
    std::uint32_t a = 0, b = 0;  // tensor indices
    std::uint32_t opPair = 0;    // index into RunAlignment::ops
};

// One "name_a,name_b" line of a mapping file; names are op names or full scoped names.
struct OpNamePin {
    std::string a, b;
};

struct RunAlignment {
    std::vector<OpPair> ops;                         // ordered like run A's ops
    std::vector<TensorPair> tensors;                 // ordered like run A's tensors
    std::vector<std::uint32_t> onlyOpsA, onlyOpsB;   // unmatched op indices
    std::size_t onlyTensorsA = 0, onlyTensorsB = 0;  // tensors without a counterpart
    std::size_t exactOps = 0, tolerantOps = 0, pinnedOps = 0;
    std::vector<std::string> warnings;
};

// Reads a mapping file: one "name_a,name_b" pair per line; blank lines and lines starting with
// '#' are skipped, an optional "name_a,name_b" header too. False with a reason (line number).
bool readMappingFile(const std::string& path, std::vector<OpNamePin>& out, std::string& error);
bool parseMappingText(std::string_view text, std::vector<OpNamePin>& out, std::string& error);

// Which iterations to pair. Unset: each iteration with its namesake; when the runs share no
// iteration (two msprobe steps), the k-th iteration of A with the k-th of B, matched by name like
// msprobe compares any two dump.json. Set (either or both; an unset side takes the other's
// number): only iteration `a` of run A against iteration `b` of run B.
struct IterationChoice {
    std::optional<std::uint32_t> a, b;
};

RunAlignment alignRuns(const DumpIndex& a, const DumpIndex& b, const std::vector<OpNamePin>& pins = {},
                       const IterationChoice& iterations = {});

// "Gradients/.../gradSqrt/SqrtGrad-op154" -> "Gradients/.../gradSqrt/SqrtGrad": every "-op<digits>".
std::string stripOpNumbers(std::string_view name);

}  // namespace dl

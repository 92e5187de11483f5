#pragma once
// Source locations of an op from MindSpore's text graph IR
// (rank_N/graphs/ms_output_trace_code_graph_{graph}.ir): the node line naming the op's full scope
// ("full_name_with_scope: (Default/.../SqrtGrad-op42)" or "# scope: (...)") is followed by
// "# In file path:line/ code/" trace lines. Absent for Ascend O2/ACL dumps; absence is not an error.
#include <cstddef>
#include <string>
#include <vector>

namespace dl {

// "# In file ..." lines (trimmed, without the leading "# ") for the first node whose scope line
// names `scope` in any .ir file under graphsDir; empty when none. Reads at most maxBytes per file.
std::vector<std::string> findSourceLines(const std::string& graphsDir, const std::string& scope,
                                         std::size_t maxLines = 4, std::size_t maxBytes = std::size_t(1) << 30);

}  // namespace dl

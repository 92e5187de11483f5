#pragma once
// Source locations of an op from MindSpore's text graph IR
// (rank_N/graphs/ms_output_trace_code_graph_{graph}.ir): the node line naming the op's full scope
// ("full_name_with_scope: (Default/.../SqrtGrad-op42)" or "# scope: (...)") is followed by
// "# In file path:line/ code/" trace lines. Absent for Ascend O2/ACL dumps; absence is not an error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dl {

// "# In file ..." lines (trimmed, without the leading "# ") for the first node whose scope line
// names `scope` in any .ir file under graphsDir; empty when none. Reads at most maxBytes per file.
std::vector<std::string> findSourceLines(const std::string& graphsDir, const std::string& scope,
                                         std::size_t maxLines = 4, std::size_t maxBytes = std::size_t(1) << 30);

// Full scoped names of the graph's kernels in the order the IR lists their nodes (the kernel graph
// is printed in execution order), each once, from the "full_name_with_scope: (...)" or
// "scope: (...)" lines. Used to order ops when no execution_order file exists.
void parseGraphIrOpOrder(std::string_view text, std::vector<std::string>& names);
// Same over a file, read line by line up to maxBytes; false (with `error`) when it cannot be opened.
bool readGraphIrOpOrder(const std::string& file, std::vector<std::string>& names, std::string& error,
                        std::size_t maxBytes = std::size_t(1) << 32);
// graph id from "ms_output_trace_code_graph_3.ir"; -1 if not one.
std::int64_t graphIrGraphId(std::string_view fileName);

}  // namespace dl

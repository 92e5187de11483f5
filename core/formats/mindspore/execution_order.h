#pragma once
// execution_order/ms_execution_order_graph_{g}.csv (kernel full scoped names in execution order)
// and ms_global_execution_order_graph_{g}.csv (iterations the graph ran), docs/formats.md 1.7, and the
// conversion of a scoped name to the op-name form each era writes into dump file names (5.1).
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dl {

// How a full scoped name ("Default/network-WithLossCell/_backbone-Net/Add-op3") appears in file names.
enum class ScopeNameForm : std::uint8_t {
    ShortMs22,   // MindSpore 1.3-2.2 sync/e2e: "/" -> "--", then the text after the last "--" ("Add-op3")
    ScopedMs23,  // MindSpore 2.3+ and every CANN/A+M name: '/', '\\', '.', ' ' -> '_'
    BinMs12,     // MindSpore <=1.2 .bin: "/" -> "--" on the whole name
};

// Names in execution order. The literal header "NodeExecutionOrder-FullNameWithScope" is skipped when
// present (only as the first non-empty line); blank lines and CR are ignored. Fails only on empty input.
bool parseExecutionOrderCsv(std::string_view text, std::vector<std::string>& names, std::string& error);

// One decimal iteration per line; lines that are not a number are skipped and listed in `badLines`
// (1-based). Returns false when no line parses and the text is not empty of lines.
bool parseGlobalExecutionOrderCsv(std::string_view text, std::vector<std::uint32_t>& iterations,
                                  std::vector<std::uint32_t>& badLines, std::string& error);

std::string scopeToFileName(std::string_view fullName, ScopeNameForm form);

// The kernels of one graph in the order they ran (an execution order file, or the graph IR's node
// order), looked up by the name a dump file gives them in any era: the full scoped name, "--" (<=1.2
// .bin) or '_' (2.3+, CANN) for '/', the short name after the last scope (1.3-2.2), and as a last
// resort the name without its "-opN" suffix (renumbered kernels). A name that fits two different
// kernels at the best tier it matches is not placed rather than placed by guess.
class OpOrderTable {
public:
    void assign(std::vector<std::string> fullNames);
    std::size_t size() const { return m_names.size(); }
    const std::vector<std::string>& names() const { return m_names; }
    bool empty() const { return m_names.empty(); }
    // Position of the kernel `dumpName` names (-1 when not listed or ambiguous); `fullName` set when found.
    std::int64_t find(std::string_view dumpName, const std::string** fullName = nullptr) const;

private:
    static constexpr std::int64_t kAmbiguous = -2;
    using Tier = std::unordered_map<std::string, std::int64_t>;
    static void add(Tier& t, std::string key, std::int64_t pos, const std::vector<std::string>& names);
    std::vector<std::string> m_names;
    Tier m_scoped, m_short, m_loose;  // full-name forms, short-name forms, forms without "-opN"
};

// "Add-op12" -> "Add"; names without an all-digit "-opN" tail come back unchanged.
std::string_view stripOpSuffix(std::string_view name);

// graph id from "ms_execution_order_graph_3.csv" / "ms_global_execution_order_graph_3.csv"; -1 if not one.
std::int64_t executionOrderGraphId(std::string_view fileName, bool* isGlobal = nullptr);

}  // namespace dl

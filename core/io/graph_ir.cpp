#include "core/io/graph_ir.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace dl {

namespace {

std::string_view trim(std::string_view s) {
    const auto a = s.find_first_not_of(" \t\r");
    if (a == std::string_view::npos) return {};
    return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

bool isIrFile(const std::filesystem::path& p) {
    const std::string name = p.filename().string();
    return name.rfind("ms_output_trace_code_graph_", 0) == 0 && p.extension() == ".ir";
}

// Scans one file; the trace lines follow the scope line as '#' or ':' continuation lines.
std::vector<std::string> scanFile(const std::filesystem::path& file, const std::string& needle, std::size_t maxLines,
                                  std::size_t maxBytes) {
    std::ifstream in(file);
    std::string line;
    std::size_t bytes = 0;
    while (bytes < maxBytes && std::getline(in, line)) {
        bytes += line.size() + 1;
        if (line.find(needle) == std::string::npos) continue;
        std::vector<std::string> out;
        while (out.size() < maxLines && std::getline(in, line)) {
            const std::string_view t = trim(line);
            if (t.empty()) continue;
            if (t[0] != '#' && t[0] != ':') break;
            if (t.rfind("# In file", 0) == 0) out.emplace_back(t.substr(2));
        }
        if (!out.empty()) return out;
    }
    return {};
}

}  // namespace

std::vector<std::string> findSourceLines(const std::string& graphsDir, const std::string& scope, std::size_t maxLines,
                                         std::size_t maxBytes) {
    if (scope.empty() || graphsDir.empty()) return {};
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (std::filesystem::directory_iterator it(graphsDir, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec) && isIrFile(it->path())) files.push_back(it->path());
    std::sort(files.begin(), files.end());
    // "(scope)" matches both the full_name_with_scope and the "# scope:" spellings, and not a
    // longer name that merely starts with this one (SqrtGrad-op4 vs SqrtGrad-op42).
    const std::string needle = "(" + scope + ")";
    for (const auto& f : files) {
        auto lines = scanFile(f, needle, maxLines, maxBytes);
        if (!lines.empty()) return lines;
    }
    return {};
}

}  // namespace dl

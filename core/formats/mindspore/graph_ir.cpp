#include "core/formats/mindspore/graph_ir.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <unordered_set>

#include "core/util/text.h"

namespace dl {

namespace {

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

// Collects the scope named on one IR line, once per name.
class OrderCollector {
public:
    explicit OrderCollector(std::vector<std::string>& names) : m_names(names) { m_names.clear(); }
    void line(std::string_view l) {
        std::size_t key = l.find("full_name_with_scope: (");
        std::size_t skip = 23;
        if (key == std::string_view::npos) {
            key = l.find("scope: (");
            skip = 8;
        }
        if (key == std::string_view::npos) return;
        const std::size_t start = key + skip, close = l.rfind(')');
        if (close == std::string_view::npos || close <= start) return;
        std::string name(trim(l.substr(start, close - start)));
        if (!name.empty() && m_seen.insert(name).second) m_names.push_back(std::move(name));
    }

private:
    std::vector<std::string>& m_names;
    std::unordered_set<std::string> m_seen;
};

}  // namespace

void parseGraphIrOpOrder(std::string_view text, std::vector<std::string>& names) {
    OrderCollector c(names);
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t nl = text.find('\n', pos);
        c.line(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
    }
}

bool readGraphIrOpOrder(const std::string& file, std::vector<std::string>& names, std::string& error,
                        std::size_t maxBytes) {
    std::ifstream in(file);
    if (!in) {
        error = "graph IR cannot be opened";
        return false;
    }
    OrderCollector c(names);
    std::string line;
    std::size_t bytes = 0;
    while (bytes < maxBytes && std::getline(in, line)) {
        bytes += line.size() + 1;
        c.line(line);
    }
    if (in.bad()) {
        error = "graph IR read error";
        return false;
    }
    return true;
}

std::int64_t graphIrGraphId(std::string_view f) {
    constexpr std::string_view prefix = "ms_output_trace_code_graph_";
    if (!f.starts_with(prefix) || !f.ends_with(".ir")) return -1;
    f = f.substr(prefix.size(), f.size() - prefix.size() - 3);
    std::uint32_t id = 0;
    auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), id);
    if (f.empty() || ec != std::errc() || p != f.data() + f.size()) return -1;
    return id;
}

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

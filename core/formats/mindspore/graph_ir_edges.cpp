#include "core/formats/mindspore/graph_ir_edges.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/formats/mindspore/graph_ir.h"
#include "core/formats/mindspore/graph_ir_parser.h"
#include "core/util/text.h"

namespace dl {

using graph_ir_detail::FileParser;

void parseGraphIrDataflow(std::string_view text, std::uint32_t graph, IrDataflow& out) {
    FileParser p(graph, out);
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t nl = text.find('\n', pos);
        p.line(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    p.finish();
    ++out.filesRead;
}

bool readGraphIrDataflow(const std::string& file, std::uint32_t graph, IrDataflow& out, std::string& error,
                         std::size_t maxBytes) {
    std::ifstream in(file);
    if (!in) {
        error = file + ": graph IR cannot be opened";
        return false;
    }
    FileParser p(graph, out);
    std::string line;
    std::size_t bytes = 0;
    while (std::getline(in, line)) {
        bytes += line.size() + 1;
        if (bytes > maxBytes) {
            error = file + ": graph IR larger than " + std::to_string(maxBytes) + " bytes: not read";
            return false;
        }
        p.line(line);
    }
    if (in.bad()) {
        error = file + ": graph IR read error";
        return false;
    }
    p.finish();
    ++out.filesRead;
    return true;
}

bool readGraphIrFolder(const std::string& graphsDir, IrDataflow& out, std::string& error) {
    std::error_code ec;
    std::vector<std::pair<std::int64_t, std::filesystem::path>> files;
    for (std::filesystem::directory_iterator it(graphsDir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::int64_t g = graphIrGraphId(it->path().filename().string());
        if (g >= 0 && it->is_regular_file(ec)) files.emplace_back(g, it->path());
    }
    std::sort(files.begin(), files.end());
    bool ok = true;
    for (const auto& [g, f] : files) {
        std::string e;
        if (!readGraphIrDataflow(f.string(), std::uint32_t(g), out, e)) {
            if (ok) error = e;
            ok = false;
        }
    }
    out.finish();
    if (files.empty()) {
        error = graphsDir + ": no graph IR (ms_output_trace_code_graph_N.ir)";
        return false;
    }
    return ok;
}

void IrDataflow::finish() {
    const auto byFrom = [](const IrEdge& a, const IrEdge& b) {
        return std::tie(a.from, a.fromSlot, a.to, a.toSlot) < std::tie(b.from, b.fromSlot, b.to, b.toSlot);
    };
    for (auto* list : {&edges, &controlEdges}) {
        std::sort(list->begin(), list->end(), byFrom);
        list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    std::sort(sources.begin(), sources.end(), [](const IrSourceInput& a, const IrSourceInput& b) {
        return std::tie(a.to, a.toSlot, a.label) < std::tie(b.to, b.toSlot, b.label);
    });
    sources.erase(std::unique(sources.begin(), sources.end(),
                              [](const IrSourceInput& a, const IrSourceInput& b) {
                                  return a.to == b.to && a.toSlot == b.toSlot && a.label == b.label;
                              }),
                  sources.end());
    const std::size_t n = kernels.size();
    m_outBegin.assign(n + 1, 0);
    m_inBegin.assign(n + 1, 0);
    for (const IrEdge& e : edges) {
        ++m_outBegin[e.from + 1];
        ++m_inBegin[e.to + 1];
    }
    for (std::size_t i = 0; i < n; ++i) {
        m_outBegin[i + 1] += m_outBegin[i];
        m_inBegin[i + 1] += m_inBegin[i];
    }
    m_inOrder.assign(edges.size(), 0);
    std::vector<std::uint32_t> fill(m_inBegin.begin(), m_inBegin.end() - 1);
    for (std::uint32_t i = 0; i < edges.size(); ++i) m_inOrder[fill[edges[i].to]++] = i;
    m_byGraph.clear();
}

std::int64_t IrDataflow::find(std::uint32_t graph, std::string_view dumpName) const {
    auto it = m_byGraph.find(graph);
    if (it == m_byGraph.end()) {
        // Built on the first look-up of a graph: its name forms cost more than the edges.
        GraphNames g;
        std::vector<std::string> names;
        for (std::uint32_t k = 0; k < kernels.size(); ++k)
            if (kernels[k].graph == graph) {
                names.push_back(kernels[k].name);
                g.kernel.push_back(k);
            }
        g.table.assign(std::move(names));
        it = m_byGraph.emplace(graph, std::move(g)).first;
    }
    const std::int64_t pos = it->second.table.find(dumpName);
    return pos < 0 ? -1 : std::int64_t(it->second.kernel[std::size_t(pos)]);
}

std::vector<std::uint32_t> IrDataflow::outEdges(std::uint32_t k) const {
    std::vector<std::uint32_t> r;
    if (k + 1 >= m_outBegin.size()) return r;
    for (std::uint32_t i = m_outBegin[k]; i < m_outBegin[k + 1]; ++i) r.push_back(i);
    return r;
}

std::vector<std::uint32_t> IrDataflow::inEdges(std::uint32_t k) const {
    std::vector<std::uint32_t> r;
    if (k + 1 >= m_inBegin.size()) return r;
    for (std::uint32_t i = m_inBegin[k]; i < m_inBegin[k + 1]; ++i) r.push_back(m_inOrder[i]);
    std::sort(r.begin(), r.end(), [&](std::uint32_t a, std::uint32_t b) {
        return std::tie(edges[a].toSlot, edges[a].from) < std::tie(edges[b].toSlot, edges[b].from);
    });
    return r;
}

std::vector<const IrSourceInput*> IrDataflow::sourcesOf(std::uint32_t k) const {
    std::vector<const IrSourceInput*> r;
    auto it = std::lower_bound(sources.begin(), sources.end(), k,
                               [](const IrSourceInput& s, std::uint32_t v) { return s.to < v; });
    for (; it != sources.end() && it->to == k; ++it) r.push_back(&*it);
    return r;
}

std::vector<IrEdge> IrDataflow::path(std::uint32_t from, std::uint32_t to, std::size_t maxHops,
                                     std::size_t maxVisited) const {
    if (from >= kernels.size() || to >= kernels.size() || from == to) return {};
    // Breadth first: the shortest path, each kernel reached once (through the edge that reached it).
    std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>> via;  // kernel -> (edge, depth)
    std::deque<std::uint32_t> queue{from};
    via[from] = {0xffffffffu, 0};
    while (!queue.empty() && via.size() < maxVisited) {
        const std::uint32_t k = queue.front();
        queue.pop_front();
        const std::uint32_t depth = via[k].second;
        if (depth >= maxHops) continue;
        for (std::uint32_t i = m_outBegin[k]; i < m_outBegin[k + 1]; ++i) {
            const std::uint32_t next = edges[i].to;
            if (via.count(next)) continue;
            via[next] = {i, depth + 1};
            if (next == to) {
                std::vector<IrEdge> p;
                for (std::uint32_t cur = to; cur != from;) {
                    const IrEdge& e = edges[via[cur].first];
                    p.push_back(e);
                    cur = e.from;
                }
                std::reverse(p.begin(), p.end());
                return p;
            }
            queue.push_back(next);
        }
    }
    return {};
}

}  // namespace dl

#include "core/formats/mindspore/mapping_csv.h"

#include <fstream>
#include <sstream>

#include "core/util/text_lines.h"

namespace dl {

void MappingTable::parse(std::string_view text, std::vector<std::uint32_t>& badLines) {
    forEachLine(text, [&](std::string_view line, std::uint32_t no) {
        if (line.empty()) return;
        std::size_t comma = line.find(',');
        if (comma == std::string_view::npos || comma == 0 || comma + 1 == line.size()) {
            badLines.push_back(no);
            return;
        }
        m_map[std::string(line.substr(0, comma))] = std::string(line.substr(comma + 1));
    });
}

bool MappingTable::read(const std::string& path, std::vector<std::uint32_t>& badLines, std::string& error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "cannot open " + path;
        return false;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    parse(ss.str(), badLines);
    return true;
}

const std::string* MappingTable::lookup(std::string_view name) const {
    auto find = [&](std::string_view k) -> const std::string* {
        auto it = m_map.find(std::string(k));
        return it == m_map.end() ? nullptr : &it->second;
    };
    if (auto* s = find(name)) return s;
    if (std::size_t dot = name.rfind('.'); dot != std::string_view::npos)
        if (auto* s = find(name.substr(0, dot))) return s;
    if (std::size_t dot = name.find('.'); dot != std::string_view::npos)
        if (auto* s = find(name.substr(0, dot))) return s;
    return nullptr;
}

}  // namespace dl

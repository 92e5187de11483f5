#pragma once
// The one line splitter of the readers: '\n'-separated lines with a trailing '\r' dropped (files
// written on Windows); a final empty line (text ending in '\n') is not a line.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dl {

// Calls f(line, lineNo) for each line, lineNo counting from 1.
template <class F>
void forEachLine(std::string_view text, F&& f) {
    std::uint32_t no = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        f(line, ++no);
        start = end + 1;
    }
}

inline std::vector<std::string> splitLines(std::string_view text) {
    std::vector<std::string> lines;
    forEachLine(text, [&](std::string_view line, std::uint32_t) { lines.emplace_back(line); });
    return lines;
}

}  // namespace dl

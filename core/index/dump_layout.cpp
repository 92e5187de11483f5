#include "core/index/dump_layout.h"

#include <charconv>

namespace dl {

std::vector<std::string_view> splitPath(std::string_view path) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (start <= path.size()) {
        const auto slash = path.find('/', start);
        const auto end = slash == std::string_view::npos ? path.size() : slash;
        if (end > start) parts.push_back(path.substr(start, end - start));
        if (slash == std::string_view::npos) break;
        start = slash + 1;
    }
    return parts;
}

std::optional<std::uint32_t> parseUint(std::string_view s) {
    if (s.empty() || s.size() > 10) return std::nullopt;
    std::uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

std::optional<std::uint32_t> rankFromFolderName(std::string_view name) {
    for (std::string_view prefix : {"rank_", "device_", "rank"})
        if (name.starts_with(prefix)) {
            if (name == "rank") return 0;
            return parseUint(name.substr(prefix.size()));
        }
    return std::nullopt;
}

std::optional<std::uint32_t> stepFromFolderName(std::string_view name) {
    if (name.starts_with("step_")) return parseUint(name.substr(5));
    if (name.starts_with("step")) return parseUint(name.substr(4));
    return std::nullopt;
}

static std::optional<std::uint32_t> iterationFromFolderName(std::string_view name) {
    if (name.starts_with("iteration_")) return parseUint(name.substr(10));
    if (auto s = stepFromFolderName(name)) return s;
    return parseUint(name);
}

DumpLocation locateDumpFolder(const std::vector<std::string_view>& dirs) {
    DumpLocation loc;
    std::size_t rankPos = dirs.size();
    for (std::size_t i = dirs.size(); i-- > 0;) {
        if (auto r = rankFromFolderName(dirs[i])) {
            loc.rank = r;
            rankPos = i;
            break;
        }
    }
    if (dirs.empty()) return loc;
    std::size_t i = dirs.size() - 1;
    if (auto it = iterationFromFolderName(dirs[i]); it && i != rankPos) {
        loc.iteration = it;
        if (i == 0) return loc;
        --i;
    }
    if (dirs[i].starts_with("device_") && i == rankPos) {
        // <= 1.2: {net}/m_device{id}/m_iteration{n}
        if (i > 0) loc.net = std::string(dirs[i - 1]);
        return loc;
    }
    if (i == rankPos) return loc;
    if (auto g = parseUint(dirs[i])) {
        loc.graph = *g;
        if (i == 0) return loc;
        --i;
    }
    if (i != rankPos) loc.net = std::string(dirs[i]);
    // CANN tree: .../{device_id}/{model_name}/{model_id}/{iteration}: device id stands in for the rank.
    if (!loc.rank && i > 0)
        if (auto dev = parseUint(dirs[i - 1])) loc.rank = dev;
    return loc;
}

}  // namespace dl

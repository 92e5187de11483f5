#pragma once
// mapping.csv: "{mapped},{original}" per line, NO header (docs/formats.md 1.9). Written when a dump file
// name would exceed NAME_MAX; the tensor file is then named by the digits of {mapped}.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dl {

class MappingTable {
public:
    // Every non-empty line is an entry (the first row is data, not a header). The split is at the
    // first comma: mapped names are digits, originals may hold commas. Lines without a comma or
    // with an empty side are skipped and their 1-based numbers listed in `badLines`.
    void parse(std::string_view text, std::vector<std::uint32_t>& badLines);
    bool read(const std::string& path, std::vector<std::uint32_t>& badLines, std::string& error);

    // Original name for a file or key: tries `name` as is, then without its extension, then the
    // digits before the first '.' (MindSpore writes "{digits}.npy", mapping may hold either form).
    const std::string* lookup(std::string_view name) const;

    std::size_t size() const { return m_map.size(); }
    const std::unordered_map<std::string, std::string>& entries() const { return m_map; }

private:
    std::unordered_map<std::string, std::string> m_map;
};

}  // namespace dl

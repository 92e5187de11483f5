#pragma once
// Interned strings addressed by 32-bit ids; id 0 is always the empty string.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dl {

using StrId = std::uint32_t;

class StringPool {
public:
    StringPool();
    StrId intern(std::string_view s);
    std::string_view view(StrId id) const { return m_strings[id]; }
    const std::string& str(StrId id) const { return m_strings[id]; }
    std::size_t size() const { return m_strings.size(); }
    // Id of s if present, else nullopt-like 0xffffffff.
    StrId find(std::string_view s) const;
    std::size_t bytes() const;

private:
    struct Hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::vector<std::string> m_strings;
    std::unordered_map<std::string, StrId, Hash, std::equal_to<>> m_ids;
};

}  // namespace dl

#include "core/index/string_pool.h"

namespace dl {

StringPool::StringPool() { intern(""); }

StrId StringPool::intern(std::string_view s) {
    if (auto it = m_ids.find(s); it != m_ids.end()) return it->second;
    const auto id = StrId(m_strings.size());
    m_strings.emplace_back(s);
    m_ids.emplace(m_strings.back(), id);
    return id;
}

StrId StringPool::find(std::string_view s) const {
    auto it = m_ids.find(s);
    return it == m_ids.end() ? 0xffffffffu : it->second;
}

std::size_t StringPool::bytes() const {
    std::size_t n = 0;
    for (const auto& s : m_strings) n += s.size() + 1;
    return n;
}

}  // namespace dl

#include "core/model/string_pool.h"

#include <functional>

namespace dl {
namespace {
std::size_t hashOf(std::string_view s) { return std::hash<std::string_view>{}(s); }
}  // namespace

StringPool::StringPool() : m_offsets{0, 0} {}

void StringPool::rebuildTable() const {
    std::size_t cap = 16;
    while (cap < size() * 2) cap <<= 1;
    m_table.assign(cap, 0);
    for (StrId id = 0; id < size(); ++id) {
        std::size_t i = hashOf(view(id)) & (cap - 1);
        while (m_table[i]) i = (i + 1) & (cap - 1);
        m_table[i] = id + 1;
    }
}

StrId StringPool::lookup(std::string_view s, std::size_t hash) const {
    if (m_table.size() < size() * 2) rebuildTable();
    const std::size_t mask = m_table.size() - 1;
    for (std::size_t i = hash & mask; m_table[i]; i = (i + 1) & mask)
        if (view(m_table[i] - 1) == s) return m_table[i] - 1;
    return 0xffffffffu;
}

StrId StringPool::find(std::string_view s) const { return lookup(s, hashOf(s)); }

StrId StringPool::intern(std::string_view s) {
    const std::size_t h = hashOf(s);
    if (const StrId id = lookup(s, h); id != 0xffffffffu) return id;
    const auto id = StrId(size());
    m_blob.append(s);
    m_offsets.push_back(std::uint32_t(m_blob.size()));
    if (m_table.size() < size() * 2) {
        rebuildTable();
    } else {
        const std::size_t mask = m_table.size() - 1;
        std::size_t i = h & mask;
        while (m_table[i]) i = (i + 1) & mask;
        m_table[i] = id + 1;
    }
    return id;
}

bool StringPool::assign(std::string blob, std::vector<std::uint32_t> offsets) {
    if (offsets.size() < 2 || offsets.front() != 0 || offsets[1] != 0 || offsets.back() != blob.size()) return false;
    for (std::size_t i = 1; i < offsets.size(); ++i)
        if (offsets[i] < offsets[i - 1]) return false;
    m_blob = std::move(blob);
    m_offsets = std::move(offsets);
    m_table.clear();
    return true;
}

}  // namespace dl

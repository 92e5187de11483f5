#pragma once
// Interned strings addressed by 32-bit ids; id 0 is always the empty string. All text lives in
// one buffer with an offset table, so a million names load from the cache as two bulk copies;
// the hash table for interning is built lazily, only when something is interned or looked up.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dl {

using StrId = std::uint32_t;

class StringPool {
public:
    StringPool();
    StrId intern(std::string_view s);
    std::string_view view(StrId id) const { return {m_blob.data() + m_offsets[id], m_offsets[id + 1] - m_offsets[id]}; }
    std::string str(StrId id) const { return std::string(view(id)); }
    std::size_t size() const { return m_offsets.size() - 1; }
    // Id of s if present, else 0xffffffff.
    StrId find(std::string_view s) const;
    std::size_t bytes() const { return m_blob.size() + m_offsets.size() * sizeof(std::uint32_t); }

    // Bulk form for serialisation: the text buffer and size()+1 offsets into it.
    const std::string& blob() const { return m_blob; }
    const std::vector<std::uint32_t>& offsets() const { return m_offsets; }
    // Replaces the contents; false when the offsets are not a valid non-decreasing table over blob.
    bool assign(std::string blob, std::vector<std::uint32_t> offsets);

private:
    void rebuildTable() const;
    StrId lookup(std::string_view s, std::size_t hash) const;
    std::string m_blob;
    std::vector<std::uint32_t> m_offsets;        // size()+1 entries
    mutable std::vector<std::uint32_t> m_table;  // open addressing: id+1, 0 = empty
};

}  // namespace dl

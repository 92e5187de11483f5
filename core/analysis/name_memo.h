#pragma once
// A name test answered once per interned string: op names repeat in every iteration and op types
// across thousands of ops, so a per-op test (lower-casing, token tables) becomes a table lookup.
// Not thread-safe: fill it from one thread.
#include <cstdint>
#include <vector>

#include "core/model/string_pool.h"

namespace dl {

template <class T>
class NameMemo {
public:
    explicit NameMemo(const StringPool& pool) : m_pool(pool), m_known(pool.size(), 0), m_value(pool.size()) {}

    // f(std::string_view) -> T, called at most once per id.
    template <class F>
    T get(StrId id, F&& f) {
        if (id >= m_known.size()) return f(m_pool.view(id));  // interned after construction
        if (!m_known[id]) {
            m_value[id] = f(m_pool.view(id));
            m_known[id] = 1;
        }
        return m_value[id];
    }

private:
    const StringPool& m_pool;
    std::vector<std::uint8_t> m_known;
    std::vector<T> m_value;
};

}  // namespace dl

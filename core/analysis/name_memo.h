#pragma once
// A name test answered once per interned string: op names repeat in every iteration and op types
// across thousands of ops, so a per-op test (lower-casing, token tables) becomes a table lookup.
// Not thread-safe: fill it from one thread.
#include <atomic>
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

// The same for a yes/no test, safe to fill from several threads at once (the analysis classifies
// blocks of ops on all cores): two threads meeting a new string both test it and store the same
// answer.
class SharedNameFlag {
public:
    explicit SharedNameFlag(const StringPool& pool) : m_pool(pool), m_state(pool.size()) {}

    // f(std::string_view) -> bool, called about once per id.
    template <class F>
    bool get(StrId id, F&& f) {
        if (id >= m_state.size()) return f(m_pool.view(id));
        std::uint8_t s = m_state[id].load(std::memory_order_relaxed);
        if (!s) {
            s = f(m_pool.view(id)) ? 2 : 1;
            m_state[id].store(s, std::memory_order_relaxed);
        }
        return s == 2;
    }

private:
    const StringPool& m_pool;
    std::vector<std::atomic<std::uint8_t>> m_state;  // 0 unknown, 1 false, 2 true
};

}  // namespace dl

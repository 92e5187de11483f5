#pragma once
// One pass over a CSV text's delimiters for core/formats/mindspore/statistic_csv.cpp: the next ',' or '\n' 64
// bytes at a time, and a line's end.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Internal linkage, as when this was part of statistic_csv.cpp: the same inlining of the row loop.
namespace dl {
namespace {  // NOLINT(google-build-namespaces): included by statistic_csv.cpp only

// Positions of the next ',' or '\n' in the text, found 64 bytes at a time (SSE2 compares into a
// bit mask), so splitting a row into cells and finding its end is one pass over its bytes.
class DelimiterScanner {
public:
    explicit DelimiterScanner(std::string_view text) : m_p(text.data()), m_n(text.size()) { load(0); }
    // First ',' or '\n' at or after `pos`; size() when none.
    std::size_t next(std::size_t pos) {
        if (pos >= m_n) return m_n;
        if (pos < m_block || pos >= m_block + 64) load(pos & ~std::size_t(63));
        std::uint64_t m = m_mask & (~std::uint64_t(0) << (pos - m_block));
        while (!m) {
            if (m_block + 64 >= m_n) return m_n;
            load(m_block + 64);
            m = m_mask;
        }
        return m_block + std::size_t(__builtin_ctzll(m));
    }

private:
    void load(std::size_t block) {
        m_block = block;
        if (block + 64 <= m_n) [[likely]]
            m_mask = mask64(m_p + block);
        else
            loadTail(block);
    }
    [[gnu::cold, gnu::noinline]] void loadTail(std::size_t block) {  // the last block: never read past the text
        char tail[64];
        std::memset(tail, 0, sizeof tail);
        std::memcpy(tail, m_p + block, m_n - block);
        m_mask = mask64(tail);
    }
    static std::uint64_t mask64(const char* p) {
#if defined(__SSE2__)
        const __m128i comma = _mm_set1_epi8(','), nl = _mm_set1_epi8('\n');
        std::uint64_t m = 0;
        for (std::size_t k = 0; k < 4; ++k) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
            const int bits = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, comma), _mm_cmpeq_epi8(v, nl)));
            m |= std::uint64_t(std::uint16_t(bits)) << (16 * k);
        }
#else
        std::uint64_t m = 0;
        for (int k = 0; k < 64; ++k) m |= std::uint64_t(p[k] == ',' || p[k] == '\n') << k;
#endif
        return m;
    }
    const char* m_p;
    std::size_t m_n;
    std::size_t m_block = 0;
    std::uint64_t m_mask = 0;
};

std::size_t scanLineEnd(std::string_view text, std::size_t from) {
    const void* nl = std::memchr(text.data() + from, '\n', text.size() - from);
    return nl ? std::size_t(static_cast<const char*>(nl) - text.data()) : text.size();
}

}  // namespace
}  // namespace dl

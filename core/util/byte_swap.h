#pragma once
// Byte-order reversal for 2/4/8-byte values (std::byteswap is C++23; g++ 12 in C++20 lacks it).
#include <cstdint>

namespace dl {

template <class U>
constexpr U byteSwap(U v) {
    if constexpr (sizeof(U) == 2)
        return U(__builtin_bswap16(std::uint16_t(v)));
    else if constexpr (sizeof(U) == 4)
        return U(__builtin_bswap32(std::uint32_t(v)));
    else
        return U(__builtin_bswap64(std::uint64_t(v)));
}

}  // namespace dl

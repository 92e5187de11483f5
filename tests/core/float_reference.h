#pragma once
// Float rounding written out independently of core, for checking precision verdicts against.
#include <cmath>
#include <cstdint>
#include <cstring>

namespace dltest {

// Round-to-nearest-even to bfloat16, written out on the float's bits.
inline float toBf16(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    float y;
    std::memcpy(&y, &u, 4);
    return y;
}

// Spacing of a p-bit significand at magnitude m (m a normal number), by walking the binades.
inline double spacing(double m, int p) {
    int e = 0;
    while (std::ldexp(1.0, e + 1) <= m) ++e;
    while (std::ldexp(1.0, e) > m) --e;
    return std::ldexp(1.0, e - p + 1);
}

}  // namespace dltest

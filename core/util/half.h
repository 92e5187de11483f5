#pragma once
// Scalar IEEE binary16 and bfloat16 conversions with the rounding real hardware uses
// (round to nearest even). Shared by the statistics kernels, the demo writer and the replay.
#include <bit>
#include <cmath>
#include <cstdint>

namespace dl {

// The largest finite value of each training dtype: the one definition core and ui use.
inline constexpr float kFp16Max = 65504.0f;
inline constexpr float kFp16MinNormal = 6.103515625e-05f;   // 2^-14
inline constexpr float kFp16MinSubnormal = 5.9604645e-08f;  // 2^-24
inline constexpr float kBf16Max = 3.3895313892515355e38f;   // (2 - 2^-7) * 2^127
inline constexpr float kFp32Max = 3.4028234663852886e38f;   // (2 - 2^-23) * 2^127

inline float halfToFloat(std::uint16_t h) {
    const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    const std::uint32_t mant = h & 0x3ffu;
    std::uint32_t bits;
    if (exp == 0) {
        if (mant == 0) return std::bit_cast<float>(sign);
        // Subnormal: value = mant * 2^-24.
        const float v = float(mant) * kFp16MinSubnormal;
        return sign ? -v : v;
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 112u) << 23) | (mant << 13);
    }
    return std::bit_cast<float>(bits);
}

// IEEE round-to-nearest-even float -> half; overflow gives +/-inf (INF/NAN mode).
inline std::uint16_t floatToHalf(float f) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) return std::uint16_t(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    if (absx >= 0x477ff000u) return std::uint16_t(sign | 0x7c00u);  // rounds to >= 65520 -> inf
    if (absx < 0x38800000u) {                                       // below 2^-14: subnormal or zero
        const float a = std::bit_cast<float>(absx);
        const auto m = std::uint32_t(std::nearbyint(a / kFp16MinSubnormal));  // default FE_TONEAREST
        return std::uint16_t(sign | m);
    }
    const std::uint32_t mant = absx & 0x7fffffu;
    std::uint32_t h = ((absx >> 23) - 112u) << 10 | (mant >> 13);
    const std::uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return std::uint16_t(sign | h);
}

inline float bf16ToFloat(std::uint16_t b) { return std::bit_cast<float>(std::uint32_t(b) << 16); }

inline std::uint16_t floatToBf16(float f) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((x >> 16) | 0x40u);  // quiet NaN
    const std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return std::uint16_t((x + rounding) >> 16);
}

// Rounds through the narrow type and back: what an fp16/bf16 kernel would store.
inline float roundToHalf(float f) { return halfToFloat(floatToHalf(f)); }
inline float roundToBf16(float f) { return bf16ToFloat(floatToBf16(f)); }
// Saturation mode (Atlas training default): out-of-range results clamp to +/-65504, NaN stays NaN.
inline float roundToHalfSaturating(float f) {
    if (std::isnan(f)) return f;
    const float r = roundToHalf(f);
    if (std::isinf(r)) return r > 0 ? kFp16Max : -kFp16Max;
    return r;
}

}  // namespace dl

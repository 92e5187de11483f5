#pragma once
// Histogram of log2|x|: one bin per power of two. Bin for exponent e counts 2^e <= |x| < 2^(e+1).
// Exponents run from kMinExp (below bf16's smallest subnormal 2^-133) to kMaxExp (bf16/fp32 max
// exponent); values outside land in the first/last bin. Zero, NaN, +Inf and -Inf have own bins.
#include <array>
#include <cstdint>
#include <vector>

namespace dl {

struct Log2Histogram {
    static constexpr int kMinExp = -134;
    static constexpr int kMaxExp = 128;
    static constexpr int kExpBins = kMaxExp - kMinExp + 1;
    std::array<std::uint64_t, kExpBins> exp{};  // exp[e - kMinExp]
    std::uint64_t zero = 0, nan = 0, posInf = 0, negInf = 0;

    static constexpr int binOf(int e) { return e < kMinExp ? 0 : (e > kMaxExp ? kExpBins - 1 : e - kMinExp); }
    void merge(const Log2Histogram& o) {
        for (int i = 0; i < kExpBins; ++i) exp[i] += o.exp[i];
        zero += o.zero;
        nan += o.nan;
        posInf += o.posInf;
        negInf += o.negInf;
    }
    bool empty() const;
    // Compact varint encoding for the index (only the non-empty exponent span is stored).
    void encode(std::vector<std::uint8_t>& out) const;
    // Returns false on malformed input. `pos` advances past the record.
    bool decode(const std::uint8_t* data, std::size_t size, std::size_t& pos);
};

}  // namespace dl

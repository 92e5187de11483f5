#pragma once
// Two bits of TensorStats::known beyond the figures of tensor_stats.h, set by the msprobe reader:
// the writer's Mean / L2 norm is +-inf while its Max and Min are finite, i.e. the statistic
// overflowed in the tensor's own dtype (msprobe reduces fp16 in fp16), the values did not. The
// figure itself stays unknown. (A TensorStats with them takes DumpIndex's wide form: rare.)
#include <cstdint>

namespace dl::stat {

inline constexpr std::uint32_t MeanOverflow = 1u << 16;
inline constexpr std::uint32_t L2Overflow = 1u << 17;

}  // namespace dl::stat

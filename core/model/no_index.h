#pragma once
// The index of no op and no tensor (DumpIndex::ops / DumpIndex::tensors), shared by every layer that
// refers to records by index.
#include <cstdint>

namespace dl {

inline constexpr std::uint32_t kNoIndex = 0xffffffffu;

}  // namespace dl

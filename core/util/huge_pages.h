#pragma once
// Transparent huge pages for large fresh allocations. Faulting in hundreds of MB 4 KiB at a time
// costs more than the work done on them under virtualisation (a reopen of the index cache, a
// 100 MB dump.json); with 2 MiB pages it is 512 times fewer faults. Only advice: where THP is off,
// nothing changes.
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

namespace dl {

inline void adviseHugePages(void* p, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
    constexpr std::uintptr_t k2M = std::uintptr_t(2) << 20;
    const std::uintptr_t b = (std::uintptr_t(p) + k2M - 1) & ~(k2M - 1), e = (std::uintptr_t(p) + bytes) & ~(k2M - 1);
    if (e > b) ::madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

// Sizes an empty vector or string to n elements, advising huge pages before resize() touches it.
template <class V>
void allocateHuge(V& v, std::size_t n) {
    v.reserve(n);
    adviseHugePages(v.data(), n * sizeof(*v.data()));
    v.resize(n);
}

}  // namespace dl

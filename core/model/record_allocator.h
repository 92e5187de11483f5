#pragma once
// The allocator of DumpIndex's big record arrays (ops, tensors, sides): std::allocator, except that
// an index reader can size an array without constructing its records, because it decodes every
// byte of them at once. A reopen of 10M tensors otherwise writes the 1.1 GB of default records once
// on one thread (after the kernel zeroed the pages, before the decoder overwrites them): ~0.15 s of
// a one-second reopen.
//
// Only inside a SkipRecordInit scope, and only on its thread, does a resize() leave new elements
// unconstructed; everywhere else resize() and emplace_back() value-initialise as always. The
// records are implicit-lifetime aggregates of trivially copyable members, so the decoder's bytes
// (memcpy / zstd into the storage) are their value.
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace dl {

namespace record_alloc_detail {
inline thread_local bool skipInit = false;
}

template <class T>
struct RecordAllocator : std::allocator<T> {
    using value_type = T;
    RecordAllocator() noexcept = default;
    template <class U>
    RecordAllocator(const RecordAllocator<U>&) noexcept {}

    // The value-initialising construct (resize(n), emplace_back()): skipped inside SkipRecordInit.
    template <class U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
        static_assert(std::is_trivially_copyable_v<U> && std::is_trivially_destructible_v<U>);
        if (!record_alloc_detail::skipInit) ::new (static_cast<void*>(p)) U();
    }
    template <class U, class... A>
    void construct(U* p, A&&... a) {
        ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
    }
    template <class U>
    bool operator==(const RecordAllocator<U>&) const noexcept {
        return true;
    }
};

// While alive, resize() of a RecordAllocator vector on this thread leaves the new records as the
// allocation holds them: fill every byte before anything reads them.
class SkipRecordInit {
public:
    SkipRecordInit() noexcept : m_was(record_alloc_detail::skipInit) { record_alloc_detail::skipInit = true; }
    ~SkipRecordInit() { record_alloc_detail::skipInit = m_was; }
    SkipRecordInit(const SkipRecordInit&) = delete;
    SkipRecordInit& operator=(const SkipRecordInit&) = delete;

private:
    bool m_was;
};

// The vector type of those arrays.
template <class T>
using RecordVector = std::vector<T, RecordAllocator<T>>;

}  // namespace dl

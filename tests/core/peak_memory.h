#pragma once
// For tests that bound what a reader allocates: the process's peak resident memory, and the
// sanitizer settings that keep that figure about the reader. Include from one file per test
// executable only (it defines ASan's default options).
#include <sys/resource.h>

#if defined(__SANITIZE_ADDRESS__)
// Under ASan freed blocks wait in a 256 MiB quarantine, which would count as the reader's memory:
// keep it small so the peak-memory bounds still measure the reader.
extern "C" const char* __asan_default_options() { return "quarantine_size_mb=4"; }
// ASan's shadow (an eighth of what is touched) and redzones come on top (measured: +35 MiB).
constexpr long kSanitizerSlackMb = 48;
#else
constexpr long kSanitizerSlackMb = 0;
#endif

namespace dltest {

// Peak resident set of this process so far, in KiB.
inline long maxRssKb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

}  // namespace dltest

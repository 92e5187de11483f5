#pragma once
// The TBB on the system is not built with ThreadSanitizer, which therefore does not see the
// fork-join edges of a parallel_for (the data set up before it, the results read after it) and
// would report them as races. These two macros state them; core/util/parallel_for.h uses them
// around every TBB loop in core (use parallelFor / parallelSort rather than these directly).
#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#define DL_FORK_JOIN_ACQUIRE(p) __tsan_acquire(p)
#define DL_FORK_JOIN_RELEASE(p) __tsan_release(p)
#else
#define DL_FORK_JOIN_ACQUIRE(p) ((void)(p))
#define DL_FORK_JOIN_RELEASE(p) ((void)(p))
#endif

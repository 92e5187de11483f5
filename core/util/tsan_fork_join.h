#pragma once
// The TBB on the system is not built with ThreadSanitizer, which therefore does not see the
// fork-join edges of a parallel_for (the data set up before it, the results read after it) and
// would report them as races. Code that runs TBB loops states them with these two macros: the
// caller releases a fork point before the loop and acquires a join point after it; each body
// acquires the fork point first and releases the join point last. Races between bodies are still
// reported. The points must be static (a worker reads the body's captures, so it must acquire
// before it can touch anything the closure points to).
#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#define DL_FORK_JOIN_ACQUIRE(p) __tsan_acquire(p)
#define DL_FORK_JOIN_RELEASE(p) __tsan_release(p)
#else
#define DL_FORK_JOIN_ACQUIRE(p) ((void)(p))
#define DL_FORK_JOIN_RELEASE(p) ((void)(p))
#endif

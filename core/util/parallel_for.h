#pragma once
// Every TBB loop in core goes through these, so that ThreadSanitizer sees its fork and its join
// (core/util/tsan_fork_join.h): what the caller wrote before the loop happens before every body,
// and every body happens before what the caller reads after it. Races between bodies are still
// reported. Outside TSan builds the points are no-ops and these are tbb::parallel_for and
// tbb::parallel_sort.
//
// The order matters, and is why this is one wrapper and not macros at each loop: the body (and
// the range) are built first, then the fork point is released, then the loop runs, then the join
// point is acquired; each body call acquires the fork point before it reads anything through its
// captures and releases the join point last (also on an early return or an exception).
#include <algorithm>
#include <functional>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>

#include "core/util/tsan_fork_join.h"

namespace dl {

namespace parallel_detail {

// The fork and join points of one loop: keyed by the body's closure type, which is unique to its
// call site, so loops elsewhere running at the same time do not synchronise through them (that
// would hide their races). Static: a worker must not reach them through the closure.
template <class Body>
struct Points {
    static inline int fork = 0, join = 0;
};

template <class Body>
struct Bracket {
    Bracket() { DL_FORK_JOIN_ACQUIRE(&Points<Body>::fork); }
    ~Bracket() { DL_FORK_JOIN_RELEASE(&Points<Body>::join); }
    Bracket(const Bracket&) = delete;
    Bracket& operator=(const Bracket&) = delete;
};

// Runs `loop` (in `arena` when given) between the fork and the join of Body's loop.
template <class Body, class Loop>
void forkJoin(tbb::task_arena* arena, const Loop& loop) {
    DL_FORK_JOIN_RELEASE(&Points<Body>::fork);
    if (arena)
        arena->execute(loop);
    else
        loop();
    DL_FORK_JOIN_ACQUIRE(&Points<Body>::join);
}

}  // namespace parallel_detail

// tbb::parallel_for(first, last, body): body(i) for every i in [first, last).
template <class Index, class Body>
void parallelFor(Index first, Index last, const Body& body, tbb::task_arena* arena = nullptr) {
    const auto each = [&body](Index i) {
        const parallel_detail::Bracket<Body> bracket;
        body(i);
    };
    parallel_detail::forkJoin<Body>(arena, [&] { tbb::parallel_for(first, last, each); });
}

// tbb::parallel_for(range, body): body(subrange) over pieces of `range`.
template <class Value, class Body>
void parallelFor(const tbb::blocked_range<Value>& range, const Body& body, tbb::task_arena* arena = nullptr) {
    const auto each = [&body](const tbb::blocked_range<Value>& r) {
        const parallel_detail::Bracket<Body> bracket;
        body(r);
    };
    parallel_detail::forkJoin<Body>(arena, [&] { tbb::parallel_for(range, each); });
}

// tbb::parallel_sort for a comparator that is a strict total order (ties broken, e.g. by row
// number): every correct sort then gives the same order. Under TSan std::sort stands in, because
// tbb::parallel_sort's bodies are TBB's own (std::sort on pieces) and cannot be bracketed; the
// comparator only reads what the caller finished writing.
template <class It, class Less = std::less<>>
void parallelSort(It first, It last, const Less& less = {}) {
#if defined(__SANITIZE_THREAD__)
    std::sort(first, last, less);
#else
    tbb::parallel_sort(first, last, less);
#endif
}

}  // namespace dl

#pragma once
// Progress reporting and cancellation for long core operations, usable from a GUI worker thread.
// Every long job (indexDump, ShardBuilder::scan, analyze, buildTimeline, compareRuns) takes a
// std::stop_token in its options; a stopped job returns promptly with `cancelled` set and nothing
// of its partial work in the result.
#include <atomic>
#include <cstdint>
#include <functional>
#include <stop_token>

namespace dl {

// indexDump's two passes: the listing of every file's names and statistic.csv rows (files only,
// counted as each shard's are listed), then the reading of the tensor files (files and bytes).
enum class ProgressPhase : std::uint8_t { Reading, Listing };

struct Progress {
    std::uint64_t filesDone = 0, filesTotal = 0;
    std::uint64_t bytesDone = 0, bytesTotal = 0;
    ProgressPhase phase = ProgressPhase::Reading;
};

// Called from worker threads (serialised by the caller); must be cheap and thread-safe.
using ProgressCallback = std::function<void(const Progress&)>;

// Progress of a job that reads no files (analysis, timeline, comparison): work units done of
// total, called from one thread at a time every few thousand units and once at the end.
using WorkCallback = std::function<void(std::uint64_t done, std::uint64_t total)>;

// How many work units a job does between two looks at its stop token and two WorkCallback calls:
// an atomic load per few thousand ops is free, and a stop is seen within a millisecond.
inline constexpr std::uint64_t kWorkStride = 4096;

}  // namespace dl

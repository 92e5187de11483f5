#pragma once
// Progress reporting and cancellation for long core operations, usable from a GUI worker thread.
#include <atomic>
#include <cstdint>
#include <functional>
#include <stop_token>

namespace dl {

struct Progress {
    std::uint64_t filesDone = 0, filesTotal = 0;
    std::uint64_t bytesDone = 0, bytesTotal = 0;
};

// Called from worker threads (serialised by the caller); must be cheap and thread-safe.
using ProgressCallback = std::function<void(const Progress&)>;

}  // namespace dl

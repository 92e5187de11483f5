#pragma once
// One-pass, mergeable statistics over tensor elements of any dump dtype (fp16/bf16 aware).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/stats/log2_histogram.h"
#include "core/stats/stats_partial.h"
#include "core/stats/tensor_stats.h"
#include "core/util/dtype.h"

namespace dl {

class StatsAccumulator {
public:
    // Adds `count` elements stored at `data` (alignment not required). Bool/int types count as values.
    void add(const void* data, std::size_t count, DType dtype, bool bigEndian = false);
    void merge(const StatsAccumulator& other);
    // Final figures with every stat::Known bit set that the data determines.
    TensorStats stats() const;
    const Log2Histogram& histogram() const { return m_hist; }

private:
    StatsPartial m_p;            // sums and counts over the elements seen so far
    std::uint64_t m_count = 0;   // all elements, whatever their value
    bool m_unsupported = false;  // a complex or unknown dtype was added: figures unknown
    Log2Histogram m_hist;
};

// Streams a file region through the accumulator in chunks (tensors larger than memory work);
// large regions are split across threads. Returns false with a reason on I/O errors or a short file.
bool computeFileStats(const char* path, std::uint64_t offset, std::uint64_t bytes, DType dtype, bool bigEndian,
                      TensorStats& stats, Log2Histogram& hist, std::string& error);

// Tuning knobs for computeFileStats (benchmarks and tests; the defaults suit the indexer).
struct FileStatsOptions {
    std::size_t chunkBytes = 1u << 20;            // read size per pread (rounded to elements)
    std::uint64_t parallelThreshold = 64u << 20;  // regions larger than this are split
    int maxThreads = 0;                           // 0: as many as TBB allows
};
bool computeFileStats(const char* path, std::uint64_t offset, std::uint64_t bytes, DType dtype, bool bigEndian,
                      TensorStats& stats, Log2Histogram& hist, std::string& error, const FileStatsOptions& options);

}  // namespace dl

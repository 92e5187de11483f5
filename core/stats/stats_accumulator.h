#pragma once
// One-pass, mergeable statistics over tensor elements of any dump dtype (fp16/bf16 aware).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/stats/log2_histogram.h"
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
    // (implementation-defined partial sums; see stats_accumulator.cpp)
    double m_min = 0, m_max = 0, m_sum = 0, m_sumSq = 0, m_maxAbs = 0;
    std::uint64_t m_count = 0, m_finite = 0, m_nan = 0, m_posInf = 0, m_negInf = 0, m_zero = 0,
                  m_neg = 0, m_pos = 0, m_sat = 0, m_sub = 0;
    Log2Histogram m_hist;
};

// Streams a file region through the accumulator in chunks (tensors larger than memory work);
// large regions are split across threads. Returns false with a reason on I/O errors or a short file.
bool computeFileStats(const char* path, std::uint64_t offset, std::uint64_t bytes, DType dtype,
                      bool bigEndian, TensorStats& stats, Log2Histogram& hist, std::string& error);

}  // namespace dl

#pragma once
// Tensors whose values are finite but whose Mean or L2 norm overflowed: msprobe computes an fp16
// tensor's statistics in fp16, so a sum past 65504 reads inf while every value fits. Not an
// overflow of the run (the verdict stays clean), but a statistic lost, which a report must say.
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/dump_index.h"

namespace dl {

// Tensor indices in index order (execution order within a rank).
std::vector<std::uint32_t> findStatisticOverflows(const DumpIndex& idx);

// "3 tensor(s) hold finite values (largest |x| 14592) but a statistic that overflowed in their own
// dtype: ... first: __mul__ Tensor.__mul__.0.forward output.0 (float16, Mean, L2)"; "" when none.
std::string statisticOverflowNote(const DumpIndex& idx, const std::vector<std::uint32_t>& tensors);

}  // namespace dl

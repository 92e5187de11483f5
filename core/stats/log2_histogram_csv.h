#pragma once
// A log2|x| histogram as CSV for spreadsheets: one row per non-empty power-of-two bin
// ("2^e <= |x| < 2^(e+1)"), then zero, NaN, +Inf and -Inf.
#include <string>

#include "core/stats/log2_histogram.h"

namespace dl {

std::string log2HistogramCsv(const Log2Histogram& h);

}  // namespace dl

#include "core/stats/log2_histogram_csv.h"

#include <fmt/format.h>

#include <cmath>

namespace dl {

std::string log2HistogramCsv(const Log2Histogram& h) {
    std::string out = "bin,abs_from,abs_below,count\n";
    for (int i = 0; i < Log2Histogram::kExpBins; ++i) {
        if (!h.exp[static_cast<std::size_t>(i)]) continue;
        const int e = i + Log2Histogram::kMinExp;
        out += fmt::format("2^{},{:.9g},{:.9g},{}\n", e, std::ldexp(1.0, e), std::ldexp(1.0, e + 1),
                           h.exp[static_cast<std::size_t>(i)]);
    }
    out += fmt::format("zero,0,0,{}\nnan,,,{}\n+inf,,,{}\n-inf,,,{}\n", h.zero, h.nan, h.posInf, h.negInf);
    return out;
}

}  // namespace dl

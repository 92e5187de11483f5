#pragma once
// Running sums behind StatsAccumulator, shared with the SIMD kernels that fill them.
#include <cstdint>
#include <limits>

namespace dl {

struct StatsPartial {
    // Over finite values only; min/max stay +/-inf until a finite value arrives.
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();
    double maxAbs = 0, sum = 0, sumSq = 0;
    std::uint64_t finite = 0, nan = 0, posInf = 0, negInf = 0, zero = 0, neg = 0, pos = 0, sat = 0, sub = 0;

    void merge(const StatsPartial& o) {
        if (o.min < min) min = o.min;
        if (o.max > max) max = o.max;
        if (o.maxAbs > maxAbs) maxAbs = o.maxAbs;
        sum += o.sum;
        sumSq += o.sumSq;
        finite += o.finite;
        nan += o.nan;
        posInf += o.posInf;
        negInf += o.negInf;
        zero += o.zero;
        neg += o.neg;
        pos += o.pos;
        sat += o.sat;
        sub += o.sub;
    }
};

}  // namespace dl

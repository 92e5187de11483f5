#include "core/query/stat_figures.h"

#include <cmath>
#include <limits>

namespace dl {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

std::optional<double> statFigure(const TensorStats& s, StatFigure f) {
    const std::uint64_t pos = s.has(stat::PosInfCount) ? s.posInfCount : 0;
    const std::uint64_t neg = s.has(stat::NegInfCount) ? s.negInfCount : 0;
    const bool nanSeen = s.has(stat::NanCount) && s.nanCount > 0;
    // The finite figure, when the dump gave it and there was a finite value to take it over.
    std::uint32_t bit = 0;
    double finite = kNaN;
    switch (f) {
        case StatFigure::Min:
            bit = stat::Min;
            finite = s.min;
            break;
        case StatFigure::Max:
            bit = stat::Max;
            finite = s.max;
            break;
        case StatFigure::MaxAbs:
            bit = stat::MaxAbs;
            finite = s.maxAbs;
            break;
        case StatFigure::Mean:
            bit = stat::Mean;
            finite = s.mean;
            break;
    }
    const bool known = s.has(bit);
    if (!known && !pos && !neg && !nanSeen) return std::nullopt;
    const bool haveFinite = known && !std::isnan(finite);
    switch (f) {
        case StatFigure::Max:
            if (pos) return kInf;
            if (haveFinite) return finite;
            if (neg) return -kInf;
            break;
        case StatFigure::Min:
            if (neg) return -kInf;
            if (haveFinite) return finite;
            if (pos) return kInf;
            break;
        case StatFigure::MaxAbs:
            if (pos || neg) return kInf;
            if (haveFinite) return finite;
            break;
        case StatFigure::Mean:
            if (pos && neg) return kNaN;  // inf - inf
            if (pos) return kInf;
            if (neg) return -kInf;
            if (haveFinite) return finite;
            break;
    }
    // No finite and no infinite value: all NaN when NaN were counted, else the figure is unknown
    // (an empty tensor, or stats that only say the figure is missing).
    if (nanSeen) return kNaN;
    return std::nullopt;
}

int compareFigures(double a, double b) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
    return a < b ? -1 : (b < a ? 1 : 0);
}

std::string nonFiniteCountText(const TensorStats& s, std::uint64_t count) {
    return (s.nonFiniteCountsAreLowerBounds() && count > 0 ? "at least " : "") + std::to_string(count);
}

}  // namespace dl

#include "core/timeline/time_axis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>

namespace dl {

double niceTickStep(double minStep) {
    if (!(minStep > 0) || !std::isfinite(minStep)) return 1;
    const double p = std::pow(10.0, std::floor(std::log10(minStep)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * p >= minStep) return m * p;
    return 10 * p;
}

RulerTicks rulerTicks(double from, double to, double minStep, int maxTicks) {
    RulerTicks t;
    if (!std::isfinite(from) || !std::isfinite(to) || maxTicks <= 0) return t;
    if (to < from) std::swap(from, to);
    // Never more than maxTicks, whatever minStep says (it may be 0, NaN or far too small).
    const double span = to - from;
    const double floorStep = span > 0 ? span / maxTicks : 0;
    double step = niceTickStep(std::isfinite(minStep) ? std::max(minStep, floorStep) : floorStep);
    // A step below the resolution of `from` would put every tick on the same value.
    const double big = std::max(std::abs(from), std::abs(to));
    const double ulp = std::nextafter(big, INFINITY) - big;
    if (!std::isfinite(ulp)) return t;
    for (int k = 0; step <= 4 * ulp && k < 64; ++k) step *= 10;
    if (!(step > 4 * ulp) || !std::isfinite(step)) return t;
    t.step = step;
    t.first = std::ceil(from / step) * step;
    const double n = std::floor((to - t.first) / step) + 1;
    t.count = n > 0 ? static_cast<int>(std::min<double>(n, maxTicks)) : 0;
    return t;
}

std::string formatTimeOffset(double us, double resolution) {
    if (!std::isfinite(us)) return "–";
    const double mag = std::max(std::abs(us), resolution > 0 && std::isfinite(resolution) ? resolution : 0.0);
    const char* unit = "µs";
    double scale = 1;
    if (mag >= 1e6) unit = "s", scale = 1e6;
    else if (mag >= 1e3) unit = "ms", scale = 1e3;
    else if (mag > 0 && mag < 1) unit = "ns", scale = 1e-3;
    const double v = us / scale;
    int decimals = 3;
    if (resolution > 0 && std::isfinite(resolution))
        decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(resolution / scale) - 1e-9)), 0, 9);
    std::string s = fmt::format("{:.{}f}", v, decimals);
    if (s.find('.') != std::string::npos) {  // 1.500 -> 1.5, 2.000 -> 2
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
    }
    if (s == "-0") s = "0";
    return s + " " + unit;
}

}  // namespace dl

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
    if (mag >= 1e6)
        unit = "s", scale = 1e6;
    else if (mag >= 1e3)
        unit = "ms", scale = 1e3;
    else if (mag > 0 && mag < 1)
        unit = "ns", scale = 1e-3;
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

TimeFormat timeFormatFor(double maxAbs, double step) {
    TimeFormat f;
    maxAbs = std::isfinite(maxAbs) ? std::abs(maxAbs) : 0;
    step = std::isfinite(step) && step > 0 ? step : 1;
    const double mag = std::max(maxAbs, step);
    if (mag >= 1e6)
        f.unit = "s", f.scale = 1e6;
    else if (mag >= 1e3)
        f.unit = "ms", f.scale = 1e3;
    else if (mag < 1)
        f.unit = "ns", f.scale = 1e-3;
    // Enough decimals that neighbouring ticks differ (a step of 1, 2 or 5 units of 10^k).
    f.decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step / f.scale) - 1e-9)), 0, 9);
    return f;
}

std::string formatTime(double us, const TimeFormat& f, bool sign) {
    if (!std::isfinite(us)) return "–";
    std::string s = fmt::format("{:.{}f}", us / f.scale, f.decimals);
    if (s.find_first_not_of("-0.") == std::string::npos) return "0";  // "-0.00" and "0.00" alike
    if (sign && s[0] != '-') s.insert(0, "+");
    return *f.unit ? s + " " + f.unit : s;
}

std::string OffsetRuler::label(int i) const { return formatTime(ticks.at(i), format, true); }

OffsetRuler offsetRuler(double from, double to, double ref, double minStep, bool integerSteps) {
    OffsetRuler r;
    r.ref = ref;
    if (integerSteps) minStep = std::max(minStep, 1.0);  // 1, 2, 5, 10...: whole positions only
    r.ticks = rulerTicks(from - ref, to - ref, minStep);
    if (integerSteps && r.ticks.step < 1) r.ticks = {};
    const double last = r.ticks.count ? std::max(std::abs(r.ticks.at(0)), std::abs(r.ticks.at(r.ticks.count - 1))) : 0;
    r.format = timeFormatFor(last, r.ticks.step);
    if (integerSteps) r.format = TimeFormat{1, "", 0};
    return r;
}

}  // namespace dl

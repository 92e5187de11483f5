#include "core/timeline/time_axis.h"

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

}  // namespace dl

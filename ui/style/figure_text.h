#pragma once
// A tensor figure (dl::statFigure) as text: "–" when the dump does not tell, inf/-inf/nan spelled out.
#include <QString>
#include <cmath>
#include <cstdint>
#include <optional>

#include "core/query/stat_figures.h"

namespace dlui {

inline QString figureText(std::optional<double> v) {
    if (!v) return QStringLiteral("–");
    if (std::isnan(*v)) return QStringLiteral("nan");
    if (std::isinf(*v)) return *v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(*v, 'g', 6);
}

inline QString figureText(const dl::TensorStats& s, dl::StatFigure f) { return figureText(dl::statFigure(s, f)); }

// A NaN/Inf count of `s`: "at least 1" where the dump only implies some (msprobe's Max=Infinity,
// a statistic.csv without count columns), never a made-up exact 1 (dl::nonFiniteCountText).
inline QString countText(const dl::TensorStats& s, std::uint64_t count) {
    return QString::fromStdString(dl::nonFiniteCountText(s, count));
}

}  // namespace dlui

#pragma once
// A tensor figure (dl::statFigure) as text: "–" when the dump does not tell, inf/-inf/nan spelled out.
#include <QString>
#include <cmath>
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

}  // namespace dlui

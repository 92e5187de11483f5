#pragma once
// A row of colour swatches with the names of a palette's states (timeline toolbars).
#include <QWidget>

#include "ui/style/state_colors.h"

namespace dlui {

QWidget* makeStateLegend(const StatePalette& palette, QWidget* parent);

}  // namespace dlui

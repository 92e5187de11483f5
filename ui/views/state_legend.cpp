#include "ui/views/state_legend.h"

#include <QHBoxLayout>
#include <QLabel>

namespace dlui {

QWidget* makeStateLegend(const StatePalette& palette, QWidget* parent) {
    auto* w = new QWidget(parent);
    auto* l = new QHBoxLayout(w);
    l->setContentsMargins(0, 0, 0, 0);
    for (int s = 0; s < dl::kOpStateCount; ++s) {
        auto* swatch = new QLabel(w);
        swatch->setFixedSize(12, 12);
        swatch->setStyleSheet(QStringLiteral("background:%1;border-radius:2px").arg(palette.colors[s].name()));
        l->addWidget(swatch);
        l->addWidget(new QLabel(palette.names[s], w));
        l->addSpacing(6);
    }
    return w;
}

}  // namespace dlui

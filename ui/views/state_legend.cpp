#include "ui/views/state_legend.h"

#include <QHBoxLayout>
#include <QLabel>

#include "ui/style/theme.h"

namespace dlui {

QWidget* makeStateLegend(const StatePalette& palette, QWidget* parent) {
    auto* w = new QWidget(parent);
    auto* l = new QHBoxLayout(w);
    l->setContentsMargins(0, 0, 0, 0);
    for (int s = 0; s < dl::kOpStateCount; ++s) {
        // A plain filled box (palette, not a stylesheet): the state colour on any theme.
        auto* swatch = new QLabel(w);
        swatch->setFixedSize(12, 12);
        swatch->setAutoFillBackground(true);
        QPalette p = swatch->palette();
        // As the timeline draws it: lightened on a dark palette.
        p.setColor(QPalette::Window,
                   theme::isDark(p) ? theme::mix(palette.colors[s], Qt::white, 0.3) : palette.colors[s]);
        swatch->setPalette(p);
        l->addWidget(swatch);
        l->addWidget(new QLabel(palette.names[s], w));
        l->addSpacing(6);
    }
    return w;
}

}  // namespace dlui

#pragma once
// A window's first-run size: the preferred size, shrunk to the screen's available area (a laptop
// screen of 1366x768 must show the whole window, docks included).
#include <QScreen>
#include <QSize>
#include <QWidget>

namespace dlui {

inline QSize fitToScreen(const QWidget* w, QSize preferred) {
    const QScreen* screen = w->screen();
    if (!screen) return preferred;
    const QSize avail = screen->availableGeometry().size();
    // Leave room for the window frame the window manager adds.
    return preferred.boundedTo(QSize(avail.width() - 16, avail.height() - 40)).expandedTo(w->minimumSizeHint());
}

}  // namespace dlui

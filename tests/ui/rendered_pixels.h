#pragma once
// The GUI tests' proof that something is on screen: how many pixels of one colour a widget paints.
#include <QColor>
#include <QImage>
#include <QWidget>

// Pixels of `colour` (RGB; alpha ignored) in what `w` renders at its current size.
inline int renderedPixels(QWidget* w, const QColor& colour) {
    QImage img(w->size(), QImage::Format_ARGB32);
    w->render(&img);
    const QRgb rgb = colour.rgb() & 0xffffff;
    int n = 0;
    for (int y = 0; y < img.height(); ++y) {
        const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
        for (int x = 0; x < img.width(); ++x) n += (line[x] & 0xffffff) == rgb;
    }
    return n;
}

#include "ui/style/theme.h"

#include <QGuiApplication>
#include <algorithm>
#include <cmath>

namespace dlui::theme {

namespace {

double channel(double c) {
    c /= 255.0;
    return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}

double luminance(const QColor& c) {
    return 0.2126 * channel(c.red()) + 0.7152 * channel(c.green()) + 0.0722 * channel(c.blue());
}

QColor withAlpha(QColor c, int a) {
    c.setAlpha(a);
    return c;
}

}  // namespace

bool isDark(const QPalette& p) {
    return luminance(p.color(QPalette::Window)) < luminance(p.color(QPalette::WindowText));
}

QColor mix(const QColor& a, const QColor& b, double t) {
    const auto m = [t](int x, int y) { return static_cast<int>(std::lround(x + (y - x) * t)); };
    return QColor(m(a.red(), b.red()), m(a.green(), b.green()), m(a.blue(), b.blue()), m(a.alpha(), b.alpha()));
}

double contrastRatio(const QColor& a, const QColor& b) {
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QColor textOn(const QColor& fill) {
    return contrastRatio(fill, Qt::black) >= contrastRatio(fill, Qt::white) ? QColor(Qt::black) : QColor(Qt::white);
}

QColor forBackground(const QColor& c, const QPalette& p) { return isDark(p) ? mix(c, Qt::white, 0.35) : c; }

ViewColors ViewColors::print() {
    ViewColors v;
    v.canvas = kCanvas;
    v.laneStripe = kLaneStripe;
    v.laneHeader = kLaneHeader;
    v.laneHeaderText = kLaneHeaderText;
    v.labelFill = kPanelFill;
    v.labelText = kText;
    v.separator = kLaneSeparator;
    v.ruler = kRuler;
    v.overview = kOverview;
    v.axisText = kAxisText;
    v.overviewVeil = kOverviewVeil;
    v.emptyText = kTextMuted;
    v.selection = kSelection;
    v.selectionBand = kSelectionBand;
    v.hover = kHover;
    v.match = QColor(0xf0, 0xc0, 0x00);
    v.flow = kSelection;
    v.chainArrow = kStateOrigin;
    v.markOutline = Qt::white;
    v.plotBackground = Qt::white;
    v.plotText = kText;
    v.plotGrid = kGridLine;
    return v;
}

ViewColors ViewColors::fromPalette(const QPalette& p) {
    if (!isDark(p)) {
        // The light palette of every desktop: the tuned constants, with the system's highlight.
        ViewColors v = print();
        v.selection = p.color(QPalette::Highlight);
        v.selectionBand = withAlpha(v.selection, 50);
        v.flow = v.selection;
        v.plotBackground = p.color(QPalette::Base);
        v.plotText = p.color(QPalette::Text);
        return v;
    }
    const QColor base = p.color(QPalette::Base), window = p.color(QPalette::Window),
                 text = p.color(QPalette::WindowText);
    ViewColors v;
    v.dark = true;
    v.canvas = base;
    v.laneStripe = mix(base, text, 0.05);
    v.laneHeader = mix(window, text, 0.14);
    v.laneHeaderText = text;
    v.labelFill = window;
    v.labelText = text;
    v.separator = mix(window, text, 0.3);
    v.ruler = mix(window, text, 0.06);
    v.overview = mix(window, base, 0.5);
    v.axisText = mix(text, window, 0.2);
    v.overviewVeil = withAlpha(base, 150);
    v.emptyText = mix(text, window, 0.4);
    // The highlight of a dark palette is often a deep blue: lighten it so the outline shows on slices.
    v.selection = mix(p.color(QPalette::Highlight), Qt::white, 0.35);
    v.selectionBand = withAlpha(v.selection, 60);
    v.hover = text;
    v.match = QColor(0xff, 0xd8, 0x30);
    v.flow = v.selection;
    v.chainArrow = mix(kStateOrigin, Qt::white, 0.35);
    v.markOutline = base;
    v.plotBackground = base;
    v.plotText = text;
    v.plotGrid = mix(base, text, 0.25);
    return v;
}

QColor fillFor(const QColor& lightFill, const QPalette& p) {
    return isDark(p) ? mix(p.color(QPalette::Base), lightFill, 0.28) : lightFill;
}

QColor fillForApp(const QColor& lightFill) { return fillFor(lightFill, QGuiApplication::palette()); }

QColor textFor(const QColor& c, const QPalette& p) {
    // Lightened until it reads (4.5:1, WCAG AA) on the window colour, or as far as white goes.
    const QColor bg = p.color(QPalette::Window);
    QColor out = c;
    for (double t = 0.15; contrastRatio(out, bg) < 4.5 && t <= 1.0; t += 0.15)
        out = mix(c, isDark(p) ? QColor(Qt::white) : QColor(Qt::black), t);
    return out;
}

QString toneStyle(const QString& objectName, const Tone& tone, const QPalette& p) {
    return QStringLiteral("#%1{background:%2;border:1px solid %3;border-radius:4px}")
        .arg(objectName, css(fillFor(tone.background, p)), css(tone.border));
}

QPalette darkPalette() {
    QPalette p;
    const QColor window(0x2b, 0x2d, 0x31), base(0x1f, 0x21, 0x24), text(0xe6, 0xe6, 0xe6), disabled(0x80, 0x80, 0x80);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x27, 0x29, 0x2d));
    p.setColor(QPalette::ToolTipBase, QColor(0x33, 0x35, 0x3a));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x35, 0x37, 0x3c));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Link, QColor(0x6a, 0xb0, 0xff));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xc0));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Light, QColor(0x45, 0x47, 0x4c));
    p.setColor(QPalette::Midlight, QColor(0x3a, 0x3c, 0x41));
    p.setColor(QPalette::Mid, QColor(0x30, 0x32, 0x36));
    p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
    p.setColor(QPalette::Shadow, Qt::black);
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    return p;
}

}  // namespace dlui::theme

#pragma once
// Every colour the app and its PDF report paint with, by role, in one place. Views, models and
// the report read these names instead of writing colour literals or stylesheets of their own;
// the op-state and comparison palettes (state_colors.h) are built from them too.
#include <QColor>
#include <QPalette>
#include <QString>

namespace dlui::theme {

// Brand, also in the app icon (resources/icons/dumplens.svg).
inline const QColor kNavy{0x1a, 0x2b, 0x4c};  // report titles and rules

// Op states (overflow analysis), mildest first.
inline const QColor kStateNormal{0x86, 0xa1, 0xc8};
inline const QColor kStateNearLimit{0xf2, 0xb1, 0x34};
inline const QColor kStateSaturated{0xe8, 0x59, 0x0c};
inline const QColor kStateInfNan{0xc9, 0x2a, 0x2a};
inline const QColor kStateOrigin{0x9c, 0x36, 0xb5};

// Comparison states: agreement is quiet, unmatched ops stand apart, divergence is loud.
inline const QColor kCompareAgree{0x9c, 0xc4, 0xa4};
inline const QColor kCompareNotCompared{0xcf, 0xd3, 0xda};
inline const QColor kCompareUnmatched{0x2b, 0x9a, 0xa8};
inline const QColor kCompareDiverged = kStateSaturated;
inline const QColor kCompareFirstDivergence = kStateInfNan;

// Verdict classes of a matched tensor pair (core/compare/tensor_verdict.h), from quiet to loud.
// Mid-tone hues: a swatch or a translucent row fill reads on light and dark palettes alike, with
// the palette's own text colour on top.
inline const QColor kClassIdentical{0x8a, 0x96, 0xa8};  // slate: nothing to see
inline const QColor kClassPrecision{0x3a, 0xa0, 0x5a};  // green: moved within the dtype's rounding
inline const QColor kClassAgree{0x2f, 0x8f, 0xb0};      // teal: within msprobe's tests
inline const QColor kClassDiverged{0xe0, 0x7b, 0x1a};   // orange
inline const QColor kClassNonFinite{0xd0, 0x30, 0x30};  // red: NaN/Inf/saturation in one run only
inline const QColor kClassShape{0x9c, 0x4d, 0xcc};      // violet: not comparable element by element
inline const QColor kClassMd5{0xc8, 0x9a, 0x10};        // amber: checksums only
inline const QColor kClassUnknown{0xa0, 0xa0, 0xa0};

// Interaction.
inline const QColor kSelection{0x10, 0x70, 0xe0};  // selected op, Send/Receive links
inline const QColor kFocusFrame{0x10, 0x70, 0xe0, 120};
inline const QColor kHover{0x28, 0x28, 0x28};
inline const QColor kLinkLine{0x90, 0x98, 0xa8, 150};  // matched-op lines between two timelines

// Surfaces and text of painted views.
inline const QColor kCanvas{0xfa, 0xfa, 0xfb};
inline const QColor kStripBackground{0xf3, 0xf4, 0xf7};
inline const QColor kStripText{0x60, 0x60, 0x70};
inline const QColor kPanelFill{0xf6, 0xf7, 0xf9};
inline const QColor kGridLine{0xc8, 0xcc, 0xd4};
inline const QColor kText{0x20, 0x20, 0x20};
inline const QColor kTextSecondary{0x60, 0x66, 0x70};
inline const QColor kLabelText{0x30, 0x38, 0x48};  // field labels of the report
inline const QColor kTextMuted{0x66, 0x66, 0x77};  // hints on empty pages
inline const QColor kTextError = kStateInfNan;

// Verdicts and result cells.
inline const QColor kVerdictBad{0xb0, 0x1c, 0x1c};
inline const QColor kVerdictGood{0x1d, 0x7a, 0x3a};
inline const QColor kCellBad{0xf8, 0xc8, 0xc8};  // replay: overflows in this precision
inline const QColor kCellGood{0xd0, 0xf0, 0xd0};
inline const QColor kRowEmphasis{0xfb, 0xe3, 0xe3};  // report table rows to look at first
inline const QColor kInputError{0xfd, 0xe2, 0xe2};   // a text field holding an invalid entry
inline const QColor kErrorText{0x80, 0x00, 0x00};    // error rows of the issues list

// Chain figure of the report.
inline const QColor kNodeBorder{0x50, 0x58, 0x68};
inline const QColor kOriginFill{0xf4, 0xea, 0xf8};
inline const QColor kWeightUpdate{0xb0, 0x60, 0x10};  // hops through the optimizer's weight update
inline const QColor kEdge{0x40, 0x40, 0x40};

// Two runs side by side (comparison window): run A and run B.
inline const QColor kRunA{0x1f, 0x77, 0xb4};
inline const QColor kRunB{0xe0, 0x7b, 0x00};

// Histogram limit lines and series.
inline const QColor kLimitFp16Max = kStateInfNan;
inline const QColor kLimitFp16MinNormal{0x20, 0x80, 0x40};
inline const QColor kLimitFp16Subnormal{0x60, 0x60, 0x60};
inline const QColor kLimitBf16Max{0x80, 0x40, 0xa0};
inline const QColor kSeries[] = {
    {0x1f, 0x77, 0xb4}, {0x2c, 0xa0, 0x2c}, {0x8c, 0x56, 0x4b}, {0x17, 0xbe, 0xcf}, {0x7f, 0x7f, 0x7f}};
inline const QColor kSeriesSelected{0xd6, 0x27, 0x28};

// Timeline lanes, ruler and overview.
inline const QColor kLaneHeader{0xe4, 0xe7, 0xec};
inline const QColor kLaneHeaderText{0x30, 0x30, 0x40};
inline const QColor kLaneStripe{0xf1, 0xf3, 0xf6};
inline const QColor kLaneSeparator{0xc8, 0xcc, 0xd2};
inline const QColor kRuler{0xee, 0xf0, 0xf3};
inline const QColor kOverview{0xe8, 0xea, 0xee};
inline const QColor kAxisText{0x50, 0x50, 0x60};
inline const QColor kOverviewVeil{0xff, 0xff, 0xff, 150};  // outside the visible window
inline const QColor kSelectionBand{0x10, 0x70, 0xe0, 50};

// Banner tones (background, border) of the verdict banner and the comparison summary.
struct Tone {
    QColor background, border;
};
inline const Tone kToneNeutral{{0xf3, 0xf4, 0xf6}, {0xd0, 0xd4, 0xda}};
inline const Tone kToneMuted{{0xf3, 0xf4, 0xf6}, {0x9a, 0xa1, 0xab}};
inline const Tone kToneAlarm{{0xfd, 0xea, 0xea}, {0xe0, 0x85, 0x85}};
inline const Tone kToneWarn{{0xfd, 0xf6, 0xe3}, {0xd9, 0xb4, 0x4a}};
inline const Tone kToneOk{{0xe6, 0xf6, 0xea}, {0x7b, 0xc4, 0x8f}};

// Surfaces, text and marks of the painted views (timeline, link strip, histogram), derived from a
// palette so a dark theme gets dark lanes with light text. The op-state colours stay semantic:
// they are mid-tone fills that read on light and dark, with text picked per fill (textOn).
struct ViewColors {
    QColor canvas, laneStripe, laneHeader, laneHeaderText, labelFill, labelText, separator;
    QColor ruler, overview, axisText, overviewVeil, emptyText;
    QColor selection, selectionBand, hover, match, flow, chainArrow, markOutline;
    QColor plotBackground, plotText, plotGrid;
    bool dark = false;
    static ViewColors fromPalette(const QPalette& p);
    // The light colours above (kCanvas, kLaneStripe, ...): the PDF report prints on white paper.
    static ViewColors print();
};

// A palette whose window is darker than its text.
bool isDark(const QPalette& p);
// a blended towards b by t (0..1).
QColor mix(const QColor& a, const QColor& b, double t);
// Black or white, whichever reads better on `fill` (WCAG relative luminance).
QColor textOn(const QColor& fill);
double contrastRatio(const QColor& a, const QColor& b);
// Histogram series and the run colours brightened on a dark palette (the plot follows it).
QColor forBackground(const QColor& c, const QPalette& p);
// A light fill (banner tone, table cell) as it should look on `p`: itself on a light palette,
// a dark tint of it on a dark one (light text stays readable over it).
QColor fillFor(const QColor& lightFill, const QPalette& p);
// The same for the application's palette (item models have no widget of their own).
QColor fillForApp(const QColor& lightFill);
// Text in a semantic colour (errors, verdicts) that reads on `p`'s window.
QColor textFor(const QColor& c, const QPalette& p);
// The rounded, toned frame of a banner (verdict, comparison summary) named objectName.
QString toneStyle(const QString& objectName, const Tone& tone, const QPalette& p);
// A Fusion dark palette (`dumplens --dark`, DUMPLENS_DARK=1), for users and the dark screenshots.
QPalette darkPalette();

// "#rrggbb" for the few places that need a colour inside a stylesheet or rich text.
inline QString css(const QColor& c) { return c.name(QColor::HexRgb); }
inline QString cssColor(const QColor& c) { return QStringLiteral("color:%1").arg(css(c)); }
inline QString cssBackground(const QColor& c) { return QStringLiteral("background:%1").arg(css(c)); }

}  // namespace dlui::theme

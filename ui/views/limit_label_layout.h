#pragma once
// Where the histogram's limit labels go (fp16 max, min normal, subnormal, bf16 max): each hangs
// beside its dashed line like a flag, in a row from the top, and its line runs from the x axis up
// to that row only. A label may not overlap another label, nor a line that reaches its row (the
// lines of labels in rows above it, which pass through its row), at any plot width: a solver over
// rows and sides finds the fewest rows, then tries the short texts, then leaves out the least
// important labels. Pure geometry in pixels, so it is tested without a plot.
#include <vector>

namespace dlui {

struct LimitLabelBox {
    double x = 0;  // the line's pixel x (or the right edge for a note without line)
    bool hasLine = true;
    bool preferLeft = false;  // the side of the line the text prefers
    double width = 0;         // full text, padding included
    double shortWidth = 0;    // the short text
};

struct LimitLabelPlace {
    int row = -1;       // -1: left out
    bool left = false;  // text ends at the line (true) or starts at it
    bool shortText = false;
    double x0 = 0, x1 = 0;  // the text's pixel extent
};

// Labels in priority order (the first is left out last); at most `maxRows` rows, in [0, plotWidth].
std::vector<LimitLabelPlace> placeLimitLabels(const std::vector<LimitLabelBox>& boxes, double plotWidth, int maxRows);

// The space kept between two labels of a row, and between a label and a line crossing its row.
inline constexpr double kLabelGap = 6;
inline constexpr double kLineClearance = 3;

}  // namespace dlui

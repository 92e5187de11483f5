#include "ui/views/limit_label_layout.h"

#include <algorithm>
#include <numeric>

namespace dlui {

namespace {

struct Solver {
    const std::vector<LimitLabelBox>& boxes;
    std::vector<int> order;  // the labels being placed, left to right by line
    std::vector<LimitLabelPlace> place;
    double plotWidth;
    int rows;
    bool shortText;

    double widthOf(int i) const { return shortText ? boxes[i].shortWidth : boxes[i].width; }

    // A label placed at `p` (for box i) against one already placed at `q` (box j).
    bool compatible(int i, const LimitLabelPlace& p, int j, const LimitLabelPlace& q) const {
        const auto lineCrosses = [](const LimitLabelBox& b, const LimitLabelPlace& text) {
            return b.hasLine && b.x > text.x0 - kLineClearance && b.x < text.x1 + kLineClearance;
        };
        if (p.row == q.row) return p.x1 + kLabelGap <= q.x0 || q.x1 + kLabelGap <= p.x0;
        // The upper label's line passes through the lower label's row.
        if (q.row < p.row) return !lineCrosses(boxes[j], p);
        return !lineCrosses(boxes[i], q);
    }

    bool solve(std::size_t k) {
        if (k == order.size()) return true;
        const int i = order[k];
        const LimitLabelBox& b = boxes[i];
        const double w = widthOf(i);
        for (int row = 0; row < rows; ++row)
            for (const bool left : {b.preferLeft, !b.preferLeft}) {
                LimitLabelPlace p{row, left, shortText, left ? b.x - w : b.x, left ? b.x : b.x + w};
                if (p.x0 < 0 || p.x1 > plotWidth) continue;
                bool ok = true;
                for (std::size_t m = 0; m < k && ok; ++m) ok = compatible(i, p, order[m], place[std::size_t(order[m])]);
                if (!ok) continue;
                place[std::size_t(i)] = p;
                if (solve(k + 1)) return true;
            }
        place[std::size_t(i)] = {};
        return false;
    }
};

}  // namespace

std::vector<LimitLabelPlace> placeLimitLabels(const std::vector<LimitLabelBox>& boxes, double plotWidth, int maxRows) {
    const int n = static_cast<int>(boxes.size());
    for (const bool shortText : {false, true})
        // Full texts with every label; then short texts, leaving out the last labels one by one.
        for (int shown = n; shown >= (shortText ? 1 : n); --shown)
            for (int rows = 1; rows <= std::min(maxRows, shown); ++rows) {
                Solver s{boxes, {}, std::vector<LimitLabelPlace>(boxes.size()), plotWidth, rows, shortText};
                s.order.resize(std::size_t(shown));
                std::iota(s.order.begin(), s.order.end(), 0);
                std::sort(s.order.begin(), s.order.end(), [&](int a, int b) { return boxes[a].x < boxes[b].x; });
                if (s.solve(0)) return s.place;
            }
    return std::vector<LimitLabelPlace>(boxes.size());
}

}  // namespace dlui

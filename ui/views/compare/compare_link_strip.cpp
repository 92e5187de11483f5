#include "ui/views/compare/compare_link_strip.h"

#include <QPainter>
#include <algorithm>

#include "core/timeline/timeline_data.h"
#include "ui/models/compare_session.h"
#include "ui/style/state_colors.h"
#include "ui/style/theme.h"
#include "ui/views/timeline/timeline_painter.h"
#include "ui/views/timeline/timeline_widget.h"

namespace dlui {

namespace {
constexpr double kMinGap = 6;  // pixels between thinned links
}

CompareLinkStrip::CompareLinkStrip(CompareSession* session, TimelineWidget* a, TimelineWidget* b, QWidget* parent)
    : QWidget(parent), m_session(session), m_a(a), m_b(b) {
    setFixedHeight(34);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setToolTip(tr("Each line joins an op of run A (above) to its match in run B (below)"));
}

bool CompareLinkStrip::link(quint32 opA, quint32 opB, double& xa, double& xb) const {
    if (opA == dl::kNoIndex || opB == dl::kNoIndex) return false;
    const QRectF ra = m_a->opRect(opA), rb = m_b->opRect(opB);
    if (ra.isEmpty() || rb.isEmpty()) return false;
    // Siblings, not parents: go through global coordinates.
    xa = mapFromGlobal(m_a->mapToGlobal(QPointF(ra.center().x(), 0))).x();
    xb = mapFromGlobal(m_b->mapToGlobal(QPointF(rb.center().x(), 0))).x();
    const double left = TimelinePainter::kLabelWidth, right = width();
    return !((xa < left && xb < left) || (xa > right && xb > right));
}

void CompareLinkStrip::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const theme::ViewColors colors = theme::ViewColors::fromPalette(palette());
    p.fillRect(rect(), colors.ruler);
    p.setPen(colors.axisText);
    p.drawText(QRect(4, 0, TimelinePainter::kLabelWidth - 8, height()), Qt::AlignVCenter | Qt::AlignLeft, tr("A ↕ B"));
    m_lastDrawn = 0;
    const dl::CompareOverlay* ov = m_session->overlay();
    const dl::TimelineData* da = m_a->timeline();
    if (!ov || !da) return;
    p.setClipRect(QRect(TimelinePainter::kLabelWidth, 0, width() - TimelinePainter::kLabelWidth, height()));
    p.setRenderHint(QPainter::Antialiasing, true);
    const auto draw = [&](quint32 opA, const QPen& pen) {
        double xa = 0, xb = 0;
        if (!link(opA, ov->partnerA[opA], xa, xb)) return false;
        p.setPen(pen);
        p.drawLine(QPointF(xa, 0), QPointF(xb, height()));
        ++m_lastDrawn;
        return true;
    };
    // Visible items of every lane, thinned per lane; the selected op's lane shows all its links.
    const dl::TimelineViewport& vp = m_a->viewport();
    const dl::TimeAxis axis = TimelinePainter::axisFor(m_a->rect(), vp);
    std::size_t selLane = SIZE_MAX, selItem = 0;
    if (m_session->currentOpA() != dl::kNoIndex) da->locate(m_session->currentOpA(), selLane, selItem);
    std::vector<std::pair<double, quint32>> diverged;  // (x in A, op)
    for (std::size_t l = 0; l < da->lanes.size(); ++l) {
        const auto& items = da->lanes[l].items;
        const auto rel = [&](std::int64_t t) { return double(t - vp.origin()); };
        auto it = std::lower_bound(items.begin(), items.end(), vp.from() - double(da->lanes[l].maxDuration),
                                   [&](const dl::TimelineItem& x, double v) { return rel(x.start) < v; });
        double lastX = -1e9;
        for (; it != items.end() && rel(it->start) <= vp.to(); ++it) {
            const dl::CompareState s = ov->stateA(it->op);  // items may carry overflow states
            const double x = axis.xOf(it->start);
            if (s >= dl::CompareState::Diverged) {
                diverged.emplace_back(x, it->op);
                continue;
            }
            if (l != selLane || s == dl::CompareState::Unmatched) continue;
            if (x - lastX < kMinGap) continue;
            if (draw(it->op, QPen(colors.dark ? theme::mix(theme::kLinkLine, Qt::white, 0.3) : theme::kLinkLine, 1)))
                lastX = x;
        }
    }
    // Diverged pairs over the agreeing ones, thinned globally by their x in A.
    double lastX = -1e9;
    std::sort(diverged.begin(), diverged.end());
    for (const auto& [x, op] : diverged) {
        if (x - lastX < kMinGap / 2) continue;
        if (draw(op,
                 QPen(compareColor(ov->stateA(op)), ov->stateA(op) == dl::CompareState::FirstDivergence ? 2.2 : 1.4)))
            lastX = x;
    }
    if (m_session->currentOpA() != dl::kNoIndex) draw(m_session->currentOpA(), QPen(colors.selection, 2.6));
}

}  // namespace dlui

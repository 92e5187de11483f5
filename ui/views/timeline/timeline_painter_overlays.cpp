// The order of a timeline paint (paint()) and what it draws around and over the lanes: the ruler,
// the overview, the Send/Receive arrows and data flows, the origins, the area and op markers.
#include "ui/views/timeline/timeline_painter.h"

#include <QObject>
#include <QPainterPath>
#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/style/state_colors.h"

namespace dlui {

namespace {

constexpr quint32 kNone = 0xffffffffu;

}  // namespace

void TimelinePainter::paint(QPainter& p, const QRect& r, const dl::TimelineViewport& vp, const TimelinePaintState& st) {
    m_lastDrawn = 0;
    m_arrowsDrawn = 0;
    m_labels.clear();
    if (m_paletteFor != m_palette) {
        m_fills = *m_palette;
        for (int s = 0; s < dl::kOpStateCount; ++s) m_fills.colors[std::size_t(s)] = stateColor(dl::OpState(s));
        m_paletteFor = m_palette;
    }
    p.fillRect(r, m_colors.canvas);
    if (!m_data || m_data->lanes.empty()) {
        p.setPen(m_colors.emptyText);
        p.drawText(r, Qt::AlignCenter, QObject::tr("No ops to show"));
        return;
    }
    const dl::TimeAxis axis = axisFor(r, vp);
    paintOverview(p, r, vp);
    paintRuler(p, r, axis, st);
    p.save();
    p.setClipRect(QRect(r.left(), lanesRect(r).top(), r.width(), lanesRect(r).height()));
    paintHeaders(p, r, axis, st);
    paintLanes(p, r, axis, st);
    paintLabels(p, r, st.scrollY);
    p.setClipRect(lanesRect(r));
    paintArrows(p, r, axis, st);
    paintFlows(p, r, axis, st);
    paintSliceLabels(p);
    paintOrigins(p, r, axis, st.scrollY);
    paintMark(p, r, axis, st);
    if (st.hoveredOp != kNone) paintMarker(p, r, axis, st.hoveredOp, st.scrollY, m_colors.hover);
    if (st.selectedOp != kNone) paintMarker(p, r, axis, st.selectedOp, st.scrollY, m_colors.selection);
    if (st.rangeActive) {
        const double a = axis.toX(std::min(st.rangeFrom, st.rangeTo)), b = axis.toX(std::max(st.rangeFrom, st.rangeTo));
        const QRectF band(a, lanesRect(r).top(), b - a, lanesRect(r).height());
        p.fillRect(band, m_colors.selectionBand);
        p.setPen(m_colors.selection);
        p.drawRect(band);
    }
    paintArea(p, r, axis, st);
    p.restore();
}

void TimelinePainter::paintRuler(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st) {
    const QRect rr = rulerRect(r);
    p.fillRect(QRect(r.left(), rr.top(), r.width(), rr.height()), m_colors.ruler);
    if (st.areaActive) {  // the area's time span on the ruler, where a drag on it makes one
        const double a = axis.toX(std::min(st.areaFrom, st.areaTo)), b = axis.toX(std::max(st.areaFrom, st.areaTo));
        p.fillRect(QRectF(a, rr.top(), std::max(1.0, b - a), rr.height()), m_colors.selectionBand);
    }
    // Offsets from the view's start, or from the user's mark, in one unit and precision
    // ("+200 µs", "+400 µs"), at least 90 px apart or wider when the labels are; whole steps in an
    // execution order. The left cell says what they count from.
    const QFontMetrics fm = p.fontMetrics();
    const double tpp = axis.timePerPixel();
    const bool exec = m_data->base == dl::TimeBase::ExecutionOrder;
    const double ref = st.markActive ? st.markAt : axis.from();
    dl::OffsetRuler ru = dl::offsetRuler(axis.from(), axis.to(), ref, tpp * 90, exec);
    const auto labelOf = [&](int i) { return QString::fromStdString(ru.label(i)); };
    if (ru.ticks.count > 0) {
        const int widest =
            std::max(fm.horizontalAdvance(labelOf(0)), fm.horizontalAdvance(labelOf(ru.ticks.count - 1)));
        if (widest + 12 > ru.ticks.step / tpp)
            ru = dl::offsetRuler(axis.from(), axis.to(), ref, tpp * (widest + 12), exec);
    }
    m_rulerLabels.clear();
    p.setPen(m_colors.axisText);
    int labelEnd = std::numeric_limits<int>::min();  // right end of the last label drawn
    for (int i = 0; i < ru.ticks.count; ++i) {
        const double t = ref + ru.ticks.at(i);
        // A tick at the very end maps to one past the ruler's last pixel: drawn on that pixel.
        const int x = std::min(static_cast<int>(std::lround(axis.toX(t))), rr.right());
        p.drawLine(x, rr.bottom() - 6, x, rr.bottom());
        const QString label = labelOf(i);
        const int w = fm.horizontalAdvance(label) + 4;
        // Right of its tick; left of it when it would run past the ruler's end (the PDF's excerpt
        // has no margin there: "1 µs" ran off the page), and left out when that meets the last one.
        int left = x + 3;
        if (left + w > rr.right()) left = x - 3 - w;
        if (left < labelEnd + 6 || left < rr.left()) continue;
        p.drawText(QRect(left, rr.top(), w, rr.height() - 4),
                   Qt::AlignVCenter | (left > x ? Qt::AlignLeft : Qt::AlignRight), label);
        m_rulerLabels << label;
        labelEnd = left + w;
    }
    // What the offsets count from: the view's start or the mark, as a time of the run.
    const double step = ru.ticks.count ? ru.ticks.step : tpp * 90;
    const QString at = exec
        ? QStringLiteral("#%1").arg(std::llround(ref))
        : QString::fromStdString(dl::formatTime(ref, dl::timeFormatFor(ref, std::min(step, std::max(tpp, 1e-3)))));
    m_rulerRef = st.markActive ? QObject::tr("mark %1").arg(at) : at;
    const QRect cell(r.left() + 4, rr.top(), kLabelWidth - 8, rr.height());
    p.drawText(cell, Qt::AlignVCenter, fm.elidedText(m_rulerRef, Qt::ElideRight, cell.width()));
    if (st.markActive) {  // the mark's place on the ruler
        const double x = axis.toX(st.markAt);
        if (x >= rr.left() && x <= rr.right()) {
            QPolygonF tri;
            tri << QPointF(x, rr.bottom()) << QPointF(x - 5, rr.bottom() - 7) << QPointF(x + 5, rr.bottom() - 7);
            p.setPen(Qt::NoPen);
            p.setBrush(m_colors.selection);
            p.drawPolygon(tri);
        }
    }
}

void TimelinePainter::paintOverview(QPainter& p, const QRect& r, const dl::TimelineViewport& vp) {
    const QRect o = overviewRect(r);
    p.fillRect(QRect(r.left(), o.top(), r.width(), o.height()), m_colors.overview);
    p.setPen(m_colors.axisText);
    p.drawText(QRect(r.left() + 4, o.top(), kLabelWidth - 8, o.height()), Qt::AlignVCenter, QObject::tr("overview"));
    const dl::TimeAxis full(vp.fullFrom(), vp.fullTo(), o.left(), o.width(), vp.origin());
    const int n = static_cast<int>(m_data->lanes.size());
    const double h = std::max(1.0, static_cast<double>(o.height() - 4) / n);
    for (int i = 0; i < n; ++i)
        paintLane(p, static_cast<std::size_t>(i), full, o.top() + 2 + static_cast<int>(i * h),
                  std::max(1, static_cast<int>(h) - (h > 3)), false);
    const double a = full.toX(vp.from()), b = full.toX(vp.to());
    p.fillRect(QRectF(o.left(), o.top(), a - o.left(), o.height()), m_colors.overviewVeil);
    p.fillRect(QRectF(b, o.top(), o.right() - b, o.height()), m_colors.overviewVeil);
    p.setPen(QPen(m_colors.selection, 1.5));
    p.drawRect(QRectF(a, o.top() + 1, std::max(2.0, b - a), o.height() - 2));
}

void TimelinePainter::paintArrow(QPainter& p, QPointF s, QPointF e, const QPen& pen) {
    p.setPen(pen);
    QPainterPath path(s);
    const double dx = std::max(20.0, std::abs(e.x() - s.x()) / 2);
    path.cubicTo(s + QPointF(dx, 0), e - QPointF(dx, 0), e);
    p.setBrush(Qt::NoBrush);
    p.drawPath(path);
    // Arrowhead pointing right into the receiving op.
    QPolygonF head;
    head << e << e + QPointF(-8, -4) << e + QPointF(-8, 4);
    p.setPen(Qt::NoPen);
    p.setBrush(pen.color());
    p.drawPolygon(head);
}

void TimelinePainter::paintArrows(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st) {
    // Only the chain hops of the selected op, as Perfetto draws only the selection's flows: all of
    // them at once buried the origin under ~20 curves on a pipeline dump.
    if (st.selectedOp == kNone) return;
    const int scrollY = st.scrollY;
    p.setRenderHint(QPainter::Antialiasing, true);
    for (const auto& a : m_data->arrows) {
        if (a.fromOp != st.selectedOp && a.toOp != st.selectedOp) continue;
        std::size_t la = 0, ia = 0, lb = 0, ib = 0;
        if (!m_data->locate(a.fromOp, la, ia) || !m_data->locate(a.toOp, lb, ib)) continue;
        const auto& x = m_data->lanes[la].items[ia];
        const auto& y = m_data->lanes[lb].items[ib];
        const QPointF s(axis.xOf(x.end), laneCenterY(r, static_cast<int>(la), scrollY));
        const QPointF e(axis.xOf(y.start), laneCenterY(r, static_cast<int>(lb), scrollY));
        paintArrow(p, s, e,
                   QPen(m_colors.chainArrow, 1.6, a.via == dl::ChainVia::WeightUpdate ? Qt::DashLine : Qt::SolidLine));
        ++m_arrowsDrawn;
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelinePainter::paintFlows(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st) {
    if (st.selectedOp == kNone) return;
    const std::vector<dl::TimelineFlow> flows = m_data->flowsFor(st.selectedOp);
    if (flows.empty()) return;
    p.setRenderHint(QPainter::Antialiasing, true);
    for (const dl::TimelineFlow& f : flows) {
        std::size_t la = 0, ia = 0, lb = 0, ib = 0;
        if (!m_data->locate(f.fromOp, la, ia) || !m_data->locate(f.toOp, lb, ib)) continue;
        const auto& x = m_data->lanes[la].items[ia];
        const auto& y = m_data->lanes[lb].items[ib];
        const double ya = laneCenterY(r, static_cast<int>(la), st.scrollY),
                     yb = laneCenterY(r, static_cast<int>(lb), st.scrollY);
        if (f.collective) {
            // Members of one collective: a dotted line between the two (no direction).
            p.setPen(QPen(m_colors.flow, 1.4, Qt::DotLine));
            p.drawLine(QPointF((axis.xOf(x.start) + axis.xOf(x.end)) / 2, ya),
                       QPointF((axis.xOf(y.start) + axis.xOf(y.end)) / 2, yb));
            paintMarker(p, r, axis, f.toOp, st.scrollY, m_colors.flow);
        } else {
            paintArrow(p, QPointF(axis.xOf(x.end), ya), QPointF(axis.xOf(y.start), yb), QPen(m_colors.flow, 1.6));
            paintMarker(p, r, axis, f.fromOp == st.selectedOp ? f.toOp : f.fromOp, st.scrollY, m_colors.flow);
        }
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelinePainter::paintOrigins(QPainter& p, const QRect& r, const dl::TimeAxis& axis, int scrollY) {
    p.setRenderHint(QPainter::Antialiasing, true);
    for (quint32 op : m_originOps) {
        std::size_t lane = 0, item = 0;
        if (!m_data->locate(op, lane, item)) continue;
        const auto& it = m_data->lanes[lane].items[item];
        const double x = std::clamp((axis.xOf(it.start) + axis.xOf(it.end)) / 2, -1e6, 1e6);
        const double top = laneCenterY(r, static_cast<int>(lane), scrollY) - kLaneHeight / 2.0;
        QPolygonF tri;
        tri << QPointF(x, top + 7) << QPointF(x - 6, top - 3) << QPointF(x + 6, top - 3);
        p.setPen(QPen(m_colors.markOutline, 1));
        p.setBrush(m_fills.color(dl::OpState::Origin));
        p.drawPolygon(tri);
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelinePainter::paintArea(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st) {
    if (!st.areaActive || m_laneY.empty()) return;
    const int la = std::clamp(std::min(st.areaLaneFrom, st.areaLaneTo), 0, static_cast<int>(m_laneY.size()) - 1);
    const int lb = std::clamp(std::max(st.areaLaneFrom, st.areaLaneTo), 0, static_cast<int>(m_laneY.size()) - 1);
    const double a = axis.toX(std::min(st.areaFrom, st.areaTo)), b = axis.toX(std::max(st.areaFrom, st.areaTo));
    const double top =
        laneCenterY(r, la, st.scrollY) - (m_laneShown[std::size_t(la)] ? kLaneHeight : kHeaderHeight) / 2.0;
    const double bottom =
        laneCenterY(r, lb, st.scrollY) + (m_laneShown[std::size_t(lb)] ? kLaneHeight : kHeaderHeight) / 2.0;
    const QRectF band(std::clamp(a, -1e6, 1e6), top, std::clamp(b - a, 1.0, 2e6), bottom - top);
    p.fillRect(band, m_colors.selectionBand);
    p.setPen(QPen(m_colors.selection, 1, Qt::DashLine));
    p.setBrush(Qt::NoBrush);
    p.drawRect(band);
}

void TimelinePainter::paintMarker(QPainter& p, const QRect& r, const dl::TimeAxis& axis, quint32 op, int scrollY,
                                  QColor c) {
    std::size_t lane = 0, item = 0;
    if (!m_data->locate(op, lane, item)) return;
    const auto& it = m_data->lanes[lane].items[item];
    const bool shown = m_laneShown[lane];
    const int h = shown ? kLaneHeight : kHeaderHeight;
    const int top = laneCenterY(r, static_cast<int>(lane), scrollY) - h / 2;
    const double x0 = std::clamp(axis.xOf(it.start), -1e6, 1e6),
                 x1 = std::clamp(std::max(x0 + 3, axis.xOf(it.end)), -1e6, 1e6);
    p.setPen(QPen(c, 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(x0 - 1, top + 1, x1 - x0 + 2, h - 2));
}

}  // namespace dlui

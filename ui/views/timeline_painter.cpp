#include "ui/views/timeline_painter.h"

#include <QObject>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

#include "ui/util/state_colors.h"

namespace dlui {

namespace {

// Accumulates adjacent boxes of one state into a single fill (a zoomed-out lane becomes a few
// dozen runs instead of thousands of rectangles).
class RunFiller {
public:
    RunFiller(QPainter& p, const StatePalette& palette, int top, int height)
        : m_p(p), m_palette(palette), m_top(top), m_h(height) {}
    ~RunFiller() { flush(); }
    void add(double x0, double x1, dl::OpState s) {
        // Deep zoom puts long ops millions of pixels off-screen: keep the int conversion defined.
        x0 = std::clamp(x0, -1e7, 1e7);
        x1 = std::clamp(x1, -1e7, 1e7);
        const int a = static_cast<int>(std::floor(x0));
        const int b = std::max(a + 1, static_cast<int>(std::ceil(x1)));
        if (m_open && s == m_state && a <= m_b) { m_b = std::max(m_b, b); return; }
        if (m_open && a < m_b && s < m_state) {  // hidden under a more severe run already drawn
            if (b <= m_b) return;
        }
        flush();
        m_open = true;
        m_a = a;
        m_b = b;
        m_state = s;
    }
    void flush() {
        if (!m_open) return;
        const int w = m_b - m_a;
        // Leave a one-pixel gap between wide boxes so neighbouring ops stay distinguishable.
        m_p.fillRect(QRect(m_a, m_top, w > 3 ? w - 1 : w, m_h), m_palette.color(m_state));
        ++drawn;
        m_open = false;
    }
    std::size_t drawn = 0;

private:
    QPainter& m_p;
    const StatePalette& m_palette;
    int m_top, m_h, m_a = 0, m_b = 0;
    bool m_open = false;
    dl::OpState m_state = dl::OpState::Normal;
};

}  // namespace

void TimelinePainter::setData(std::shared_ptr<const dl::TimelineData> data, const dl::DumpIndex* index) {
    m_data = std::move(data);
    m_index = index;
    m_laneY.clear();
    m_headers.clear();
    m_originOps.clear();
    int y = 0;
    int prevStage = -2;
    if (m_data)
        for (const auto& lane : m_data->lanes) {
            if (lane.stage != prevStage && !m_compact) {
                m_headers.emplace_back(y, lane.stage);
                y += kHeaderHeight;
                prevStage = lane.stage;
            }
            m_laneY.push_back(y);
            y += kLaneHeight;
            for (const auto& it : lane.items)
                if (it.state == dl::OpState::Origin) m_originOps.push_back(it.op);
        }
    m_contentHeight = y;
}

int TimelinePainter::laneAt(const QRect& r, int y, int scrollY) const {
    const int cy = y - lanesRect(r).top() + scrollY;
    auto it = std::upper_bound(m_laneY.begin(), m_laneY.end(), cy);
    if (it == m_laneY.begin()) return -1;
    const int lane = static_cast<int>(it - m_laneY.begin()) - 1;
    return cy < m_laneY[lane] + kLaneHeight ? lane : -1;
}

int TimelinePainter::laneCenterY(const QRect& r, int lane, int scrollY) const {
    return lanesRect(r).top() - scrollY + m_laneY[lane] + kLaneHeight / 2;
}

QString TimelinePainter::timeLabel(double rel, double step) const {
    if (!m_data) return {};
    if (m_data->base == dl::TimeBase::ExecutionOrder) return QStringLiteral("#%1").arg(std::llround(rel));
    return QString::fromStdString(dl::formatTimeOffset(rel, step));
}

void TimelinePainter::paint(QPainter& p, const QRect& r, const dl::TimelineViewport& vp, const TimelinePaintState& st) {
    m_lastDrawn = 0;
    p.fillRect(r, QColor(0xfa, 0xfa, 0xfb));
    if (!m_data || m_data->lanes.empty()) {
        p.setPen(Qt::darkGray);
        p.drawText(r, Qt::AlignCenter, QObject::tr("No ops to show"));
        return;
    }
    const dl::TimeAxis axis = axisFor(r, vp);
    paintOverview(p, r, vp);
    paintRuler(p, r, axis);
    p.save();
    p.setClipRect(QRect(r.left(), lanesRect(r).top(), r.width(), lanesRect(r).height()));
    paintLanes(p, r, axis, st);
    paintLabels(p, r, st.scrollY);
    p.setClipRect(lanesRect(r));
    paintArrows(p, r, axis, st.scrollY);
    paintOrigins(p, r, axis, st.scrollY);
    if (st.hoveredOp != 0xffffffffu) paintMarker(p, r, axis, st.hoveredOp, st.scrollY, QColor(40, 40, 40), true);
    if (st.selectedOp != 0xffffffffu) paintMarker(p, r, axis, st.selectedOp, st.scrollY, QColor(0x10, 0x70, 0xe0), true);
    if (st.rangeActive) {
        const double a = axis.toX(std::min(st.rangeFrom, st.rangeTo)), b = axis.toX(std::max(st.rangeFrom, st.rangeTo));
        const QRectF band(a, lanesRect(r).top(), b - a, lanesRect(r).height());
        p.fillRect(band, QColor(0x10, 0x70, 0xe0, 50));
        p.setPen(QColor(0x10, 0x70, 0xe0));
        p.drawRect(band);
    }
    p.restore();
}

void TimelinePainter::paintLanes(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st) {
    const QRect lr = lanesRect(r);
    // Every header in the bold of the painter's own font (the widget's, or the report's), restored
    // after: a default QFont for all but the first set them in two sizes in the PDF.
    const QFont base = p.font();
    QFont bold = base;
    bold.setBold(true);
    p.setFont(bold);
    for (const auto& [y, stage] : m_headers) {
        const int top = lr.top() + y - st.scrollY;
        if (top > lr.bottom() || top + kHeaderHeight < lr.top()) continue;
        p.fillRect(QRect(r.left(), top, r.width(), kHeaderHeight), QColor(0xe4, 0xe7, 0xec));
        p.setPen(QColor(0x30, 0x30, 0x40));
        p.drawText(QRect(r.left() + 6, top, 300, kHeaderHeight), Qt::AlignVCenter,
                   stage < 0 ? QObject::tr("Stage unknown") : QObject::tr("Pipeline stage %1").arg(stage));
    }
    p.setFont(base);
    for (std::size_t i = 0; i < m_data->lanes.size(); ++i) {
        const int top = lr.top() + m_laneY[i] - st.scrollY;
        if (top > lr.bottom() || top + kLaneHeight < lr.top()) continue;
        if (i % 2) p.fillRect(QRect(lr.left(), top, lr.width(), kLaneHeight), QColor(0xf1, 0xf3, 0xf6));
        paintLane(p, m_data->lanes[i], axis, top + 3, kLaneHeight - 6, true);
    }
}

void TimelinePainter::paintLane(QPainter& p, const dl::TimelineLane& lane, const dl::TimeAxis& axis, int top,
                                int height, bool labels) {
    const double from = axis.from(), to = axis.to();
    const auto rel = [&axis](std::int64_t t) { return static_cast<double>(t - axis.origin()); };
    const int level = lane.lod.levelFor(axis.timePerPixel());
    RunFiller runs(p, *m_palette, top, height);
    if (level >= 0) {
        m_scratch.clear();
        lane.lod.queryRelative(level, from, to, m_scratch);
        for (const dl::LodBucket& b : m_scratch)
            if (rel(b.end) >= from && rel(b.start) <= to) runs.add(axis.xOf(b.start), axis.xOf(b.end), b.worst);
        runs.flush();
        m_lastDrawn += m_scratch.size();
        return;
    }
    // Zoomed in: draw the ops themselves, with names where they fit.
    const double lo = from - static_cast<double>(lane.maxDuration);
    auto it = std::lower_bound(lane.items.begin(), lane.items.end(), lo,
                               [&](const dl::TimelineItem& x, double v) { return rel(x.start) < v; });
    std::vector<std::pair<QRectF, quint32>> named;
    for (; it != lane.items.end() && rel(it->start) <= to; ++it) {
        if (rel(it->end) < from) continue;
        const double x0 = axis.xOf(it->start), x1 = axis.xOf(it->end);
        runs.add(x0, x1, it->state);
        runs.flush();  // raw mode: every op its own box
        ++m_lastDrawn;
        if (labels && m_index && x1 - x0 > 40) named.emplace_back(QRectF(x0 + 2, top, x1 - x0 - 4, height), it->op);
    }
    runs.flush();
    p.setPen(Qt::black);
    for (const auto& [rect, op] : named)
        p.drawText(rect, Qt::AlignVCenter | Qt::AlignLeft,
                   p.fontMetrics().elidedText(QString::fromStdString(m_index->strings.str(m_index->ops[op].type)),
                                              Qt::ElideRight, static_cast<int>(rect.width())));
}

void TimelinePainter::paintLabels(QPainter& p, const QRect& r, int scrollY) {
    const QRect lr = lanesRect(r);
    for (std::size_t i = 0; i < m_data->lanes.size(); ++i) {
        const auto& lane = m_data->lanes[i];
        const int top = lr.top() + m_laneY[i] - scrollY;
        if (top > lr.bottom() || top + kLaneHeight < lr.top()) continue;
        p.fillRect(QRect(r.left(), top, kLabelWidth, kLaneHeight), QColor(0xf6, 0xf7, 0xf9));
        p.setPen(QColor(0x20, 0x20, 0x20));
        QString text = QObject::tr("rank %1").arg(lane.rank);
        if (lane.stream) text += QObject::tr(" · s%1").arg(*lane.stream);
        if (m_compact && lane.stage >= 0) text += QObject::tr(" · st %1").arg(lane.stage);
        p.drawText(QRect(r.left() + 12, top, kLabelWidth - 14, kLaneHeight), Qt::AlignVCenter, text);
    }
    // The label column's edge beside the lanes only: a header's text runs across it.
    p.setPen(QColor(0xc8, 0xcc, 0xd2));
    const int x = r.left() + kLabelWidth - 1;
    for (std::size_t i = 0; i < m_data->lanes.size(); ++i) {
        const int top = lr.top() + m_laneY[i] - scrollY;
        if (top > lr.bottom() || top + kLaneHeight < lr.top()) continue;
        p.drawLine(x, top, x, top + kLaneHeight - 1);
    }
}

void TimelinePainter::paintRuler(QPainter& p, const QRect& r, const dl::TimeAxis& axis) {
    const QRect rr = rulerRect(r);
    p.fillRect(QRect(r.left(), rr.top(), r.width(), rr.height()), QColor(0xee, 0xf0, 0xf3));
    // Ticks relative to the timeline's origin, at least 90 px apart, or wider when the labels are.
    const QFontMetrics fm = p.fontMetrics();
    const double tpp = axis.timePerPixel();
    dl::RulerTicks ticks = dl::rulerTicks(axis.from(), axis.to(), tpp * 90);
    if (ticks.count > 0) {
        const int widest = std::max(fm.horizontalAdvance(timeLabel(ticks.at(0), ticks.step)),
                                    fm.horizontalAdvance(timeLabel(ticks.at(ticks.count - 1), ticks.step)));
        if (widest + 12 > ticks.step / tpp) ticks = dl::rulerTicks(axis.from(), axis.to(), tpp * (widest + 12));
    }
    p.setPen(QColor(0x50, 0x50, 0x60));
    for (int i = 0; i < ticks.count; ++i) {
        const double t = ticks.at(i);
        const int x = static_cast<int>(std::lround(axis.toX(t)));
        p.drawLine(x, rr.bottom() - 6, x, rr.bottom());
        const QString label = timeLabel(t, ticks.step);
        p.drawText(QRect(x + 3, rr.top(), fm.horizontalAdvance(label) + 4, rr.height() - 4), Qt::AlignVCenter | Qt::AlignLeft, label);
    }
    p.drawText(QRect(r.left() + 4, rr.top(), kLabelWidth - 8, rr.height()), Qt::AlignVCenter,
               m_data->base == dl::TimeBase::Timestamps ? QObject::tr("time") : QObject::tr("exec order"));
}

void TimelinePainter::paintOverview(QPainter& p, const QRect& r, const dl::TimelineViewport& vp) {
    const QRect o = overviewRect(r);
    p.fillRect(QRect(r.left(), o.top(), r.width(), o.height()), QColor(0xe8, 0xea, 0xee));
    p.setPen(QColor(0x50, 0x50, 0x60));
    p.drawText(QRect(r.left() + 4, o.top(), kLabelWidth - 8, o.height()), Qt::AlignVCenter, QObject::tr("overview"));
    const dl::TimeAxis full(vp.fullFrom(), vp.fullTo(), o.left(), o.width(), vp.origin());
    const int n = static_cast<int>(m_data->lanes.size());
    const double h = std::max(1.0, static_cast<double>(o.height() - 4) / n);
    for (int i = 0; i < n; ++i)
        paintLane(p, m_data->lanes[i], full, o.top() + 2 + static_cast<int>(i * h), std::max(1, static_cast<int>(h) - (h > 3)), false);
    const double a = full.toX(vp.from()), b = full.toX(vp.to());
    p.fillRect(QRectF(o.left(), o.top(), a - o.left(), o.height()), QColor(255, 255, 255, 150));
    p.fillRect(QRectF(b, o.top(), o.right() - b, o.height()), QColor(255, 255, 255, 150));
    p.setPen(QPen(QColor(0x10, 0x70, 0xe0), 1.5));
    p.drawRect(QRectF(a, o.top() + 1, std::max(2.0, b - a), o.height() - 2));
}

void TimelinePainter::paintArrows(QPainter& p, const QRect& r, const dl::TimeAxis& axis, int scrollY) {
    p.setRenderHint(QPainter::Antialiasing, true);
    const QColor c(0x9c, 0x36, 0xb5);
    for (const auto& a : m_data->arrows) {
        std::size_t la = 0, ia = 0, lb = 0, ib = 0;
        if (!m_data->locate(a.fromOp, la, ia) || !m_data->locate(a.toOp, lb, ib)) continue;
        const auto& x = m_data->lanes[la].items[ia];
        const auto& y = m_data->lanes[lb].items[ib];
        const QPointF s(axis.xOf(x.end), laneCenterY(r, static_cast<int>(la), scrollY));
        const QPointF e(axis.xOf(y.start), laneCenterY(r, static_cast<int>(lb), scrollY));
        p.setPen(QPen(c, 1.6, a.via == dl::ChainVia::WeightUpdate ? Qt::DashLine : Qt::SolidLine));
        QPainterPath path(s);
        const double dx = std::max(20.0, std::abs(e.x() - s.x()) / 2);
        path.cubicTo(s + QPointF(dx, 0), e - QPointF(dx, 0), e);
        p.setBrush(Qt::NoBrush);
        p.drawPath(path);
        // Arrowhead pointing right into the receiving op.
        QPolygonF head;
        head << e << e + QPointF(-8, -4) << e + QPointF(-8, 4);
        p.setBrush(c);
        p.drawPolygon(head);
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelinePainter::paintOrigins(QPainter& p, const QRect& r, const dl::TimeAxis& axis, int scrollY) {
    p.setRenderHint(QPainter::Antialiasing, true);
    for (quint32 op : m_originOps) {
        std::size_t lane = 0, item = 0;
        if (!m_data->locate(op, lane, item)) continue;
        const auto& it = m_data->lanes[lane].items[item];
        const double x = (axis.xOf(it.start) + axis.xOf(it.end)) / 2;
        const double top = laneCenterY(r, static_cast<int>(lane), scrollY) - kLaneHeight / 2.0;
        QPolygonF tri;
        tri << QPointF(x, top + 7) << QPointF(x - 6, top - 3) << QPointF(x + 6, top - 3);
        p.setPen(QPen(Qt::white, 1));
        p.setBrush(m_palette->color(dl::OpState::Origin));
        p.drawPolygon(tri);
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelinePainter::paintMarker(QPainter& p, const QRect& r, const dl::TimeAxis& axis, quint32 op, int scrollY,
                                  QColor c, bool box) {
    std::size_t lane = 0, item = 0;
    if (!m_data->locate(op, lane, item)) return;
    const auto& it = m_data->lanes[lane].items[item];
    const int top = laneCenterY(r, static_cast<int>(lane), scrollY) - kLaneHeight / 2;
    const double x0 = axis.xOf(it.start), x1 = std::max(x0 + 3, axis.xOf(it.end));
    if (box) {
        p.setPen(QPen(c, 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRectF(x0 - 1, top + 1, x1 - x0 + 2, kLaneHeight - 2));
    }
}

}  // namespace dlui

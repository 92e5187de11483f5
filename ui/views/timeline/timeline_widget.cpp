#include "ui/views/timeline/timeline_widget.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QPainter>
#include <algorithm>
#include <cmath>
#include <tuple>

#include "ui/style/op_names.h"
#include "ui/style/state_colors.h"
#include "ui/style/theme.h"
#include "ui/views/op_context_menu.h"

namespace dlui {

namespace {
constexpr quint32 kNone = 0xffffffffu;
}

TimelineWidget::TimelineWidget(QWidget* parent) : QWidget(parent) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setMinimumHeight(130);  // overview, ruler and three lanes
    setAttribute(Qt::WA_OpaquePaintEvent);
    m_painter.setColors(theme::ViewColors::fromPalette(palette()));
    m_painter.setFoldable(true);
}

void TimelineWidget::changeEvent(QEvent* e) {
    if (e->type() == QEvent::PaletteChange || e->type() == QEvent::ApplicationPaletteChange ||
        e->type() == QEvent::StyleChange) {
        m_painter.setColors(theme::ViewColors::fromPalette(palette()));
        update();
    }
    QWidget::changeEvent(e);
}

void TimelineWidget::setTimeline(std::shared_ptr<const dl::TimelineData> data, const dl::DumpIndex* index,
                                 const dl::OpStates* states, const dl::AnalysisResult* analysis) {
    m_index = index;
    m_states = states;
    m_analysis = analysis;
    // A margin either side: an op at the very start or end can be centred, its marker whole.
    if (data) m_vp.setDataRange(data->t0, data->t1, m_margin);
    m_state.markActive = false;
    m_painter.setData(std::move(data), index);
    m_state.hoveredOp = kNone;
    m_state.rangeActive = false;
    m_state.areaActive = false;
    m_state.scrollY = 0;
    m_matchOrder.clear();
    changed();
    emit areaChanged();
}

void TimelineWidget::setMatches(const std::vector<quint32>& ops) {
    m_painter.setMatches(ops);
    m_matchOrder.clear();
    const dl::TimelineData* d = m_painter.data();
    if (d) {
        std::vector<std::tuple<std::int64_t, std::size_t, quint32>> order;
        for (quint32 op : ops) {
            std::size_t lane = 0, item = 0;
            if (d->locate(op, lane, item)) order.emplace_back(d->lanes[lane].items[item].start, lane, op);
        }
        std::sort(order.begin(), order.end());
        order.erase(std::unique(order.begin(), order.end()), order.end());
        for (const auto& [t, lane, op] : order) m_matchOrder.push_back(op);
    }
    update();
}

bool TimelineWidget::gotoMatch(bool backward) {
    const dl::TimelineData* d = m_painter.data();
    if (!d || m_matchOrder.empty()) return false;
    // Where we are: the selected op (by its start and lane), else the view's centre.
    std::int64_t t = m_vp.origin() + static_cast<std::int64_t>(std::llround((m_vp.from() + m_vp.to()) / 2));
    std::size_t laneHere = backward ? d->lanes.size() : 0;
    quint32 here = kNone;
    std::size_t lane = 0, item = 0;
    if (m_state.selectedOp != kNone && d->locate(m_state.selectedOp, lane, item)) {
        t = d->lanes[lane].items[item].start;
        laneHere = lane;
        here = m_state.selectedOp;
    }
    const auto key = [d](quint32 op) {
        std::size_t l = 0, i = 0;
        d->locate(op, l, i);
        return std::make_tuple(d->lanes[l].items[i].start, l, op);
    };
    const auto at = std::make_tuple(t, laneHere, here == kNone ? (backward ? kNone : 0u) : here);
    quint32 pick = kNone;
    if (!backward) {
        auto it = std::upper_bound(m_matchOrder.begin(), m_matchOrder.end(), at,
                                   [&](const auto& v, quint32 op) { return v < key(op); });
        pick = it == m_matchOrder.end() ? m_matchOrder.front() : *it;  // wraps around
    } else {
        auto it = std::lower_bound(m_matchOrder.begin(), m_matchOrder.end(), at,
                                   [&](quint32 op, const auto& v) { return key(op) < v; });
        pick = it == m_matchOrder.begin() ? m_matchOrder.back() : *(it - 1);
    }
    m_state.selectedOp = pick;
    if (d->locate(pick, lane, item)) {
        const auto& x = d->lanes[lane].items[item];
        m_vp.pan((relTime(x.start) + relTime(x.end)) / 2 - (m_vp.from() + m_vp.to()) / 2);  // centred
        ensureLaneVisible(lane);
    }
    changed();
    emit opClicked(pick);
    return true;
}

void TimelineWidget::selectArea(int laneFrom, int laneTo, double from, double to) {
    m_state.areaActive = true;
    m_state.areaLaneFrom = std::min(laneFrom, laneTo);
    m_state.areaLaneTo = std::max(laneFrom, laneTo);
    m_state.areaFrom = std::min(from, to);
    m_state.areaTo = std::max(from, to);
    update();
    emit areaChanged();
}

void TimelineWidget::clearArea() {
    if (!m_state.areaActive) return;
    m_state.areaActive = false;
    update();
    emit areaChanged();
}

dl::TimelineAreaSummary TimelineWidget::areaSummary() const {
    const dl::TimelineData* d = m_painter.data();
    if (!d || !m_index || !m_state.areaActive) return {};
    // Window times are relative to the viewport origin (t0 of the data): the same base.
    const double shift = static_cast<double>(m_vp.origin() - d->t0);
    return d->summarizeArea(*m_index, static_cast<std::size_t>(m_state.areaLaneFrom),
                            static_cast<std::size_t>(m_state.areaLaneTo), m_state.areaFrom + shift,
                            m_state.areaTo + shift);
}

QString TimelineWidget::areaText() const {
    if (!m_state.areaActive) return {};
    const dl::TimelineAreaSummary s = areaSummary();
    const dl::TimelineData* d = m_painter.data();
    QString text = tr("Area: %L1 ops · %L2 tensors").arg(s.ops).arg(s.tensors);
    const double span = m_state.areaTo - m_state.areaFrom;
    text += tr(" · %1 → %2 (%3)")
                .arg(m_painter.timeText(m_state.areaFrom), m_painter.timeText(m_state.areaTo),
                     d && d->base == dl::TimeBase::ExecutionOrder ? tr("%L1 positions").arg(std::llround(span))
                                                                  : QString::fromStdString(dl::formatTimeOffset(span)));
    QStringList states;
    for (int k = dl::kOpStateCount - 1; k >= 0; --k)
        if (s.states[std::size_t(k)])
            states
                << QStringLiteral("%L1 %2").arg(s.states[std::size_t(k)]).arg(m_painter.palette().name(dl::OpState(k)));
    if (!states.isEmpty()) text += QStringLiteral(" · ") + states.join(QStringLiteral(", "));
    return text;
}

void TimelineWidget::setStageCollapsed(int stage, bool collapsed) {
    m_painter.setStageCollapsed(stage, collapsed);
    scrollBy(0);  // the content may have shrunk under the scroll position
    update();
}

void TimelineWidget::copySelection() {
    if (m_state.areaActive)
        QGuiApplication::clipboard()->setText(areaText());
    else if (m_index && m_state.selectedOp < m_index->ops.size())
        QGuiApplication::clipboard()->setText(opNames(*m_index, m_index->ops[m_state.selectedOp]).shortName);
}

void TimelineWidget::setPalette(const StatePalette* palette) {
    m_painter.setPalette(palette);
    update();
}

void TimelineWidget::setWindow(double from, double to) {
    m_vp.setWindow(from, to);
    changed();
}

QRectF TimelineWidget::opRect(quint32 op) const {
    std::size_t lane = 0, item = 0;
    const dl::TimelineData* d = m_painter.data();
    if (!d || !d->locate(op, lane, item)) return {};
    const auto& it = d->lanes[lane].items[item];
    const dl::TimeAxis axis = TimelinePainter::axisFor(rect(), m_vp);
    const double top =
        m_painter.laneCenterY(rect(), static_cast<int>(lane), m_state.scrollY) - TimelinePainter::kLaneHeight / 2.0;
    const double x0 = axis.xOf(it.start);
    const double x1 = std::max(x0 + 1, axis.xOf(it.end));
    return QRectF(x0, top, x1 - x0, TimelinePainter::kLaneHeight);
}

double TimelineWidget::relTime(std::int64_t t) const { return static_cast<double>(t - m_vp.origin()); }

void TimelineWidget::changed() {
    update();
    emit viewChanged();
}

void TimelineWidget::selectOp(quint32 op) {
    m_state.selectedOp = op;
    std::size_t lane = 0, item = 0;
    const dl::TimelineData* d = m_painter.data();
    if (d && d->locate(op, lane, item)) {
        const auto& it = d->lanes[lane].items[item];
        const double s = relTime(it.start), e = relTime(it.end);
        if (e < m_vp.from() || s > m_vp.to()) m_vp.pan((s + e) / 2.0 - (m_vp.from() + m_vp.to()) / 2);
        ensureLaneVisible(lane);
    }
    changed();
}

void TimelineWidget::frameOp(quint32 op, int neighbours) {
    std::size_t lane = 0, item = 0;
    const dl::TimelineData* d = m_painter.data();
    if (!d || !d->locate(op, lane, item)) {
        selectOp(op);
        return;
    }
    const auto& items = d->lanes[lane].items;
    const std::size_t n = static_cast<std::size_t>(std::max(0, neighbours));
    const std::size_t a = item >= n ? item - n : 0, b = std::min(items.size() - 1, item + n);
    double from = relTime(items[a].start), to = from;
    for (std::size_t k = a; k <= b; ++k) to = std::max(to, relTime(items[k].end));
    const double mid = (relTime(items[item].start) + relTime(items[item].end)) / 2;
    // Centred on the op, wide enough for its neighbours on both sides and a little margin; a lone
    // op without duration gets the whole (margined) range around it.
    double half = std::max(mid - from, to - mid) * 1.1;
    if (!(half > 0)) half = (m_vp.fullTo() - m_vp.fullFrom()) / 2;
    m_vp.zoomTo(mid - half, mid + half);
    m_state.selectedOp = op;
    ensureLaneVisible(lane);
    changed();
}

void TimelineWidget::setMark(double at) {
    m_state.markActive = true;
    m_state.markAt = at;
    update();
}

void TimelineWidget::clearMark() {
    m_state.markActive = false;
    update();
}

void TimelineWidget::clearSelection() {
    m_state.selectedOp = kNone;
    m_state.rangeActive = false;
    changed();
    clearArea();
}

QRect TimelineWidget::visibleLanesRect() const {
    // The lanes area as far as it is on screen: a window squeezed below its layout's minimum
    // clips the widget (the parent's edge, a sibling laid over it), and a lane scrolled "into
    // view" there would still be hidden.
    const QRect lr = TimelinePainter::lanesRect(rect());
    if (!isVisible()) return lr;
    const QRect shown = lr.intersected(visibleRegion().boundingRect());
    return shown.height() >= TimelinePainter::kLaneHeight ? shown : lr;
}

void TimelineWidget::ensureLaneVisible(std::size_t lane) {
    // Bring the whole lane into vertical view.
    const QRect lr = visibleLanesRect();
    const int cy = m_painter.laneCenterY(rect(), static_cast<int>(lane), m_state.scrollY);
    const int half = TimelinePainter::kLaneHeight / 2;
    if (cy - half < lr.top() || cy + half > lr.bottom()) scrollBy(cy - (lr.top() + lr.height() / 2));
}

void TimelineWidget::resizeEvent(QResizeEvent*) {
    // The selection is made before the final layout: keep its lane on screen as the widget settles.
    std::size_t lane = 0, item = 0;
    const dl::TimelineData* d = m_painter.data();
    if (d && m_state.selectedOp != kNone && d->locate(m_state.selectedOp, lane, item)) ensureLaneVisible(lane);
}

void TimelineWidget::fitSelection() {
    std::size_t lane = 0, item = 0;
    const dl::TimelineData* d = m_painter.data();
    if (!d) return;
    if (m_state.selectedOp != kNone && d->locate(m_state.selectedOp, lane, item)) {
        const auto& it = d->lanes[lane].items[item];
        // The op plus a margin of twice its length (at least a few units) on each side.
        const double pad = std::max<double>(3.0 * static_cast<double>(it.end - it.start), 5.0);
        m_vp.zoomTo(relTime(it.start) - pad, relTime(it.end) + pad);
    } else {
        m_vp.fitAll();
    }
    changed();
}

void TimelineWidget::zoomBy(double factor) {
    m_vp.zoomAt((m_vp.from() + m_vp.to()) / 2, factor);
    changed();
}

void TimelineWidget::panBy(double fraction) {
    m_vp.pan(m_vp.span() * fraction);
    changed();
}

void TimelineWidget::undoZoom() {
    if (m_vp.undo()) changed();
}

void TimelineWidget::fitAll() {
    m_vp.fitAll();
    changed();
}

void TimelineWidget::scrollBy(int dy) {
    const QRect lr = TimelinePainter::lanesRect(rect()), shown = visibleLanesRect();
    const int maxScroll = std::max(0, m_painter.contentHeight() - (shown.bottom() - lr.top() + 1));
    m_state.scrollY = std::clamp(m_state.scrollY + dy, 0, maxScroll);
    update();
}

void TimelineWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    m_painter.paint(p, rect(), m_vp, m_state);
    if (hasFocus()) {
        p.setPen(QPen(theme::kFocusFrame, 1));
        p.drawRect(rect().adjusted(0, 0, -1, -1));
    }
}

quint32 TimelineWidget::opAt(const QPoint& pos) const {
    const dl::TimelineData* d = m_painter.data();
    if (!d) return kNone;
    const int lane = m_painter.laneAt(rect(), pos.y(), m_state.scrollY);
    if (lane < 0 || pos.x() < TimelinePainter::kLabelWidth) return kNone;
    const dl::TimeAxis axis = TimelinePainter::axisFor(rect(), m_vp);
    const dl::TimelineItem* it =
        d->itemAtRelative(static_cast<std::size_t>(lane), axis.toTime(pos.x()), 3 * axis.timePerPixel());
    return it ? it->op : kNone;
}
}  // namespace dlui

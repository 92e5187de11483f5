#include "ui/views/timeline_widget.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "core/analysis/tensor_anomaly.h"
#include "ui/util/figure_text.h"
#include "ui/util/op_names.h"
#include "ui/util/state_colors.h"
#include "ui/util/theme.h"

namespace dlui {

namespace {
constexpr quint32 kNone = 0xffffffffu;
}

TimelineWidget::TimelineWidget(QWidget* parent) : QWidget(parent) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setMinimumHeight(130);   // overview, ruler and three lanes
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void TimelineWidget::setTimeline(std::shared_ptr<const dl::TimelineData> data, const dl::DumpIndex* index,
                                 const dl::OpStates* states, const dl::AnalysisResult* analysis) {
    m_index = index;
    m_states = states;
    m_analysis = analysis;
    if (data) m_vp.setDataRange(data->t0, data->t1);
    m_painter.setData(std::move(data), index);
    m_state.hoveredOp = kNone;
    m_state.rangeActive = false;
    m_state.scrollY = 0;
    changed();
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
    const double top = m_painter.laneCenterY(rect(), static_cast<int>(lane), m_state.scrollY) - TimelinePainter::kLaneHeight / 2.0;
    const double x0 = axis.xOf(it.start);
    const double x1 = std::max(x0 + 1, axis.xOf(it.end));
    return QRectF(x0, top, x1 - x0, TimelinePainter::kLaneHeight);
}

double TimelineWidget::relTime(std::int64_t t) const {
    return static_cast<double>(t - m_vp.origin());
}

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

void TimelineWidget::clearSelection() {
    m_state.selectedOp = kNone;
    m_state.rangeActive = false;
    changed();
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
    const dl::TimelineItem* it = d->itemAtRelative(static_cast<std::size_t>(lane), axis.toTime(pos.x()), 3 * axis.timePerPixel());
    return it ? it->op : kNone;
}

QString TimelineWidget::tooltipFor(quint32 op) const {
    if (!m_index || op >= m_index->ops.size()) return {};
    const dl::OpRecord& o = m_index->ops[op];
    const auto s = [&](dl::StrId id) { return QString::fromStdString(m_index->strings.str(id)).toHtmlEscaped(); };
    const OpNames names = opNames(*m_index, o);
    QString text = QStringLiteral("<b>%1</b> <i>%2</i><br>").arg(names.shortName.toHtmlEscaped(), s(o.type));
    if (names.full != names.shortName) text += QStringLiteral("<small>%1</small><br>").arg(names.full.toHtmlEscaped());
    const int stage = m_analysis ? m_analysis->stages.stageOf(o.rank) : -1;
    text += tr("rank %1 · stage %2 · iteration %3 · exec #%4")
                .arg(o.rank).arg(stage < 0 ? QStringLiteral("?") : QString::number(stage)).arg(o.iteration).arg(o.execPos);
    // Times as the ruler shows them: from the start of this timeline, never absolute epoch values.
    std::size_t lane = 0, item = 0;
    const dl::TimelineData* d = m_painter.data();
    if (d && d->base == dl::TimeBase::Timestamps && d->locate(op, lane, item)) {
        const dl::TimelineItem& it = d->lanes[lane].items[item];
        text += tr("<br>at %1 from the timeline start").arg(QString::fromStdString(dl::formatTimeOffset(relTime(it.start))));
        if (it.end > it.start) text += tr(" · duration %1").arg(QString::fromStdString(dl::formatTimeOffset(double(it.end - it.start))));
    }
    if (m_states && op < m_states->op.size())
        text += tr("<br>state: <span style='color:%1'><b>%2</b></span>")
                    .arg(m_painter.palette().color(m_states->op[op]).darker(130).name(),
                         m_painter.palette().name(m_states->op[op]));
    for (quint32 t = o.firstTensor; t < o.firstTensor + o.tensorCount && t < m_index->tensors.size(); ++t) {
        const dl::TensorRecord& tr_ = m_index->tensors[t];
        const dl::TensorStats st = m_index->stats(tr_);
        const QString mx = figureText(st, dl::StatFigure::MaxAbs);
        text += QStringLiteral("<br>%1 %2 max|x| %3").arg(QString::fromStdString(m_index->tensorLabel(tr_)),
                                                          QString::fromLatin1(dl::dtypeName(tr_.dtype).data()), mx);
        if (st.nanCount + st.infCount()) text += tr(" · NaN %1 Inf %2").arg(st.nanCount).arg(st.infCount());
    }
    if (m_tooltipExtra) text += m_tooltipExtra(op);
    return text;
}

bool TimelineWidget::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const quint32 op = opAt(he->pos());
        if (op != kNone) QToolTip::showText(he->globalPos(), tooltipFor(op), this);
        else QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}

void TimelineWidget::wheelEvent(QWheelEvent* e) {
    const double steps = e->angleDelta().y() / 120.0;
    if (e->modifiers() & Qt::ControlModifier) {
        const dl::TimeAxis axis = TimelinePainter::axisFor(rect(), m_vp);
        m_vp.zoomAt(axis.toTime(e->position().x()), std::pow(0.8, steps));
        changed();
    } else if (e->modifiers() & Qt::ShiftModifier) {
        panBy(-0.1 * steps);
    } else {
        scrollBy(static_cast<int>(-steps * TimelinePainter::kLaneHeight * 2));
    }
    e->accept();
}

void TimelineWidget::keyPressEvent(QKeyEvent* e) {
    switch (e->key()) {
        case Qt::Key_W: zoomBy(0.8); break;
        case Qt::Key_S: zoomBy(1.25); break;
        case Qt::Key_A: panBy(-0.1); break;
        case Qt::Key_D: panBy(0.1); break;
        case Qt::Key_F: fitSelection(); break;
        case Qt::Key_0:
        case Qt::Key_Home: fitAll(); break;
        case Qt::Key_Backspace: undoZoom(); break;
        case Qt::Key_Escape:
            clearSelection();
            emit selectionCleared();
            break;
        default: QWidget::keyPressEvent(e); return;
    }
    e->accept();
}

void TimelineWidget::mousePressEvent(QMouseEvent* e) {
    setFocus(Qt::MouseFocusReason);
    m_pressPos = e->pos();
    m_pressFrom = m_vp.from();
    m_moved = false;
    const dl::TimeAxis axis = TimelinePainter::axisFor(rect(), m_vp);
    if (TimelinePainter::overviewRect(rect()).contains(e->pos())) {
        m_drag = Drag::Overview;
        mouseMoveEvent(e);
    } else if (e->button() == Qt::RightButton || (e->modifiers() & Qt::ShiftModifier)) {
        m_drag = Drag::Range;
        m_state.rangeActive = true;
        m_state.rangeFrom = m_state.rangeTo = axis.toTime(e->pos().x());
    } else if (e->button() == Qt::LeftButton) {
        m_drag = Drag::Pan;
    }
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* e) {
    if ((e->pos() - m_pressPos).manhattanLength() > 3) m_moved = true;
    const QRect r = rect();
    if (m_drag == Drag::Overview) {
        const QRect o = TimelinePainter::overviewRect(r);
        const dl::TimeAxis full(m_vp.fullFrom(), m_vp.fullTo(), o.left(), o.width(), m_vp.origin());
        m_vp.pan(full.toTime(e->pos().x()) - (m_vp.from() + m_vp.to()) / 2);
        changed();
    } else if (m_drag == Drag::Pan) {
        const dl::TimeAxis axis = TimelinePainter::axisFor(r, m_vp);
        m_vp.pan(m_pressFrom - m_vp.from() - (e->pos().x() - m_pressPos.x()) * axis.timePerPixel());
        changed();
    } else if (m_drag == Drag::Range) {
        m_state.rangeTo = TimelinePainter::axisFor(r, m_vp).toTime(e->pos().x());
        update();
    } else {
        const quint32 op = opAt(e->pos());
        if (op != m_state.hoveredOp) {
            m_state.hoveredOp = op;
            update();
        }
    }
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent* e) {
    const Drag drag = m_drag;
    m_drag = Drag::None;
    if (drag == Drag::Range) {
        m_state.rangeActive = false;
        if (m_moved) m_vp.zoomTo(m_state.rangeFrom, m_state.rangeTo);
        changed();
        // A right click that did not drag a range: the op's context menu.
        if (!m_moved && e->button() == Qt::RightButton) showOpMenu(e->pos(), e->globalPosition().toPoint());
    } else if (drag == Drag::Pan && !m_moved) {
        const quint32 op = opAt(e->pos());
        if (op != kNone) {
            m_state.selectedOp = op;
            update();
            emit opClicked(op);
        }
    }
}

void TimelineWidget::showOpMenu(const QPoint& pos, const QPoint& globalPos) {
    const quint32 op = opAt(pos);
    if (op == kNone || !m_index || op >= m_index->ops.size()) return;
    const OpNames names = opNames(*m_index, m_index->ops[op]);
    QMenu menu(this);
    menu.addAction(tr("Copy full name"), this, [full = names.full] { QGuiApplication::clipboard()->setText(full); });
    menu.addAction(tr("Copy short name"), this, [s = names.shortName] { QGuiApplication::clipboard()->setText(s); });
    menu.exec(globalPos);
}

void TimelineWidget::leaveEvent(QEvent*) {
    m_state.hoveredOp = kNone;
    update();
}

}  // namespace dlui

// How the timeline widget answers the user: the tooltip of an op, the wheel, the keys, the mouse
// (select, drag a range or an area, pan) and the op's context menu. Apart from the view state they
// change (timeline_widget.cpp), which the panels and the tests drive without events.
#include "ui/views/timeline/timeline_widget.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/analysis/tensor_anomaly.h"
#include "ui/style/figure_text.h"
#include "ui/style/op_names.h"
#include "ui/style/theme.h"
#include "ui/views/op_context_menu.h"

namespace dlui {

namespace {
constexpr quint32 kNone = 0xffffffffu;
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
                .arg(o.rank)
                .arg(stage < 0 ? QStringLiteral("?") : QString::number(stage))
                .arg(o.iteration)
                .arg(o.execPos);
    // Times as the ruler shows them: from the view's origin, never absolute epoch values.
    std::size_t lane = 0, item = 0;
    const dl::TimelineData* d = m_painter.data();
    if (d && d->locate(op, lane, item)) {
        const dl::TimelineItem& it = d->lanes[lane].items[item];
        if (d->base == dl::TimeBase::Timestamps) {
            text += tr("<br>at %1").arg(m_painter.timeText(relTime(it.start)));
            const QString dur = QString::fromStdString(dl::formatTimeOffset(double(it.end - it.start)));
            if (it.inferredEnd && it.endCapped)
                text += tr(" · duration at most %1 <i>(inferred: the dump has no end times; the gap to the next op on "
                           "this lane "
                           "is much longer than usual, so the rest is drawn as idle)</i>")
                            .arg(dur);
            else if (it.inferredEnd && it.end > it.start)
                text +=
                    tr(" · duration %1 <i>(inferred: the dump has no end times, so up to the next op on this lane)</i>")
                        .arg(dur);
            else if (it.inferredEnd)
                text += tr(" · <i>no duration: the dump has no end times and no op follows on this lane</i>");
            else
                text += tr(" · duration %1").arg(dur);
        } else {
            text +=
                tr("<br>position %1 in the execution order (no timestamps)").arg(m_painter.timeText(relTime(it.start)));
        }
    }
    if (m_states && op < m_states->op.size())
        text +=
            tr("<br>state: <span style='color:%1'><b>%2</b></span>")
                .arg(theme::forBackground(m_painter.palette().color(m_states->op[op]).darker(115), palette()).name(),
                     m_painter.palette().name(m_states->op[op]));
    for (quint32 t = o.firstTensor; t < o.firstTensor + o.tensorCount && t < m_index->tensors.size(); ++t) {
        const dl::TensorRecord& tr_ = m_index->tensors[t];
        const dl::TensorStats st = m_index->stats(tr_);
        const QString mx = figureText(st, dl::StatFigure::MaxAbs);
        text += QStringLiteral("<br>%1 %2 max|x| %3")
                    .arg(QString::fromStdString(m_index->tensorLabel(tr_)),
                         QString::fromLatin1(dl::dtypeName(tr_.dtype).data()), mx);
        if (st.nanCount + st.infCount())
            text += tr(" · NaN %1 Inf %2").arg(countText(st, st.nanCount), countText(st, st.infCount()));
    }
    if (m_tooltipExtra) text += m_tooltipExtra(op);
    return text;
}

bool TimelineWidget::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const quint32 op = opAt(he->pos());
        if (op != kNone)
            QToolTip::showText(he->globalPos(), tooltipFor(op), this);
        else
            QToolTip::hideText();
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
        case Qt::Key_W:
            zoomBy(0.8);
            break;
        case Qt::Key_S:
            zoomBy(1.25);
            break;
        case Qt::Key_A:
            panBy(-0.1);
            break;
        case Qt::Key_D:
            panBy(0.1);
            break;
        case Qt::Key_F:
            fitSelection();
            break;
        case Qt::Key_0:
        case Qt::Key_Home:
            fitAll();
            break;
        case Qt::Key_Backspace:
            undoZoom();
            break;
        case Qt::Key_M: {
            // Toggles a mark under the mouse, else at the selected op's start.
            if (m_state.markActive) {
                clearMark();
                break;
            }
            const dl::TimeAxis axis = TimelinePainter::axisFor(rect(), m_vp);
            std::size_t lane = 0, item = 0;
            if (rect().contains(m_mousePos) && m_mousePos.x() >= TimelinePainter::kLabelWidth)
                setMark(axis.toTime(m_mousePos.x()));
            else if (timeline() && m_state.selectedOp != kNone && timeline()->locate(m_state.selectedOp, lane, item))
                setMark(relTime(timeline()->lanes[lane].items[item].start));
            break;
        }
        case Qt::Key_F3:
            gotoMatch(e->modifiers() & Qt::ShiftModifier);
            break;
        case Qt::Key_C:
            if (!(e->modifiers() & Qt::ControlModifier)) {
                QWidget::keyPressEvent(e);
                return;
            }
            copySelection();
            break;
        case Qt::Key_Escape:
            clearSelection();
            emit selectionCleared();
            break;
        default:
            QWidget::keyPressEvent(e);
            return;
    }
    e->accept();
}

void TimelineWidget::mousePressEvent(QMouseEvent* e) {
    setFocus(Qt::MouseFocusReason);
    m_pressPos = e->pos();
    m_pressFrom = m_vp.from();
    m_moved = false;
    const dl::TimeAxis axis = TimelinePainter::axisFor(rect(), m_vp);
    const bool onRuler = TimelinePainter::rulerRect(rect()).contains(e->pos());
    if (TimelinePainter::overviewRect(rect()).contains(e->pos())) {
        m_drag = Drag::Overview;
        mouseMoveEvent(e);
    } else if (e->button() == Qt::LeftButton && (onRuler || (e->modifiers() & Qt::ControlModifier))) {
        // An area: a drag on the ruler spans every lane, Ctrl+drag the lanes it crosses.
        m_drag = Drag::Area;
        m_areaOnRuler = onRuler;
        const double t = axis.toTime(e->pos().x());
        const QRect r = rect();
        const int lane = onRuler ? 0 : std::max(0, m_painter.laneNear(r, e->pos().y(), m_state.scrollY, true));
        m_state.areaActive = true;
        m_state.areaFrom = m_state.areaTo = t;
        m_state.areaLaneFrom = m_state.areaLaneTo = lane;
        updateArea(e->pos());
    } else if (e->pos().x() < TimelinePainter::kLabelWidth && e->button() == Qt::LeftButton &&
               m_painter.headerAt(rect(), e->pos().y(), m_state.scrollY) != TimelinePainter::kNoHeader) {
        const int stage = m_painter.headerAt(rect(), e->pos().y(), m_state.scrollY);
        setStageCollapsed(stage, !m_painter.isStageCollapsed(stage));
        m_drag = Drag::None;
    } else if (e->button() == Qt::RightButton || (e->modifiers() & Qt::ShiftModifier)) {
        m_drag = Drag::Range;
        m_state.rangeActive = true;
        m_state.rangeFrom = m_state.rangeTo = axis.toTime(e->pos().x());
    } else if (e->button() == Qt::LeftButton) {
        m_drag = Drag::Pan;
    }
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* e) {
    m_mousePos = e->pos();
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
    } else if (m_drag == Drag::Area) {
        updateArea(e->pos());
    } else {
        const quint32 op = opAt(e->pos());
        if (op != m_state.hoveredOp) {
            m_state.hoveredOp = op;
            update();
        }
    }
}

void TimelineWidget::updateArea(const QPoint& pos) {
    const QRect r = rect();
    m_state.areaTo = TimelinePainter::axisFor(r, m_vp).toTime(pos.x());
    if (m_areaOnRuler) {
        m_state.areaLaneFrom = 0;
        m_state.areaLaneTo = std::max(0, static_cast<int>(timeline() ? timeline()->lanes.size() : 1) - 1);
    } else {
        const int startLane = m_painter.laneNear(r, m_pressPos.y(), m_state.scrollY, true);
        const bool down = pos.y() >= m_pressPos.y();
        const int endLane = m_painter.laneNear(r, pos.y(), m_state.scrollY, !down);
        m_state.areaLaneFrom = std::max(0, std::min(startLane, endLane));
        m_state.areaLaneTo = std::max(0, std::max(startLane, endLane));
    }
    update();
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent* e) {
    const Drag drag = m_drag;
    m_drag = Drag::None;
    if (drag == Drag::Area) {
        if (m_moved)
            selectArea(m_state.areaLaneFrom, m_state.areaLaneTo, m_state.areaFrom, m_state.areaTo);
        else
            clearArea();
        // A click on the ruler (no drag) puts the mark there, a click on the mark takes it away.
        if (!m_moved && m_areaOnRuler) {
            const dl::TimeAxis axis = TimelinePainter::axisFor(rect(), m_vp);
            if (m_state.markActive && std::abs(axis.toX(m_state.markAt) - e->pos().x()) <= 4)
                clearMark();
            else
                setMark(axis.toTime(e->pos().x()));
        }
        return;
    }
    if (drag == Drag::Range) {
        m_state.rangeActive = false;
        if (m_moved) m_vp.zoomTo(m_state.rangeFrom, m_state.rangeTo);
        changed();
        // A right click that did not drag a range: the op's context menu.
        // It selects the op first, as a left click would: the menu acts on what every view shows.
        if (!m_moved && e->button() == Qt::RightButton) {
            const quint32 op = opAt(e->pos());
            if (op != kNone && op != m_state.selectedOp) {
                m_state.selectedOp = op;
                update();
                emit opClicked(op);
            }
            showOpMenu(e->pos(), e->globalPosition().toPoint());
        }
    } else if (drag == Drag::Pan && !m_moved) {
        const quint32 op = opAt(e->pos());
        if (op != kNone) {
            m_state.selectedOp = op;
            update();
            emit opClicked(op);
        }
    }
}

void TimelineWidget::fillOpMenu(QMenu& menu, quint32 op) {
    if (!m_index || op >= m_index->ops.size()) return;
    OpMenuHooks hooks;
    if (m_compare && m_compareAvailable && m_compareAvailable()) hooks.compareTensor = m_compare;
    // Its flows as "Go to" entries: the Send's Receive (or the Receive's Send), the group's members.
    if (const dl::TimelineData* d = m_painter.data()) {
        for (const dl::TimelineFlow& f : d->flowsFor(op)) {
            const quint32 other = f.fromOp == op ? f.toOp : f.fromOp;
            const QString what = f.collective ? tr("collective member")
                : f.fromOp == op              ? tr("its Receive")
                                              : tr("its Send");
            hooks.goTo.emplace_back(tr("Go to %1: %2 (rank %3)")
                                        .arg(what, opNames(*m_index, m_index->ops[other]).shortName)
                                        .arg(m_index->ops[other].rank),
                                    other);
        }
    }
    hooks.goToOp = [this](quint32 target) {
        selectOp(target);
        emit opClicked(target);
    };
    dlui::fillOpMenu(menu, this, *m_index, op, dl::kNoIndex, hooks);
}

void TimelineWidget::showOpMenu(const QPoint& pos, const QPoint& globalPos) {
    const quint32 op = opAt(pos);
    if (op == kNone || !m_index || op >= m_index->ops.size()) return;
    QMenu menu(this);
    fillOpMenu(menu, op);
    menu.exec(globalPos);
}

void TimelineWidget::leaveEvent(QEvent*) {
    m_mousePos = {-1, -1};
    m_state.hoveredOp = kNone;
    update();
}

}  // namespace dlui

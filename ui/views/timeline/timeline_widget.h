#pragma once
// The interactive timeline: W/S or Ctrl+wheel zoom, A/D or drag pan, Shift/right drag to zoom to a
// range, Ctrl+drag (or a drag on the ruler) to select an area, a click on the ruler (or M) to count
// the ruler from a mark, F fit the selected op, Backspace undo
// zoom, Esc clear, 0 show all, F3/Shift+F3 next/previous search match, click a stage header to fold
// it, overview strip click to jump, hover tooltips, click to select, right click for an op's menu.
// Painting is delegated to TimelinePainter.
#include <QWidget>
#include <functional>
#include <memory>

#include "core/timeline/timeline_viewport.h"
#include "ui/views/timeline/timeline_painter.h"

class QMenu;

namespace dlui {

class TimelineWidget : public QWidget {
    Q_OBJECT
public:
    explicit TimelineWidget(QWidget* parent = nullptr);

    void setTimeline(std::shared_ptr<const dl::TimelineData> data, const dl::DumpIndex* index,
                     const dl::OpStates* states, const dl::AnalysisResult* analysis);
    const dl::TimelineData* timeline() const { return m_painter.data(); }
    const TimelinePainter& painter() const { return m_painter; }
    const TimelinePaintState& paintState() const { return m_state; }
    const dl::TimelineViewport& viewport() const { return m_vp; }
    void setPalette(const StatePalette* palette);
    void setCompact(bool compact) { m_painter.setCompact(compact); }
    // Room shown before the first and after the last op (a share of the range; from the next
    // setTimeline). The compare pair keeps none: its locked windows map through matched ops.
    void setRangeMargin(double margin) { m_margin = margin; }
    // Extra tooltip lines for an op (the compare view adds the partner and the metrics).
    void setTooltipExtra(std::function<QString(quint32)> extra) { m_tooltipExtra = std::move(extra); }
    // "Compare this tensor" in the op menu: enabled while available() holds.
    void setCompareHook(std::function<bool()> available, std::function<void(quint32 tensor)> compare) {
        m_compareAvailable = std::move(available);
        m_compare = std::move(compare);
    }
    // Shows [from, to] (relative to viewport().origin()) without touching the undo stack (the other
    // timeline of a locked pair).
    void setWindow(double from, double to);
    // An absolute time of the timeline's base as a window time (relative to the origin).
    double relTime(std::int64_t t) const;
    // The op's box in widget coordinates (its lane may be scrolled out of view); empty when the op
    // is not on this timeline.
    QRectF opRect(quint32 op) const;
    // Highlights an op and scrolls it into view (keeps the zoom unless the op is off-screen).
    void selectOp(quint32 op);
    quint32 selectedOp() const { return m_state.selectedOp; }
    void clearSelection();
    // Selects the op and zooms to it and `neighbours` ops either side on its lane, the op centred
    // (what a dump opens on, and Jump to origin).
    void frameOp(quint32 op, int neighbours = 8);
    void fitSelection();
    // The ruler counts from a mark (a click on the ruler, M) instead of the view's start.
    void setMark(double at);
    void clearMark();
    bool hasMark() const { return m_state.markActive; }
    void zoomBy(double factor);
    void panBy(double fractionOfView);
    void undoZoom();
    void fitAll();
    QSize sizeHint() const override { return {900, 360}; }

    // Search: ops to highlight; next/previous go through them in time order (then lane).
    void setMatches(const std::vector<quint32>& ops);
    const std::vector<quint32>& matchOrder() const { return m_matchOrder; }
    // Selects the next (or previous) match after the selected op, or after the view's centre when
    // none is selected, centres it and emits opClicked; false when there are no matches.
    bool gotoMatch(bool backward);
    // Area selection over lanes [laneFrom, laneTo] and window times [from, to].
    void selectArea(int laneFrom, int laneTo, double from, double to);
    void clearArea();
    bool hasArea() const { return m_state.areaActive; }
    dl::TimelineAreaSummary areaSummary() const;
    QString areaText() const;  // "412 ops · 1,030 tensors · 2.31 ms · 3 Inf/NaN, 1 origin"
    // Folds or unfolds a pipeline stage's lanes.
    void setStageCollapsed(int stage, bool collapsed);
    // The op's context menu (what a right click shows), for tests and the table's shared menu.
    void fillOpMenu(QMenu& menu, quint32 op);
    // The tooltip text of an op (rich text).
    QString tooltipFor(quint32 op) const;
    // Copies the selected area's summary, else the selected op's short name (Ctrl+C).
    void copySelection();

signals:
    void opClicked(quint32 op);
    // Esc on the timeline: the owner clears the selection of every view (the widget already has).
    void selectionCleared();
    void viewChanged();
    void areaChanged();  // an area was selected or cleared

protected:
    void paintEvent(QPaintEvent*) override;
    void wheelEvent(QWheelEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void leaveEvent(QEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void changeEvent(QEvent* e) override;
    bool event(QEvent* e) override;

private:
    quint32 opAt(const QPoint& pos) const;
    void showOpMenu(const QPoint& pos, const QPoint& globalPos);  // right click on an op
    void scrollBy(int dy);
    void ensureLaneVisible(std::size_t lane);
    QRect visibleLanesRect() const;
    void changed();
    void updateArea(const QPoint& pos);

    TimelinePainter m_painter;
    dl::TimelineViewport m_vp;
    TimelinePaintState m_state;
    const dl::DumpIndex* m_index = nullptr;
    const dl::OpStates* m_states = nullptr;
    const dl::AnalysisResult* m_analysis = nullptr;
    std::function<QString(quint32)> m_tooltipExtra;
    std::function<bool()> m_compareAvailable;
    std::function<void(quint32)> m_compare;
    std::vector<quint32> m_matchOrder;
    enum class Drag { None, Pan, Range, Area, Overview } m_drag = Drag::None;
    bool m_areaOnRuler = false;  // dragged on the ruler: every lane
    QPoint m_pressPos;
    double m_pressFrom = 0;
    bool m_moved = false;
    double m_margin = 0.03;
    QPoint m_mousePos{-1, -1};  // last position over the widget (M marks there)
};

}  // namespace dlui

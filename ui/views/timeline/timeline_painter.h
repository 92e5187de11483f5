#pragma once
// Paints a TimelineData (lanes grouped by stage, overview strip, ruler, chain arrows, flows of the
// selected op, search matches, an area selection) for a given viewport. Draw cost is bounded by
// pixels, not ops: each lane draws level-of-detail buckets no wider than a pixel, merged into runs
// of equal state; zoomed in, ops are slices with their short names where they fit. Used by
// TimelineWidget, the PDF report and the benchmark.
#include <QPainter>
#include <QRect>
#include <QString>
#include <QStringList>
#include <memory>
#include <set>
#include <vector>

#include "core/model/dump_index.h"
#include "core/timeline/time_axis.h"
#include "core/timeline/timeline_data.h"
#include "core/timeline/timeline_viewport.h"
#include "ui/style/state_colors.h"
#include "ui/style/theme.h"

namespace dlui {

struct TimelinePaintState {
    quint32 selectedOp = 0xffffffffu;
    quint32 hoveredOp = 0xffffffffu;
    bool rangeActive = false;  // zoom band being dragged
    double rangeFrom = 0, rangeTo = 0;
    bool areaActive = false;  // area selection (time window over lanes), kept until cleared
    double areaFrom = 0, areaTo = 0;
    int areaLaneFrom = 0, areaLaneTo = 0;
    int scrollY = 0;
    bool markActive = false;  // the ruler counts from this time (a mark the user set), else from the view start
    double markAt = 0;
};

// A name drawn inside a slice, or the op count of a merged run ("25 ops", op kNoOp), in the last
// paint (tests check the layout, not pixels).
struct SliceLabel {
    static constexpr quint32 kNoOp = 0xffffffffu;
    quint32 op = kNoOp;
    QRectF rect;
    QString text;             // elided to the slice
    std::uint32_t count = 1;  // ops the slice or run holds
    dl::OpState state = dl::OpState::Normal;
};

class TimelinePainter {
public:
    static constexpr int kLabelWidth = 96, kOverviewHeight = 30, kRulerHeight = 22;
    static constexpr int kLaneHeight = 24, kHeaderHeight = 18;
    static constexpr int kNoHeader = -1000;  // headerAt: no header there

    void setData(std::shared_ptr<const dl::TimelineData> data, const dl::DumpIndex* index);
    const dl::TimelineData* data() const { return m_data.get(); }
    // Colours of the item states (overflow states by default; the compare view uses its own).
    void setPalette(const StatePalette* palette) {
        m_palette = palette;
        m_paletteFor = nullptr;
    }
    const StatePalette& palette() const { return *m_palette; }
    // Surfaces and marks (the widget's palette; the report keeps the light print colours).
    void setColors(const theme::ViewColors& c) {
        m_colors = c;
        m_paletteFor = nullptr;  // state fills re-derived at the next paint
    }
    // A state's fill as drawn: the palette's colour, lightened on a dark background so it stands out.
    QColor stateColor(dl::OpState s) const {
        return m_colors.dark ? theme::mix(m_palette->color(s), Qt::white, 0.3) : m_palette->color(s);
    }
    const theme::ViewColors& colors() const { return m_colors; }
    // Compact: no stage header rows, the stage goes into the lane label (stacked timelines).
    // Takes effect with the next setData.
    void setCompact(bool compact) { m_compact = compact; }
    // Headers show ▸/▾ fold marks (the interactive timeline; not the report's figure).
    void setFoldable(bool on) { m_foldable = on; }
    // Folds a pipeline stage's lanes into its header (a thin summary of them stays drawn there).
    void setStageCollapsed(int stage, bool collapsed);
    bool isStageCollapsed(int stage) const { return m_collapsed.count(stage) > 0; }
    // The stage whose header is at widget y, kNoHeader elsewhere.
    int headerAt(const QRect& r, int y, int scrollY) const;
    bool laneShown(std::size_t lane) const { return lane < m_laneShown.size() && m_laneShown[lane]; }
    // Ops to highlight (search matches); any order.
    void setMatches(const std::vector<quint32>& ops);
    std::size_t matchCount() const { return m_matchCount; }

    static QRect overviewRect(const QRect& r) {
        return {r.left() + kLabelWidth, r.top(), r.width() - kLabelWidth, kOverviewHeight};
    }
    static QRect rulerRect(const QRect& r) {
        return {r.left() + kLabelWidth, r.top() + kOverviewHeight, r.width() - kLabelWidth, kRulerHeight};
    }
    static QRect lanesRect(const QRect& r) {
        return QRect(r.left() + kLabelWidth, r.top() + kOverviewHeight + kRulerHeight, r.width() - kLabelWidth,
                     r.height() - kOverviewHeight - kRulerHeight);
    }
    static dl::TimeAxis axisFor(const QRect& r, const dl::TimelineViewport& vp) {
        const QRect l = lanesRect(r);
        return dl::TimeAxis(vp.from(), vp.to(), l.left(), l.width(), vp.origin());
    }
    int contentHeight() const { return m_contentHeight; }
    // Lane under widget y (lanes area, scroll applied); -1 on a header, a folded lane or outside.
    int laneAt(const QRect& r, int y, int scrollY) const;
    // Nearest shown lane at or after (down) / before (up) widget y: for area selections.
    int laneNear(const QRect& r, int y, int scrollY, bool down) const;
    // Centre of the lane, or of its stage header while the stage is folded.
    int laneCenterY(const QRect& r, int lane, int scrollY) const;
    // Buckets/items drawn in the last paint (for the benchmark and tests).
    std::size_t lastDrawn() const { return m_lastDrawn; }
    const std::vector<SliceLabel>& lastLabels() const { return m_labels; }
    std::size_t lastArrowsDrawn() const { return m_arrowsDrawn; }  // chain hops drawn in the last paint
    // The ruler's labels in the last paint, left to right, and what it counts from (its left cell).
    const QStringList& lastRulerLabels() const { return m_rulerLabels; }
    const QString& lastRulerReference() const { return m_rulerRef; }
    // Fewest pixels a slice needs for a label (two characters and "…").
    static constexpr double kMinLabelWidth = 12;
    // A time of the window as the ruler writes it (relative to the view origin).
    QString timeText(double rel, double resolution = 0) const;

    void paint(QPainter& p, const QRect& r, const dl::TimelineViewport& vp, const TimelinePaintState& st);

private:
    void relayout();
    void paintHeaders(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st);
    void paintLanes(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st);
    void paintLane(QPainter& p, std::size_t laneIdx, const dl::TimeAxis& axis, int top, int height, bool labels);
    void paintSliceLabels(QPainter& p);  // after the flows, so no line strikes through a name
    void paintMark(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st);
    void paintMatches(QPainter& p, std::size_t laneIdx, const dl::TimeAxis& axis, int top);
    void paintLabels(QPainter& p, const QRect& r, int scrollY);
    void paintRuler(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st);
    void paintOverview(QPainter& p, const QRect& r, const dl::TimelineViewport& vp);
    void paintArrows(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st);
    void paintFlows(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st);
    void paintArrow(QPainter& p, QPointF s, QPointF e, const QPen& pen);
    void paintOrigins(QPainter& p, const QRect& r, const dl::TimeAxis& axis, int scrollY);
    void paintArea(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st);
    void paintMarker(QPainter& p, const QRect& r, const dl::TimeAxis& axis, quint32 op, int scrollY, QColor c);

    std::shared_ptr<const dl::TimelineData> m_data;
    const dl::DumpIndex* m_index = nullptr;
    const StatePalette* m_palette = &StatePalette::overflow();
    const StatePalette* m_paletteFor = nullptr;  // m_fills were derived from it
    StatePalette m_fills;                        // stateColor() of each state
    theme::ViewColors m_colors = theme::ViewColors::print();
    bool m_compact = false;
    bool m_foldable = false;
    std::set<int> m_collapsed;
    std::vector<int> m_laneY;         // top of each lane in content coordinates
    std::vector<bool> m_laneShown;    // false: its stage is folded
    std::vector<int> m_headerOfLane;  // index into m_headers, -1 in compact mode
    struct Header {
        int y, stage;
        std::size_t firstLane, lastLane;
    };
    std::vector<Header> m_headers;
    int m_contentHeight = 0;
    std::size_t m_lastDrawn = 0;
    std::size_t m_arrowsDrawn = 0;
    std::vector<SliceLabel> m_labels;
    QStringList m_rulerLabels;
    QString m_rulerRef;
    std::vector<dl::LodBucket> m_scratch;
    std::vector<quint32> m_originOps;                      // drawn with a marker so they stand out at any zoom
    std::vector<std::vector<std::uint32_t>> m_matchItems;  // per lane: matched item indices, ascending
    std::size_t m_matchCount = 0;
};

}  // namespace dlui

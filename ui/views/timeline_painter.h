#pragma once
// Paints a TimelineData (lanes grouped by stage, overview strip, ruler, chain arrows) for a given
// viewport. Draw cost is bounded by pixels, not ops: each lane draws level-of-detail buckets no
// wider than a pixel, merged into runs of equal state. Used by TimelineWidget and the benchmark.
#include <QPainter>
#include <QRect>
#include <memory>
#include <vector>

#include "core/index/dump_index.h"
#include "core/timeline/time_axis.h"
#include "core/timeline/timeline_data.h"
#include "core/timeline/timeline_viewport.h"
#include "ui/util/state_colors.h"

namespace dlui {

struct TimelinePaintState {
    quint32 selectedOp = 0xffffffffu;
    quint32 hoveredOp = 0xffffffffu;
    bool rangeActive = false;     // drag-select band in progress
    double rangeFrom = 0, rangeTo = 0;
    int scrollY = 0;
};

class TimelinePainter {
public:
    static constexpr int kLabelWidth = 96, kOverviewHeight = 30, kRulerHeight = 22;
    static constexpr int kLaneHeight = 24, kHeaderHeight = 18;

    void setData(std::shared_ptr<const dl::TimelineData> data, const dl::DumpIndex* index);
    const dl::TimelineData* data() const { return m_data.get(); }
    // Colours of the item states (overflow states by default; the compare view uses its own).
    void setPalette(const StatePalette* palette) { m_palette = palette; }
    const StatePalette& palette() const { return *m_palette; }
    // Compact: no stage header rows, the stage goes into the lane label (stacked timelines).
    // Takes effect with the next setData.
    void setCompact(bool compact) { m_compact = compact; }

    static QRect overviewRect(const QRect& r) { return {r.left() + kLabelWidth, r.top(), r.width() - kLabelWidth, kOverviewHeight}; }
    static QRect rulerRect(const QRect& r) { return {r.left() + kLabelWidth, r.top() + kOverviewHeight, r.width() - kLabelWidth, kRulerHeight}; }
    static QRect lanesRect(const QRect& r) {
        return QRect(r.left() + kLabelWidth, r.top() + kOverviewHeight + kRulerHeight, r.width() - kLabelWidth,
                     r.height() - kOverviewHeight - kRulerHeight);
    }
    static dl::TimeAxis axisFor(const QRect& r, const dl::TimelineViewport& vp) {
        const QRect l = lanesRect(r);
        return dl::TimeAxis(vp.from(), vp.to(), l.left(), l.width(), vp.origin());
    }
    int contentHeight() const { return m_contentHeight; }
    // Lane under widget y (lanes area, scroll applied); -1 on a header or outside.
    int laneAt(const QRect& r, int y, int scrollY) const;
    int laneCenterY(const QRect& r, int lane, int scrollY) const;
    // Buckets/items drawn in the last paint (for the benchmark and tests).
    std::size_t lastDrawn() const { return m_lastDrawn; }

    void paint(QPainter& p, const QRect& r, const dl::TimelineViewport& vp, const TimelinePaintState& st);

private:
    void paintLanes(QPainter& p, const QRect& r, const dl::TimeAxis& axis, const TimelinePaintState& st);
    void paintLane(QPainter& p, const dl::TimelineLane& lane, const dl::TimeAxis& axis, int top, int height, bool labels);
    void paintLabels(QPainter& p, const QRect& r, int scrollY);
    void paintRuler(QPainter& p, const QRect& r, const dl::TimeAxis& axis);
    void paintOverview(QPainter& p, const QRect& r, const dl::TimelineViewport& vp);
    void paintArrows(QPainter& p, const QRect& r, const dl::TimeAxis& axis, int scrollY);
    void paintOrigins(QPainter& p, const QRect& r, const dl::TimeAxis& axis, int scrollY);
    void paintMarker(QPainter& p, const QRect& r, const dl::TimeAxis& axis, quint32 op, int scrollY, QColor c, bool box);
    QString timeLabel(double rel, double step) const;

    std::shared_ptr<const dl::TimelineData> m_data;
    const dl::DumpIndex* m_index = nullptr;
    const StatePalette* m_palette = &StatePalette::overflow();
    bool m_compact = false;
    std::vector<int> m_laneY;            // top of each lane in content coordinates
    std::vector<std::pair<int, int>> m_headers;  // (y, stage)
    int m_contentHeight = 0;
    std::size_t m_lastDrawn = 0;
    std::vector<dl::LodBucket> m_scratch;
    std::vector<quint32> m_originOps;   // drawn with a marker so they stand out at any zoom
};

}  // namespace dlui

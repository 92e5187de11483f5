#include "ui/views/timeline/timeline_painter.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dlui {

void TimelinePainter::setData(std::shared_ptr<const dl::TimelineData> data, const dl::DumpIndex* index) {
    m_data = std::move(data);
    m_index = index;
    m_originOps.clear();
    m_matchItems.assign(m_data ? m_data->lanes.size() : 0, {});
    m_matchCount = 0;
    if (m_data)
        for (const auto& lane : m_data->lanes)
            for (const auto& it : lane.items)
                if (it.state == dl::OpState::Origin) m_originOps.push_back(it.op);
    relayout();
}

void TimelinePainter::relayout() {
    m_laneY.clear();
    m_laneShown.clear();
    m_headerOfLane.clear();
    m_headers.clear();
    int y = 0;
    int prevStage = -2;
    if (m_data)
        for (std::size_t i = 0; i < m_data->lanes.size(); ++i) {
            const auto& lane = m_data->lanes[i];
            if (!m_compact && (m_headers.empty() || lane.stage != prevStage)) {
                m_headers.push_back({y, lane.stage, i, i});
                y += kHeaderHeight;
                prevStage = lane.stage;
            }
            if (!m_compact) m_headers.back().lastLane = i;
            m_headerOfLane.push_back(m_compact ? -1 : static_cast<int>(m_headers.size()) - 1);
            const bool shown = m_compact || !isStageCollapsed(lane.stage);
            m_laneShown.push_back(shown);
            m_laneY.push_back(shown ? y : m_headers.back().y);
            if (shown) y += kLaneHeight;
        }
    m_contentHeight = y;
}

void TimelinePainter::setStageCollapsed(int stage, bool collapsed) {
    if (collapsed)
        m_collapsed.insert(stage);
    else
        m_collapsed.erase(stage);
    relayout();
}

int TimelinePainter::headerAt(const QRect& r, int y, int scrollY) const {
    const int cy = y - lanesRect(r).top() + scrollY;
    for (const Header& h : m_headers)
        if (cy >= h.y && cy < h.y + kHeaderHeight) return h.stage;
    return kNoHeader;
}

void TimelinePainter::setMatches(const std::vector<quint32>& ops) {
    m_matchItems.assign(m_data ? m_data->lanes.size() : 0, {});
    m_matchCount = 0;
    if (!m_data) return;
    for (quint32 op : ops) {
        std::size_t lane = 0, item = 0;
        if (!m_data->locate(op, lane, item)) continue;
        m_matchItems[lane].push_back(static_cast<std::uint32_t>(item));
        ++m_matchCount;
    }
    for (auto& v : m_matchItems) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    }
}

int TimelinePainter::laneAt(const QRect& r, int y, int scrollY) const {
    const int cy = y - lanesRect(r).top() + scrollY;
    for (std::size_t i = 0; i < m_laneY.size(); ++i) {
        if (!m_laneShown[i]) continue;
        if (cy >= m_laneY[i] && cy < m_laneY[i] + kLaneHeight) return static_cast<int>(i);
        if (m_laneY[i] > cy) break;
    }
    return -1;
}

int TimelinePainter::laneNear(const QRect& r, int y, int scrollY, bool down) const {
    const int cy = y - lanesRect(r).top() + scrollY;
    int best = -1;
    for (std::size_t i = 0; i < m_laneY.size(); ++i) {
        if (!m_laneShown[i]) continue;
        const int top = m_laneY[i], bottom = top + kLaneHeight;
        if (down && bottom > cy) return static_cast<int>(i);
        if (!down && top <= cy) best = static_cast<int>(i);
    }
    if (best < 0 && !down)
        for (std::size_t i = 0; i < m_laneY.size(); ++i)
            if (m_laneShown[i]) return static_cast<int>(i);
    if (down)
        for (std::size_t i = m_laneY.size(); i-- > 0;)
            if (m_laneShown[i]) return static_cast<int>(i);
    return best;
}

int TimelinePainter::laneCenterY(const QRect& r, int lane, int scrollY) const {
    const int h = m_laneShown[static_cast<std::size_t>(lane)] ? kLaneHeight : kHeaderHeight;
    return lanesRect(r).top() - scrollY + m_laneY[static_cast<std::size_t>(lane)] + h / 2;
}

QString TimelinePainter::timeText(double t, double step) const {
    if (!m_data) return {};
    if (m_data->base == dl::TimeBase::ExecutionOrder) return QStringLiteral("#%1").arg(std::llround(t));
    return QString::fromStdString(dl::formatTimeOffset(t, step));
}

}  // namespace dlui

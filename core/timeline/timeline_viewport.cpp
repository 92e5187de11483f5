#include "core/timeline/timeline_viewport.h"

#include <algorithm>
#include <tuple>

namespace dl {

void TimelineViewport::setFullRange(double from, double to) {
    if (!(to > from)) to = from + 1;
    m_fullFrom = from;
    m_fullTo = to;
    // Never zoom below a microsecond-ish unit, nor below 1e-9 of the range (double precision).
    m_minSpan = std::max(1.0, (to - from) * 1e-9);
    m_from = from;
    m_to = to;
    m_undo.clear();
}

void TimelineViewport::clamp() {
    double s = std::clamp(m_to - m_from, m_minSpan, m_fullTo - m_fullFrom);
    double a = std::clamp(m_from, m_fullFrom, m_fullTo - s);
    m_from = a;
    m_to = a + s;
}

void TimelineViewport::zoomAt(double anchor, double factor) {
    if (!(factor > 0)) return;
    const double newSpan = std::max(span() * factor, m_minSpan);
    const double rel = span() > 0 ? (anchor - m_from) / span() : 0.5;
    m_from = anchor - rel * newSpan;
    m_to = m_from + newSpan;
    clamp();
}

void TimelineViewport::pan(double dt) {
    m_from += dt;
    m_to += dt;
    clamp();
}

void TimelineViewport::zoomTo(double a, double b) {
    if (a > b) std::swap(a, b);
    m_undo.emplace_back(m_from, m_to);
    if (b - a < m_minSpan) {
        const double mid = (a + b) / 2;
        a = mid - m_minSpan / 2;
        b = mid + m_minSpan / 2;
    }
    m_from = a;
    m_to = b;
    clamp();
}

void TimelineViewport::setWindow(double a, double b) {
    if (a > b) std::swap(a, b);
    m_from = a;
    m_to = std::max(b, a + m_minSpan);
    clamp();
}

void TimelineViewport::fitAll() { zoomTo(m_fullFrom, m_fullTo); }

bool TimelineViewport::undo() {
    if (m_undo.empty()) return false;
    std::tie(m_from, m_to) = m_undo.back();
    m_undo.pop_back();
    clamp();
    return true;
}

}  // namespace dl

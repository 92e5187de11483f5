#include "core/timeline/timeline_viewport.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace dl {

void TimelineViewport::setDataRange(std::int64_t t0, std::int64_t t1) {
    setFullRange(0, t1 > t0 ? static_cast<double>(t1 - t0) : 1.0);
    m_origin = t0;
}

void TimelineViewport::setDataRange(std::int64_t t0, std::int64_t t1, double margin) {
    if (!(margin > 0) || !std::isfinite(margin)) return setDataRange(t0, t1);
    const double span = t1 > t0 ? static_cast<double>(t1 - t0) : 1.0;
    const double m = std::max(0.5, margin * span);
    setFullRange(-m, span + m);
    m_origin = t0;
}

void TimelineViewport::setFullRange(double from, double to) {
    if (!std::isfinite(from)) from = 0;
    if (!(to > from) || !std::isfinite(to)) to = from + 1;
    m_origin = 0;
    m_fullFrom = from;
    m_fullTo = to;
    // Never zoom below the resolution of the range's doubles either (huge absolute ranges).
    const double big = std::max(std::abs(from), std::abs(to));
    m_minSpan = std::min(std::max(kMinSpan, 1024 * (std::nextafter(big, INFINITY) - big)), to - from);
    m_from = from;
    m_to = to;
    m_undo.clear();
}

void TimelineViewport::clamp() {
    const double full = m_fullTo - m_fullFrom;
    double s = std::clamp(m_to - m_from, std::min(m_minSpan, full), full);
    double a = std::clamp(m_from, m_fullFrom, std::max(m_fullFrom, m_fullTo - s));
    m_from = a;
    m_to = a + s;
    // a + s - a may round below s (0.1 is not a binary fraction): never report less than the span.
    for (int i = 0; i < 4 && m_to - m_from < s; ++i) m_to = std::nextafter(m_to, INFINITY);
}

void TimelineViewport::zoomAt(double anchor, double factor) {
    if (!(factor > 0) || !std::isfinite(factor) || !std::isfinite(anchor)) return;
    const double newSpan = std::max(span() * factor, m_minSpan);
    const double rel = span() > 0 ? (anchor - m_from) / span() : 0.5;
    m_from = anchor - rel * newSpan;
    m_to = m_from + newSpan;
    clamp();
}

void TimelineViewport::pan(double dt) {
    if (!std::isfinite(dt)) return;
    m_from += dt;
    m_to += dt;
    clamp();
}

void TimelineViewport::zoomTo(double a, double b) {
    if (!std::isfinite(a) || !std::isfinite(b)) return;
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
    if (!std::isfinite(a) || !std::isfinite(b)) return;
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

#pragma once
// The visible time window of the timeline with zoom/pan/undo, clamped to the data range. Pure
// arithmetic (no Qt) so the interaction rules are unit-tested. Window times are relative to
// origin() (see time_axis.h: absolute epoch microseconds do not fit a double's resolution).
#include <cstdint>
#include <utility>
#include <vector>

namespace dl {

class TimelineViewport {
public:
    // Sets the data range [from, to] (relative to origin 0) and shows all of it; clears the undo stack.
    void setFullRange(double from, double to);
    // The data range of absolute integer times [t0, t1]: origin t0, window times 0 .. t1 - t0.
    void setDataRange(std::int64_t t0, std::int64_t t1);
    // The same with a margin of `margin` of the span (at least half a unit) before t0 and after t1,
    // so an op at either end can be centred and its marks are not cut at the edge.
    void setDataRange(std::int64_t t0, std::int64_t t1, double margin);
    std::int64_t origin() const { return m_origin; }
    double fullFrom() const { return m_fullFrom; }
    double fullTo() const { return m_fullTo; }
    double from() const { return m_from; }
    double to() const { return m_to; }
    double span() const { return m_to - m_from; }

    // factor < 1 zooms in, > 1 out; the time under `anchor` stays where it is. Not undoable
    // (wheel/keys zoom continuously); a range zoom is.
    void zoomAt(double anchor, double factor);
    void pan(double dt);
    // Shows [a, b] (ordered, clamped); pushes the current window on the undo stack.
    void zoomTo(double a, double b);
    void fitAll();
    // Shows [a, b] (ordered, clamped) without an undo entry: a follower of another viewport.
    void setWindow(double a, double b);
    bool undo();  // false when there is nothing to undo
    bool canUndo() const { return !m_undo.empty(); }
    double minSpan() const { return m_minSpan; }

private:
    void clamp();
    // Smallest window: a tenth of a time unit (1 ns per pixel on a 100-px timeline), never more
    // than the whole range.
    static constexpr double kMinSpan = 0.1;
    double m_fullFrom = 0, m_fullTo = 1, m_from = 0, m_to = 1, m_minSpan = kMinSpan;
    std::int64_t m_origin = 0;
    std::vector<std::pair<double, double>> m_undo;
};

}  // namespace dl

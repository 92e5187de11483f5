#pragma once
// The visible time window of the timeline with zoom/pan/undo, clamped to the data range. Pure
// arithmetic (no Qt) so the interaction rules are unit-tested.
#include <utility>
#include <vector>

namespace dl {

class TimelineViewport {
public:
    // Sets the data range and shows all of it; clears the undo stack.
    void setFullRange(double from, double to);
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
    bool undo();               // false when there is nothing to undo
    bool canUndo() const { return !m_undo.empty(); }
    double minSpan() const { return m_minSpan; }

private:
    void clamp();
    double m_fullFrom = 0, m_fullTo = 1, m_from = 0, m_to = 1, m_minSpan = 1;
    std::vector<std::pair<double, double>> m_undo;
};

}  // namespace dl

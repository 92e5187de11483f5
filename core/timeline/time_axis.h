#pragma once
// Pure time <-> pixel mapping for the timeline (kept out of paint code so it can be unit-tested).
namespace dl {

class TimeAxis {
public:
    TimeAxis() = default;
    // Maps the visible time window [from, to] onto pixels [x0, x0 + width].
    TimeAxis(double from, double to, double x0, double width)
        : m_from(from), m_to(to > from ? to : from + 1), m_x0(x0), m_width(width > 0 ? width : 1) {}

    double toX(double t) const { return m_x0 + (t - m_from) * m_width / (m_to - m_from); }
    double toTime(double x) const { return m_from + (x - m_x0) * (m_to - m_from) / m_width; }
    double timePerPixel() const { return (m_to - m_from) / m_width; }
    double from() const { return m_from; }
    double to() const { return m_to; }
    double x0() const { return m_x0; }
    double width() const { return m_width; }

private:
    double m_from = 0, m_to = 1, m_x0 = 0, m_width = 1;
};

// A "nice" tick step (1, 2 or 5 times a power of ten) so that ticks are at least minStep apart.
double niceTickStep(double minStep);

}  // namespace dl

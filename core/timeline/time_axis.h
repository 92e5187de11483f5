#pragma once
// Pure time <-> pixel mapping and ruler ticks for the timeline (kept out of paint code so they can be
// unit-tested). Times are doubles RELATIVE to an integer origin (the timeline's first timestamp):
// absolute epoch microseconds (~1.7e15) leave a double only a quarter-microsecond of resolution, so
// zooming in or stepping ticks on absolute values stalls. Item times (absolute int64) are mapped
// with xOf(), which subtracts the origin exactly in integers first.
#include <cstdint>
#include <string>

namespace dl {

class TimeAxis {
public:
    TimeAxis() = default;
    // Maps the visible window [from, to] (relative to `origin`) onto pixels [x0, x0 + width].
    // An empty or inverted window is widened to one unit, a width <= 0 to one pixel.
    TimeAxis(double from, double to, double x0, double width, std::int64_t origin = 0)
        : m_from(from), m_to(to > from ? to : from + 1), m_x0(x0), m_width(width > 0 ? width : 1), m_origin(origin) {}

    double toX(double rel) const { return m_x0 + (rel - m_from) * m_width / (m_to - m_from); }
    // x of an absolute item time (same time base as the origin).
    double xOf(std::int64_t t) const { return toX(static_cast<double>(t - m_origin)); }
    double toTime(double x) const { return m_from + (x - m_x0) * (m_to - m_from) / m_width; }  // relative
    double timePerPixel() const { return (m_to - m_from) / m_width; }
    double from() const { return m_from; }
    double to() const { return m_to; }
    double x0() const { return m_x0; }
    double width() const { return m_width; }
    std::int64_t origin() const { return m_origin; }

private:
    double m_from = 0, m_to = 1, m_x0 = 0, m_width = 1;
    std::int64_t m_origin = 0;
};

// A "nice" tick step (1, 2 or 5 times a power of ten) so that ticks are at least minStep apart.
// Returns 1 for a minStep that is not a positive finite number.
double niceTickStep(double minStep);

// Ruler ticks over a window of relative times: tick i is at first + i * step (computed by
// multiplication, never by accumulation), first is the first multiple of step >= from, and
// count <= maxTicks, so a tick loop always ends. count is 0 for a window that is not finite.
struct RulerTicks {
    double first = 0, step = 1;
    int count = 0;
    double at(int i) const { return first + i * step; }
};
RulerTicks rulerTicks(double from, double to, double minStep, int maxTicks = 256);

// A relative time in microseconds as "12.5 ms", "-3 µs", "250 ns", with just enough decimals to
// tell apart values `resolution` apart (the tick step; 0 = shortest exact-ish form).
std::string formatTimeOffset(double us, double resolution = 0);

// One unit and one precision for every label of a ruler, so "5.506608 s" never sits beside
// "5.50661 s": the unit from the largest magnitude the ruler writes, the decimals from its step.
struct TimeFormat {
    double scale = 1;  // microseconds per unit
    const char* unit = "µs";
    int decimals = 0;
};
TimeFormat timeFormatFor(double maxAbs, double step);
// `us` in that unit and precision, trailing zeros kept ("1.50 ms" beside "1.75 ms"); `sign` writes
// "+" before positive values (offsets from a reference).
std::string formatTime(double us, const TimeFormat& f, bool sign = false);

// A ruler of offsets from a reference time (the view's start, or a mark the user set): ticks at
// nice multiples of the step from the reference, labelled "+200 µs" etc. in one format.
// `integerSteps`: positions in an execution order, never a fractional step ("#0 #0 #1").
struct OffsetRuler {
    RulerTicks ticks;  // offsets from ref: tick i is at ref + ticks.at(i) (relative window time)
    double ref = 0;
    TimeFormat format;
    std::string label(int i) const;  // "+200 µs", "0", "−1.5 ms"
};
OffsetRuler offsetRuler(double from, double to, double ref, double minStep, bool integerSteps);

}  // namespace dl

// The timeline's pure maths: time <-> pixel mapping, ruler ticks and labels, viewport zoom/pan — at
// epoch-microsecond timestamps (1.7e15) and down to 1 ns per pixel, where absolute doubles lose
// their resolution. (The painter on such a timeline is tested in tests/ui/views/timeline/test_timeline_painter.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <tuple>

#include "core/timeline/time_axis.h"
#include "core/timeline/timeline_viewport.h"

namespace {

constexpr std::int64_t kEpoch = 1'700'000'000'300'963;  // µs, the timestamp of the reported freeze

// Checks the invariants every ruler must keep, returns the tick count (negative: which one broke).
int checkTicks(const dl::RulerTicks& t, double from, double to, double minStep, int maxTicks) {
    if (t.count < 0 || t.count > maxTicks) return -1;
    if (!(t.step > 0) || !(t.step >= minStep || t.count == 0)) return -2;
    for (int i = 0; i < t.count; ++i) {
        const double v = t.at(i);
        if (v < from - 1e-9 * std::abs(from) || v > to + 1e-9 * std::abs(to)) return -3;
        if (i > 0 && !(v > t.at(i - 1))) return -4;  // distinct, increasing: progress guaranteed
        const double k = v / t.step;
        if (std::abs(k - std::round(k)) > 1e-6 + 1e-12 * std::abs(k)) return -5;  // on multiples of the step
    }
    // No tick is missing: the next multiple after the last lies past `to` (unless capped).
    if (t.count > 0 && t.count < maxTicks && t.at(t.count) <= to) return -6;
    return t.count;
}

struct MappingCase {
    const char* name;
    double from, to, x0, width, time, x;
};

class TimeAxisMapping : public ::testing::TestWithParam<MappingCase> {};

TEST_P(TimeAxisMapping, MapsAndRoundTrips) {
    const MappingCase& c = GetParam();
    const dl::TimeAxis a(c.from, c.to, c.x0, c.width);
    EXPECT_LT(std::abs(a.toX(c.time) - c.x), 1e-6 * std::max(1.0, std::abs(c.x)));
    // Round trip within 1% of a pixel's worth of time.
    EXPECT_LE(std::abs(a.toTime(a.toX(c.time)) - c.time), 0.01 * a.timePerPixel() + 1e-9 * std::abs(c.time));
    EXPECT_DOUBLE_EQ(a.timePerPixel(), (c.to - c.from) / c.width);
}

INSTANTIATE_TEST_SUITE_P(Cases, TimeAxisMapping,
                         ::testing::Values(MappingCase{"left_edge", 0, 1000, 100, 500, 0, 100},
                                           MappingCase{"right_edge", 0, 1000, 100, 500, 1000, 600},
                                           MappingCase{"middle", 0, 1000, 100, 500, 500, 350},
                                           MappingCase{"left_of_view", 200, 300, 0, 1000, 100, -1000},
                                           MappingCase{"epoch_microseconds", 1.7e15, 1.7e15 + 2e6, 96, 1504,
                                                       1.7e15 + 1e6, 848},
                                           MappingCase{"sub_unit_zoom", 10, 11, 0, 1000, 10.25, 250}),
                         [](const auto& info) { return std::string(info.param.name); });

// Item times are absolute; xOf subtracts the origin exactly, so 1 ns per pixel at 1.7e15 µs works.
TEST(TimeAxis, EpochMappingAtNanosecondZoom) {
    const double width = 1000, rel = 3.6e9;  // an hour into the dump
    const dl::TimeAxis a(rel, rel + width * 1e-3, 96, width, kEpoch);
    EXPECT_DOUBLE_EQ(a.timePerPixel(), (width * 1e-3) / width);
    EXPECT_LT(std::abs(a.xOf(kEpoch + 3'600'000'000) - 96), 1e-3);
    EXPECT_LT(std::abs(a.xOf(kEpoch + 3'600'000'001) - (96 + 1000)), 1e-3);  // 1 µs = 1000 px
    EXPECT_LT(std::abs(a.toTime(596) - (rel + 0.5)), 1e-6);
    // The same window in absolute doubles cannot even tell the pixels apart.
    const double abs0 = static_cast<double>(kEpoch) + rel;
    EXPECT_GT(std::nextafter(abs0, INFINITY) - abs0, a.timePerPixel() * 100);
}

// 1 ns to 10 s per pixel in half decades, at three offsets from the origin and two widths.
std::vector<std::tuple<double, double, double>> rulerCases() {
    std::vector<std::tuple<double, double, double>> out;
    for (double tpp = 1e-3; tpp <= 1e7; tpp *= 3.1623)
        for (double off : {0.0, 123.456, 3.6e9})
            for (double w : {137.0, 1504.0}) out.emplace_back(tpp, off, w);
    return out;
}

class RulerAtEveryZoom : public ::testing::TestWithParam<std::tuple<double, double, double>> {};

TEST_P(RulerAtEveryZoom, TicksAreSpacedAndLabelsDistinct) {
    const auto [usPerPixel, offset, width] = GetParam();
    const dl::TimeAxis a(offset, offset + usPerPixel * width, 96, width, kEpoch);
    const double minStep = a.timePerPixel() * 90;
    const dl::RulerTicks t = dl::rulerTicks(a.from(), a.to(), minStep);
    const int n = checkTicks(t, a.from(), a.to(), minStep, 256);
    ASSERT_GE(n, 0) << "invariant " << n;
    // At most one tick per 90 px, and the nice step is below 2.5x the minimum (1-2-5 series), so
    // a window wider than 2.5 x 90 px shows at least one tick.
    EXPECT_LE(n, static_cast<int>(width / 90) + 1);
    EXPECT_LT(t.step, 2.5 * minStep * (1 + 1e-12));
    if (width >= 2.5 * 90) {
        EXPECT_GE(n, 1);
    }
    for (int i = 1; i < n; ++i) EXPECT_GE(a.toX(t.at(i)) - a.toX(t.at(i - 1)), 90 - 1e-6);
    // Neighbouring labels differ (enough decimals for the step) and none shows an epoch value.
    std::set<std::string> labels;
    for (int i = 0; i < n; ++i) {
        const std::string l = dl::formatTimeOffset(t.at(i), t.step);
        EXPECT_TRUE(labels.insert(l).second) << l;
        EXPECT_EQ(l.find("1700000"), std::string::npos) << l;
    }
}

INSTANTIATE_TEST_SUITE_P(HalfDecades, RulerAtEveryZoom, ::testing::ValuesIn(rulerCases()));

// The reported freeze: a step below the resolution of an absolute timestamp. Even fed absolute
// values the ruler terminates with distinct ticks.
TEST(Ruler, OnAbsoluteTimestamps) {
    const double from = static_cast<double>(kEpoch), to = from + 1;
    EXPECT_GE(checkTicks(dl::rulerTicks(from, to, 1.0 / 1500 * 90), from, to, 0, 256), 0);
    const double big = 1e300;
    EXPECT_GE(checkTicks(dl::rulerTicks(big, big * 1.0000001, 1e-9), big, big * 1.0000001, 0, 256), 0);
}

TEST(Ruler, Degenerate) {
    EXPECT_EQ(dl::rulerTicks(NAN, 1, 1).count, 0);
    EXPECT_EQ(dl::rulerTicks(0, INFINITY, 1).count, 0);
    EXPECT_EQ(dl::rulerTicks(0, 1, 1, 0).count, 0);
    // Zero span (every op at one timestamp): at most the one tick on it.
    const dl::RulerTicks z = dl::rulerTicks(5, 5, 0);
    EXPECT_TRUE(z.count <= 1 && z.step > 0);
    // A minimum step of 0, NaN or far too small never yields more than maxTicks.
    for (double m : {0.0, -1.0, static_cast<double>(NAN), 1e-300})
        EXPECT_EQ(checkTicks(dl::rulerTicks(0, 1e9, m, 100), 0, 1e9, 0, 100), 100) << m;
    const dl::RulerTicks inv = dl::rulerTicks(10, 0, 1);  // inverted window is ordered
    EXPECT_EQ(checkTicks(inv, 0, 10, 1, 256), 11);
}

TEST(Ruler, Labels) {
    const struct {
        double us, step;
        const char* text;
    } cases[] = {
        {0.0, 1.0, "0 µs"},
        {1500.0, 100.0, "1.5 ms"},
        {123456.7, 0.1, "123.4567 ms"},
        {3.6e9 + 0.001, 0.001, "3600.000000001 s"},
        {-3.0, 1.0, "-3 µs"},
        {0.25, 0.05, "250 ns"},
        {2.5, 0.0, "2.5 µs"},
        {-1e-12, 1.0, "0 µs"},
    };
    for (const auto& c : cases) EXPECT_EQ(dl::formatTimeOffset(c.us, c.step), c.text) << c.us << " step " << c.step;
}

// A dump whose ops all share one epoch timestamp (overflow-only: 1-2 kernels written).
// Offsets from the view start: one unit and one precision per ruler, ticks on nice multiples of
// the step from the reference, whole steps in an execution order.
TEST(OffsetRuler, OnePrecisionPerRuler) {
    // A view 5.5066 s .. 5.5086 s into the run: ticks every few hundred µs from its start.
    const double from = 5506608, to = 5508608;
    const dl::OffsetRuler r = dl::offsetRuler(from, to, from, 300, false);
    ASSERT_GT(r.ticks.count, 3);
    EXPECT_DOUBLE_EQ(r.ticks.at(0), 0.0);  // the first tick is the reference itself
    std::set<std::size_t> decimals;
    std::set<std::string> units;
    for (int i = 0; i < r.ticks.count; ++i) {
        const std::string l = r.label(i);
        if (i == 0) {
            EXPECT_EQ(l, "0");
            continue;
        }
        EXPECT_EQ(l[0], '+') << l;
        const std::size_t sp = l.find(' ');
        ASSERT_NE(sp, std::string::npos) << l;
        units.insert(l.substr(sp + 1));
        const std::size_t dot = l.find('.');
        decimals.insert(dot == std::string::npos || dot > sp ? 0 : sp - dot - 1);
        // The label is the tick's offset, to its precision.
        const double v = std::stod(l.substr(1, sp - 1)) * r.format.scale;
        EXPECT_NEAR(v, r.ticks.at(i), r.ticks.step / 100) << l;
    }
    EXPECT_EQ(units.size(), 1u);
    EXPECT_EQ(decimals.size(), 1u);
    // Labels across a unit boundary keep one unit: 0 .. 1.2 ms in steps of 200 µs reads in ms.
    const dl::OffsetRuler m = dl::offsetRuler(0, 1200, 0, 190, false);
    for (int i = 1; i < m.ticks.count; ++i) EXPECT_NE(m.label(i).find(" ms"), std::string::npos) << m.label(i);
    EXPECT_EQ(m.label(1), "+0.2 ms");
    // Before a mark: negative offsets with the same format.
    const dl::OffsetRuler k = dl::offsetRuler(0, 1000, 500, 100, false);
    EXPECT_EQ(k.label(0), "-500 µs");
    EXPECT_EQ(k.label(k.ticks.count - 1), "+500 µs");
}

TEST(OffsetRuler, ExecutionOrderHasWholeSteps) {
    // Zoomed to three positions over 900 px: no "#0 #0 #0 #1" from fractional steps.
    const dl::OffsetRuler r = dl::offsetRuler(10, 13, 10, 3.0 / 10, true);
    ASSERT_GT(r.ticks.count, 0);
    EXPECT_GE(r.ticks.step, 1.0);
    std::set<std::string> seen;
    for (int i = 0; i < r.ticks.count; ++i) EXPECT_TRUE(seen.insert(r.label(i)).second) << r.label(i);
    EXPECT_EQ(r.label(1), "+1");
}

TEST(TimelineViewport, ZeroSpanAtEpoch) {
    dl::TimelineViewport v;
    v.setDataRange(kEpoch, kEpoch);  // t1 == t0 is widened to one unit
    EXPECT_EQ(v.origin(), kEpoch);
    EXPECT_DOUBLE_EQ(v.fullFrom(), 0.0);
    EXPECT_DOUBLE_EQ(v.fullTo(), 1.0);
    for (int i = 0; i < 200; ++i) v.zoomAt(0.5, 0.5);
    EXPECT_TRUE(v.span() >= v.minSpan() && v.span() > 0);
    EXPECT_LE(v.span() / 100, 1e-3 * (1 + 1e-9));  // 1 ns per pixel reachable on 100 px
    v.pan(1e18);
    EXPECT_DOUBLE_EQ(v.to(), 1.0);
    v.setWindow(NAN, 3);  // ignored, never poisons the window
    EXPECT_TRUE(std::isfinite(v.from()) && std::isfinite(v.to()));
    v.setFullRange(0, 0.01);  // a range below the minimum span still clamps
    v.zoomAt(0.005, 0.1);
    EXPECT_TRUE(v.span() > 0 && v.span() <= 0.01);
}

TEST(TimeAxis, Degenerate) {
    const dl::TimeAxis a(5, 5, 0, 0);  // empty range and width are widened, never divide by zero
    EXPECT_TRUE(std::isfinite(a.toX(6)));
    EXPECT_TRUE(std::isfinite(a.toTime(3)));
}

TEST(TimelineViewport, Zoom) {
    const struct {
        const char* name;
        double anchor, factor, from, to;
    } cases[] = {
        {"zoom in at centre", 500, 0.5, 250, 750},
        {"zoom in at left edge", 0, 0.1, 0, 100},
        {"zoom in at right edge", 1000, 0.25, 750, 1000},
        {"zoom out clamps", 300, 10, 0, 1000},
    };
    for (const auto& c : cases) {
        dl::TimelineViewport v;
        v.setFullRange(0, 1000);
        v.zoomAt(c.anchor, c.factor);
        EXPECT_DOUBLE_EQ(v.from(), c.from) << c.name;
        EXPECT_DOUBLE_EQ(v.to(), c.to) << c.name;
    }
}

TEST(TimelineViewport, AnchorStaysUnderCursor) {
    dl::TimelineViewport v;
    v.setFullRange(0, 1e6);
    v.zoomTo(2e5, 6e5);
    const dl::TimeAxis before(v.from(), v.to(), 96, 1000);
    const double x = 400;
    const double t = before.toTime(x);
    v.zoomAt(t, 0.8);
    const dl::TimeAxis after(v.from(), v.to(), 96, 1000);
    EXPECT_LT(std::abs(after.toX(t) - x), 1e-6);
}

}  // namespace

// With a margin the data's first and last times can be centred (an origin at the very end of an
// iteration was half cut at the right edge); the origin stays t0 so item times map exactly.
TEST(TimelineViewport, DataRangeWithMargin) {
    dl::TimelineViewport vp;
    vp.setDataRange(1'700'000'000'000'000, 1'700'000'000'200'000, 0.05);
    EXPECT_EQ(vp.origin(), 1'700'000'000'000'000);
    EXPECT_DOUBLE_EQ(vp.fullFrom(), -10000.0);
    EXPECT_DOUBLE_EQ(vp.fullTo(), 210000.0);
    vp.zoomTo(199000, 201000);  // centred on the last time
    EXPECT_DOUBLE_EQ((vp.from() + vp.to()) / 2, 200000.0);
    // A single time: half a unit either side at least.
    vp.setDataRange(5, 5, 0.05);
    EXPECT_DOUBLE_EQ(vp.fullFrom(), -0.5);
    EXPECT_DOUBLE_EQ(vp.fullTo(), 1.5);
}

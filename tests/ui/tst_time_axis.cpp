// Data-driven tests of the timeline's pure maths: time <-> pixel mapping, ruler ticks and labels,
// viewport zoom/pan — at epoch-microsecond timestamps (1.7e15) and down to 1 ns per pixel, where
// absolute doubles lose their resolution — plus the painter on such a timeline.
#include <QImage>
#include <QPainter>
#include <QTest>
#include <cmath>
#include <set>

#include "core/timeline/time_axis.h"
#include "core/timeline/timeline_data.h"
#include "core/timeline/timeline_viewport.h"
#include "ui/views/timeline_painter.h"

namespace {
constexpr std::int64_t kEpoch = 1'700'000'000'300'963;   // µs, the timestamp of the reported freeze

// Checks the invariants every ruler must keep, returns the tick count.
int checkTicks(const dl::RulerTicks& t, double from, double to, double minStep, int maxTicks) {
    if (t.count < 0 || t.count > maxTicks) return -1;
    if (!(t.step > 0) || !(t.step >= minStep || t.count == 0)) return -2;
    for (int i = 0; i < t.count; ++i) {
        const double v = t.at(i);
        if (v < from - 1e-9 * std::abs(from) || v > to + 1e-9 * std::abs(to)) return -3;
        if (i > 0 && !(v > t.at(i - 1))) return -4;       // distinct, increasing: progress guaranteed
        const double k = v / t.step;
        if (std::abs(k - std::round(k)) > 1e-6 + 1e-12 * std::abs(k)) return -5;  // on multiples of the step
    }
    // No tick is missing: the next multiple after the last lies past `to` (unless capped).
    if (t.count > 0 && t.count < maxTicks && t.at(t.count) <= to) return -6;
    return t.count;
}
}  // namespace

class TstTimeAxis : public QObject {
    Q_OBJECT
private slots:
    void mapping_data() {
        QTest::addColumn<double>("from");
        QTest::addColumn<double>("to");
        QTest::addColumn<double>("x0");
        QTest::addColumn<double>("width");
        QTest::addColumn<double>("time");
        QTest::addColumn<double>("x");
        QTest::newRow("left edge") << 0.0 << 1000.0 << 100.0 << 500.0 << 0.0 << 100.0;
        QTest::newRow("right edge") << 0.0 << 1000.0 << 100.0 << 500.0 << 1000.0 << 600.0;
        QTest::newRow("middle") << 0.0 << 1000.0 << 100.0 << 500.0 << 500.0 << 350.0;
        QTest::newRow("left of view") << 200.0 << 300.0 << 0.0 << 1000.0 << 100.0 << -1000.0;
        QTest::newRow("epoch microseconds") << 1.7e15 << 1.7e15 + 2e6 << 96.0 << 1504.0 << 1.7e15 + 1e6 << 848.0;
        QTest::newRow("sub-unit zoom") << 10.0 << 11.0 << 0.0 << 1000.0 << 10.25 << 250.0;
    }
    void mapping() {
        QFETCH(double, from);
        QFETCH(double, to);
        QFETCH(double, x0);
        QFETCH(double, width);
        QFETCH(double, time);
        QFETCH(double, x);
        const dl::TimeAxis a(from, to, x0, width);
        QVERIFY(std::abs(a.toX(time) - x) < 1e-6 * std::max(1.0, std::abs(x)));
        // Round trip within 1% of a pixel's worth of time.
        QVERIFY(std::abs(a.toTime(a.toX(time)) - time) <= 0.01 * a.timePerPixel() + 1e-9 * std::abs(time));
        QCOMPARE(a.timePerPixel(), (to - from) / width);
    }
    // Item times are absolute; xOf subtracts the origin exactly, so 1 ns per pixel at 1.7e15 µs works.
    void epochMappingAtNanosecondZoom() {
        const double width = 1000, rel = 3.6e9;   // an hour into the dump
        const dl::TimeAxis a(rel, rel + width * 1e-3, 96, width, kEpoch);
        QCOMPARE(a.timePerPixel(), (width * 1e-3) / width);
        QVERIFY(std::abs(a.xOf(kEpoch + 3'600'000'000) - 96) < 1e-3);
        QVERIFY(std::abs(a.xOf(kEpoch + 3'600'000'001) - (96 + 1000)) < 1e-3);   // 1 µs = 1000 px
        QVERIFY(std::abs(a.toTime(596) - (rel + 0.5)) < 1e-6);
        // The same window in absolute doubles cannot even tell the pixels apart.
        const double abs0 = static_cast<double>(kEpoch) + rel;
        QVERIFY(std::nextafter(abs0, INFINITY) - abs0 > a.timePerPixel() * 100);
    }
    void rulerAtEveryZoom_data() {
        QTest::addColumn<double>("usPerPixel");
        QTest::addColumn<double>("offset");   // window start relative to the origin
        QTest::addColumn<double>("width");
        for (double tpp = 1e-3; tpp <= 1e7; tpp *= 3.1623)     // 1 ns to 10 s per pixel, half decades
            for (double off : {0.0, 123.456, 3.6e9})
                for (double w : {137.0, 1504.0})
                    QTest::newRow(qPrintable(QStringLiteral("%1 us/px @%2 w%3").arg(tpp).arg(off).arg(w))) << tpp << off << w;
    }
    void rulerAtEveryZoom() {
        QFETCH(double, usPerPixel);
        QFETCH(double, offset);
        QFETCH(double, width);
        const dl::TimeAxis a(offset, offset + usPerPixel * width, 96, width, kEpoch);
        const double minStep = a.timePerPixel() * 90;
        const dl::RulerTicks t = dl::rulerTicks(a.from(), a.to(), minStep);
        const int n = checkTicks(t, a.from(), a.to(), minStep, 256);
        QVERIFY2(n >= 0, qPrintable(QStringLiteral("invariant %1").arg(n)));
        // At most one tick per 90 px, and the nice step is below 2.5x the minimum (1-2-5 series), so
        // a window wider than 2.5 x 90 px shows at least one tick.
        QVERIFY(n <= static_cast<int>(width / 90) + 1);
        QVERIFY(t.step < 2.5 * minStep * (1 + 1e-12));
        if (width >= 2.5 * 90) QVERIFY(n >= 1);
        for (int i = 1; i < n; ++i) QVERIFY(a.toX(t.at(i)) - a.toX(t.at(i - 1)) >= 90 - 1e-6);
        // Neighbouring labels differ (enough decimals for the step) and none shows an epoch value.
        std::set<std::string> labels;
        for (int i = 0; i < n; ++i) {
            const std::string l = dl::formatTimeOffset(t.at(i), t.step);
            QVERIFY2(labels.insert(l).second, l.c_str());
            QVERIFY(l.find("1700000") == std::string::npos);
        }
    }
    // The reported freeze: a step below the resolution of an absolute timestamp. Even fed absolute
    // values the ruler terminates with distinct ticks.
    void rulerOnAbsoluteTimestamps() {
        const double from = static_cast<double>(kEpoch), to = from + 1;
        const dl::RulerTicks t = dl::rulerTicks(from, to, 1.0 / 1500 * 90);
        QVERIFY(checkTicks(t, from, to, 0, 256) >= 0);
        const double big = 1e300;
        QVERIFY(checkTicks(dl::rulerTicks(big, big * 1.0000001, 1e-9), big, big * 1.0000001, 0, 256) >= 0);
    }
    void rulerDegenerate() {
        QCOMPARE(dl::rulerTicks(NAN, 1, 1).count, 0);
        QCOMPARE(dl::rulerTicks(0, INFINITY, 1).count, 0);
        QCOMPARE(dl::rulerTicks(0, 1, 1, 0).count, 0);
        // Zero span (every op at one timestamp): at most the one tick on it.
        const dl::RulerTicks z = dl::rulerTicks(5, 5, 0);
        QVERIFY(z.count <= 1 && z.step > 0);
        // A minimum step of 0, NaN or far too small never yields more than maxTicks.
        for (double m : {0.0, -1.0, static_cast<double>(NAN), 1e-300})
            QVERIFY(checkTicks(dl::rulerTicks(0, 1e9, m, 100), 0, 1e9, 0, 100) == 100);
        const dl::RulerTicks inv = dl::rulerTicks(10, 0, 1);   // inverted window is ordered
        QVERIFY(checkTicks(inv, 0, 10, 1, 256) == 11);
    }
    void labels_data() {
        QTest::addColumn<double>("us");
        QTest::addColumn<double>("step");
        QTest::addColumn<QString>("text");
        QTest::newRow("zero") << 0.0 << 1.0 << "0 µs";
        QTest::newRow("ms") << 1500.0 << 100.0 << "1.5 ms";
        QTest::newRow("ms fine") << 123456.7 << 0.1 << "123.4567 ms";
        QTest::newRow("s at ns step") << 3.6e9 + 0.001 << 0.001 << "3600.000000001 s";
        QTest::newRow("negative") << -3.0 << 1.0 << "-3 µs";
        QTest::newRow("ns") << 0.25 << 0.05 << "250 ns";
        QTest::newRow("no step") << 2.5 << 0.0 << "2.5 µs";
        QTest::newRow("rounds to zero") << -1e-12 << 1.0 << "0 µs";
    }
    void labels() {
        QFETCH(double, us);
        QFETCH(double, step);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(dl::formatTimeOffset(us, step)), text);
    }
    // A dump whose ops all share one epoch timestamp (overflow-only: 1-2 kernels written).
    void viewportZeroSpanAtEpoch() {
        dl::TimelineViewport v;
        v.setDataRange(kEpoch, kEpoch);   // t1 == t0 is widened to one unit
        QCOMPARE(v.origin(), kEpoch);
        QCOMPARE(v.fullFrom(), 0.0);
        QCOMPARE(v.fullTo(), 1.0);
        for (int i = 0; i < 200; ++i) v.zoomAt(0.5, 0.5);
        QVERIFY(v.span() >= v.minSpan() && v.span() > 0);
        QVERIFY(v.span() / 100 <= 1e-3 * (1 + 1e-9));  // 1 ns per pixel reachable on 100 px
        v.pan(1e18);
        QCOMPARE(v.to(), 1.0);
        v.setWindow(NAN, 3);                          // ignored, never poisons the window
        QVERIFY(std::isfinite(v.from()) && std::isfinite(v.to()));
        v.setFullRange(0, 0.01);                      // a range below the minimum span still clamps
        v.zoomAt(0.005, 0.1);
        QVERIFY(v.span() > 0 && v.span() <= 0.01);
    }
    // The painter on epoch timestamps, from the whole range down to 1 ns per pixel: it ends, draws
    // the ops, and labels the ruler relative to the start.
    void painterAtEpoch_data() {
        QTest::addColumn<int>("ops");
        QTest::addColumn<qint64>("gap");
        QTest::newRow("one op") << 1 << qint64(0);
        QTest::newRow("two ops same time") << 2 << qint64(0);
        QTest::newRow("ops 1 us apart") << 50 << qint64(1);
        QTest::newRow("ops 1 s apart") << 50 << qint64(1'000'000);
    }
    void painterAtEpoch() {
        QFETCH(int, ops);
        QFETCH(qint64, gap);
        auto d = std::make_shared<dl::TimelineData>();
        dl::TimelineLane lane;
        for (int i = 0; i < ops; ++i)
            lane.items.push_back({std::int64_t(kEpoch + i * gap), std::int64_t(kEpoch + i * gap), static_cast<std::uint32_t>(i), dl::OpState::InfNan});
        d->t0 = kEpoch;
        d->t1 = std::max<std::int64_t>(kEpoch + (ops - 1) * gap, kEpoch + 1);
        lane.lod.build(lane.items, d->t0, d->t1);
        d->where.resize(ops);
        for (int i = 0; i < ops; ++i) d->where[i] = static_cast<std::uint64_t>(i);
        d->lanes.push_back(std::move(lane));
        d->opsShown = ops;
        dlui::TimelinePainter painter;
        painter.setData(d, nullptr);
        dl::TimelineViewport vp;
        vp.setDataRange(d->t0, d->t1);
        QImage img(1200, 200, QImage::Format_ARGB32_Premultiplied);
        const QRect r = img.rect();
        const double width = dlui::TimelinePainter::lanesRect(r).width();
        for (int zoom = 0; zoom < 80 && vp.span() / width > 1e-3 * 0.5; ++zoom) {
            QPainter p(&img);
            dlui::TimelinePaintState st;
            st.selectedOp = 0;
            painter.paint(p, r, vp, st);
            p.end();
            if (vp.from() <= 0 && vp.to() >= 0) QVERIFY(painter.lastDrawn() > 0);
            vp.zoomAt(0, 0.5);   // towards the first op
        }
        QVERIFY(vp.span() / width <= 1e-3 + 1e-12 || vp.span() <= vp.minSpan());
        // The first op stays on screen at the deepest zoom, at the left edge of the lanes.
        const dl::TimeAxis axis = dlui::TimelinePainter::axisFor(r, vp);
        QVERIFY(std::abs(axis.xOf(kEpoch) - dlui::TimelinePainter::lanesRect(r).left()) < 1e-6);
    }
    void degenerate() {
        const dl::TimeAxis a(5, 5, 0, 0);   // empty range and width are widened, never divide by zero
        QVERIFY(std::isfinite(a.toX(6)));
        QVERIFY(std::isfinite(a.toTime(3)));
    }
    void zoom_data() {
        QTest::addColumn<double>("anchor");
        QTest::addColumn<double>("factor");
        QTest::addColumn<double>("from");
        QTest::addColumn<double>("to");
        QTest::newRow("zoom in at centre") << 500.0 << 0.5 << 250.0 << 750.0;
        QTest::newRow("zoom in at left edge") << 0.0 << 0.1 << 0.0 << 100.0;
        QTest::newRow("zoom in at right edge") << 1000.0 << 0.25 << 750.0 << 1000.0;
        QTest::newRow("zoom out clamps") << 300.0 << 10.0 << 0.0 << 1000.0;
    }
    void zoom() {
        QFETCH(double, anchor);
        QFETCH(double, factor);
        QFETCH(double, from);
        QFETCH(double, to);
        dl::TimelineViewport v;
        v.setFullRange(0, 1000);
        v.zoomAt(anchor, factor);
        QCOMPARE(v.from(), from);
        QCOMPARE(v.to(), to);
    }
    void anchorStaysUnderCursor() {
        dl::TimelineViewport v;
        v.setFullRange(0, 1e6);
        v.zoomTo(2e5, 6e5);
        const dl::TimeAxis before(v.from(), v.to(), 96, 1000);
        const double x = 400;
        const double t = before.toTime(x);
        v.zoomAt(t, 0.8);
        const dl::TimeAxis after(v.from(), v.to(), 96, 1000);
        QVERIFY(std::abs(after.toX(t) - x) < 1e-6);
    }
};

QTEST_MAIN(TstTimeAxis)
#include "tst_time_axis.moc"

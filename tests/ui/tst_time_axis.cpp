// Data-driven tests of the timeline's pure maths: time <-> pixel mapping and viewport zoom/pan.
#include <QTest>

#include "core/timeline/time_axis.h"
#include "core/timeline/timeline_viewport.h"

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

QTEST_GUILESS_MAIN(TstTimeAxis)
#include "tst_time_axis.moc"

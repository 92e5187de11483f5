// The timeline painter on epoch-microsecond timestamps, from the whole range down to 1 ns per
// pixel. The axis, ruler and viewport maths it relies on are tested without Qt in
// tests/core/timeline/test_time_axis.cpp (so the sanitizer runs include them).
#include <QImage>
#include <QPainter>
#include <QTest>
#include <cmath>

#include "core/timeline/time_axis.h"
#include "core/timeline/timeline_data.h"
#include "core/timeline/timeline_viewport.h"
#include "ui/views/timeline/timeline_painter.h"

namespace {
constexpr std::int64_t kEpoch = 1'700'000'000'300'963;  // µs, the timestamp of the reported freeze
}  // namespace

class TstTimelinePainter : public QObject {
    Q_OBJECT
private slots:
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
            lane.items.push_back({std::int64_t(kEpoch + i * gap), std::int64_t(kEpoch + i * gap),
                                  static_cast<std::uint32_t>(i), dl::OpState::InfNan});
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
            vp.zoomAt(0, 0.5);  // towards the first op
        }
        QVERIFY(vp.span() / width <= 1e-3 + 1e-12 || vp.span() <= vp.minSpan());
        // The first op stays on screen at the deepest zoom, at the left edge of the lanes.
        const dl::TimeAxis axis = dlui::TimelinePainter::axisFor(r, vp);
        QVERIFY(std::abs(axis.xOf(kEpoch) - dlui::TimelinePainter::lanesRect(r).left()) < 1e-6);
    }

    // A tick at the ruler's right end keeps its label inside the ruler (the PDF report's excerpt
    // drew "1 µs" past the page's text edge): nothing is painted right of the given rect, and
    // the labels still say where the ticks are.
    void rulerLabelsStayInside() {
        auto d = std::make_shared<dl::TimelineData>();
        dl::TimelineLane lane;
        for (int i = 0; i < 2; ++i)
            lane.items.push_back({std::int64_t(kEpoch + i * 1000), std::int64_t(kEpoch + i * 1000),
                                  static_cast<std::uint32_t>(i), dl::OpState::Normal});
        d->t0 = kEpoch;
        d->t1 = kEpoch + 1000;
        lane.lod.build(lane.items, d->t0, d->t1);
        d->where = {0, 1};
        d->lanes.push_back(std::move(lane));
        d->opsShown = 2;
        dlui::TimelinePainter painter;
        painter.setData(d, nullptr);
        dl::TimelineViewport vp;
        vp.setDataRange(d->t0, d->t1);
        for (int width : {400, 517, 640, 803, 1000}) {
            QImage img(width + 60, 120, QImage::Format_ARGB32_Premultiplied);
            img.fill(Qt::white);
            const QRect r(0, 0, width, 120);
            QPainter p(&img);
            painter.paint(p, r, vp, dlui::TimelinePaintState{});
            p.end();
            const QRect ruler = dlui::TimelinePainter::rulerRect(r);
            int inked = 0;
            for (int y = ruler.top(); y <= ruler.bottom(); ++y) {
                for (int x = r.right() + 1; x < img.width(); ++x)
                    QVERIFY2(img.pixel(x, y) == qRgb(255, 255, 255),
                             qPrintable(QStringLiteral("width %1: ink at x %2 y %3").arg(width).arg(x).arg(y)));
                for (int x = ruler.left() + 40; x <= ruler.right(); ++x) inked += qGray(img.pixel(x, y)) < 128;
            }
            QVERIFY2(inked > 20, qPrintable(QStringLiteral("width %1: no tick labels").arg(width)));
        }
    }
};

QTEST_MAIN(TstTimelinePainter)
#include "test_timeline_painter.moc"

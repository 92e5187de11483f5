// The timeline on the bundled demo (opened once for the suite), what its lanes draw: chain arrows
// for the selection only, slices up to the next op, their names or counts at every zoom, relative
// tooltip times, folded stages, and the dark palette's contrast.
#include <QApplication>
#include <QDockWidget>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

#include "core/timeline/time_axis.h"
#include "tests/ui/rendered_pixels.h"
#include "tests/ui/views/timeline/timeline_demo_window.h"
#include "ui/main_window.h"
#include "ui/style/op_names.h"
#include "ui/style/theme.h"
#include "ui/views/op_context_menu.h"

using namespace dlui;

class TstTimelineLanes : public TimelineDemoSuite {
    Q_OBJECT
private slots:
    // Chain hops and flows are drawn for the selection only (as Perfetto does): none with nothing
    // selected, the origin's own hop with the origin selected.
    void chainArrowsOnlyForTheSelection() {
        const quint32 origin = m_w->session()->analysis()->firstOverflow->op;
        const dl::TimelineData* d = m_tw->timeline();
        QVERIFY(std::any_of(d->arrows.begin(), d->arrows.end(),
                            [&](const dl::TimelineArrow& a) { return a.fromOp == origin; }));
        const std::size_t hops = std::count_if(d->arrows.begin(), d->arrows.end(), [&](const dl::TimelineArrow& a) {
            return a.fromOp == origin || a.toOp == origin;
        });
        QVERIFY(hops > 0);
        QImage img(m_tw->size(), QImage::Format_ARGB32);
        m_w->session()->select(origin);
        m_tw->fitAll();  // the hop from the origin and where it lands, both in view
        m_tw->render(&img);
        QCOMPARE(m_tw->painter().lastArrowsDrawn(), hops);
        m_w->session()->clearSelection();
        m_tw->render(&img);
        QCOMPARE(m_tw->painter().lastArrowsDrawn(), std::size_t(0));
        // An op on no hop: none drawn either.
        for (const auto& lane : d->lanes)
            for (const auto& it : lane.items)
                if (std::none_of(d->arrows.begin(), d->arrows.end(),
                                 [&](const dl::TimelineArrow& a) { return a.fromOp == it.op || a.toOp == it.op; })) {
                    m_w->session()->select(it.op);
                    m_tw->render(&img);
                    QCOMPARE(m_tw->painter().lastArrowsDrawn(), std::size_t(0));
                    m_w->session()->select(origin);
                    return;
                }
    }

    void slicesRunToTheNextOpOfTheLane() {
        const dl::TimelineData* d = m_tw->timeline();
        QVERIFY(d->base == dl::TimeBase::Timestamps);
        QVERIFY(d->anyInferredEnd);  // the demo writes start times only
        std::size_t sliced = 0;
        for (const auto& lane : d->lanes)
            for (std::size_t k = 0; k + 1 < lane.items.size(); ++k) {
                const auto& it = lane.items[k];
                const auto& next = lane.items[k + 1];
                QVERIFY(it.inferredEnd);
                if (m_ix->ops[it.op].iteration != m_ix->ops[next.op].iteration) continue;
                QVERIFY(it.end <= next.start);  // never over the next op
                if (!it.endCapped) QCOMPARE(it.end, next.start);
                sliced += it.end > it.start;
            }
        QVERIFY(sliced > 0);
    }

    void labelAtFullZoom() {
        // The longest slice of rank 3's lane, zoomed to fill the view: its short name is drawn in it.
        const dl::TimelineData* d = m_tw->timeline();
        const dl::TimelineItem* best = nullptr;
        for (const auto& lane : d->lanes)
            for (const auto& it : lane.items)
                if (!best || it.end - it.start > best->end - best->start) best = &it;
        QVERIFY(best && best->end > best->start);
        const double s = m_tw->relTime(best->start), e = m_tw->relTime(best->end);
        m_tw->setWindow(s - (e - s) * 0.1, e + (e - s) * 0.1);
        QImage img(m_tw->size(), QImage::Format_ARGB32);
        m_tw->render(&img);
        const QString name = opNames(*m_ix, m_ix->ops[best->op]).shortName;
        bool found = false;
        for (const SliceLabel& l : m_tw->painter().lastLabels())
            if (l.op == best->op) {
                found = true;
                QCOMPARE(l.text, name);  // wide enough: not elided
                QVERIFY(l.rect.width() > 100);
            }
        QVERIFY2(found, qPrintable(name));
    }

    void tooltipTimesAreRelative() {
        const dl::TimelineData* d = m_tw->timeline();
        const dl::TimelineItem& it = d->lanes.back().items[d->lanes.back().items.size() / 2];
        const QString tip = m_tw->tooltipFor(it.op);
        const QString rel = QString::fromStdString(dl::formatTimeOffset(double(it.start - m_tw->viewport().origin())));
        QVERIFY2(tip.contains(QStringLiteral("at ") + rel), qPrintable(tip));
        QVERIFY2(!tip.contains(QString::number(m_ix->ops[it.op].startUs)), qPrintable(tip));  // no epoch µs
        QVERIFY2(tip.contains(QStringLiteral("inferred")), qPrintable(tip));
        QVERIFY(tip.contains(QStringLiteral("duration")));
    }

    void foldingAStageHidesItsLanes() {
        const dl::TimelineData* d = m_tw->timeline();
        const int stage = d->lanes.front().stage;
        std::size_t inStage = 0;
        for (const auto& l : d->lanes) inStage += l.stage == stage;
        const int before = m_tw->painter().contentHeight();
        const int laneY = m_tw->painter().laneCenterY(m_tw->rect(), 0, m_tw->paintState().scrollY);
        QCOMPARE(m_tw->painter().laneAt(m_tw->rect(), laneY, m_tw->paintState().scrollY), 0);
        // A click on the stage header (label column) folds it.
        const int headerY = TimelinePainter::lanesRect(m_tw->rect()).top() + TimelinePainter::kHeaderHeight / 2 -
            m_tw->paintState().scrollY;
        QTest::mouseClick(m_tw, Qt::LeftButton, {}, QPoint(20, headerY));
        QVERIFY(m_tw->painter().isStageCollapsed(stage));
        for (std::size_t i = 0; i < d->lanes.size(); ++i)
            QCOMPARE(m_tw->painter().laneShown(i), d->lanes[i].stage != stage);
        QCOMPARE(m_tw->painter().contentHeight(), before - int(inStage) * TimelinePainter::kLaneHeight);
        QVERIFY(m_tw->painter().laneAt(m_tw->rect(), laneY, m_tw->paintState().scrollY) != 0);
        m_tw->setStageCollapsed(stage, false);
        QCOMPARE(m_tw->painter().contentHeight(), before);
    }

    // Slices at any zoom: a merged run of ops says how many it holds, a slice names its op from
    // the width where two characters and "…" fit, and each slice has a darker border.
    void slicesAreNamedOrCountedAtEveryZoom() {
        const dl::TimelineData* d = m_tw->timeline();
        const QFontMetrics fm(m_tw->font());
        bool sawCount = false, sawTruncated = false;
        for (double zoom : {1.0, 4.0, 16.0, 64.0, 256.0}) {
            const double full = m_tw->viewport().fullTo() - m_tw->viewport().fullFrom();
            const double mid = (m_tw->viewport().fullFrom() + m_tw->viewport().fullTo()) / 2;
            m_tw->setWindow(mid - full / zoom / 2, mid + full / zoom / 2);
            QImage img(m_tw->size(), QImage::Format_ARGB32);
            m_tw->render(&img);
            const dl::TimeAxis axis = TimelinePainter::axisFor(m_tw->rect(), m_tw->viewport());
            for (const SliceLabel& l : m_tw->painter().lastLabels()) {
                QVERIFY2(fm.horizontalAdvance(l.text) <= l.rect.width() + 1, qPrintable(l.text));
                if (l.op == SliceLabel::kNoOp) {
                    // "25 ops": the number is the ops of that lane whose slices fall in the run's pixels.
                    QVERIFY2(l.count >= 2 && l.text.startsWith(QString::number(l.count)), qPrintable(l.text));
                    sawCount |= l.text.endsWith(QStringLiteral(" ops"));
                    continue;
                }
                const QString name = opNames(*m_ix, m_ix->ops[l.op]).shortName;
                QVERIFY2(
                    l.text == name ||
                        (l.text.endsWith(QChar(0x2026)) && l.text.size() >= 3 && name.startsWith(l.text.chopped(1))),
                    qPrintable(l.text + QStringLiteral(" for ") + name));
                sawTruncated |= l.text != name;
            }
            // Every op wide enough for two characters of its name and the ellipsis has its label.
            for (std::size_t li = 0; li < d->lanes.size(); ++li) {
                if (m_tw->painter().laneShown(li) == false) continue;
                const int cy = m_tw->painter().laneCenterY(m_tw->rect(), int(li), m_tw->paintState().scrollY);
                if (cy < TimelinePainter::lanesRect(m_tw->rect()).top() || cy > m_tw->height()) continue;
                if (d->lanes[li].lod.levelFor(axis.timePerPixel()) >= 0) continue;  // merged: counted, above
                for (const auto& it : d->lanes[li].items) {
                    const double a = std::max<double>(axis.xOf(it.start), TimelinePainter::kLabelWidth),
                                 b = std::min<double>(axis.xOf(it.end), m_tw->width());
                    const QString name = opNames(*m_ix, m_ix->ops[it.op]).shortName;
                    if (b - a < fm.horizontalAdvance(name.left(2) + QChar(0x2026)) + 6) continue;
                    const auto& labels = m_tw->painter().lastLabels();
                    QVERIFY2(
                        std::any_of(labels.begin(), labels.end(), [&](const SliceLabel& l) { return l.op == it.op; }),
                        qPrintable(QStringLiteral("zoom %1: %2 px slice without a name").arg(zoom).arg(b - a)));
                }
            }
        }
        QVERIFY2(sawCount, "no merged run said how many ops it holds");
        QVERIFY2(sawTruncated, "no truncated name seen");
        // A border: across a wide slice the first column is darker than its middle.
        const dl::TimelineItem* wide = nullptr;
        for (const auto& it : d->lanes.front().items)
            if (!wide || it.end - it.start > wide->end - wide->start) wide = &it;
        const double s = m_tw->relTime(wide->start), e = m_tw->relTime(wide->end);
        m_tw->setWindow(s - (e - s), e + (e - s));
        QImage img(m_tw->size(), QImage::Format_ARGB32);
        m_tw->render(&img);
        const QRectF r = m_tw->opRect(wide->op);
        const int y = int(r.top()) + 5;
        const QColor edge = img.pixelColor(int(std::floor(r.left())), y), inside = img.pixelColor(int(r.left() + 8), y);
        QVERIFY2(edge.lightness() < inside.lightness(),
                 qPrintable(edge.name() + QStringLiteral(" vs ") + inside.name()));
        m_tw->fitAll();
    }

    void darkPaletteContrast() {
        const QPalette dark = theme::darkPalette();
        QVERIFY(theme::isDark(dark));
        static_cast<QWidget*>(m_tw)->setPalette(dark);
        const theme::ViewColors& c = m_tw->painter().colors();
        QVERIFY(c.dark);
        const auto readable = [](const QColor& a, const QColor& b) { return theme::contrastRatio(a, b) >= 4.5; };
        QVERIFY(readable(c.labelText, c.labelFill));
        QVERIFY(readable(c.laneHeaderText, c.laneHeader));
        QVERIFY(readable(c.axisText, c.ruler));
        QVERIFY(theme::contrastRatio(c.selection, c.canvas) >= 3);
        QVERIFY(theme::contrastRatio(c.match, c.canvas) >= 3);
        for (int s = 0; s < dl::kOpStateCount; ++s) {
            const QColor fill = m_tw->painter().stateColor(dl::OpState(s));
            QVERIFY2(theme::contrastRatio(fill, c.canvas) >= 3, qPrintable(fill.name()));  // slices stand out
            QVERIFY(readable(theme::textOn(fill), fill));                                  // their names read
        }
        // The canvas really is dark when painted.
        QImage img(m_tw->size(), QImage::Format_ARGB32);
        m_tw->render(&img);
        QCOMPARE(QColor(img.pixel(img.width() - 2, img.height() - 2)).rgb(), c.canvas.rgb());
        static_cast<QWidget*>(m_tw)->setPalette(QPalette());
        QVERIFY(!m_tw->painter().colors().dark || theme::isDark(QApplication::palette()));
    }
};

QTEST_MAIN(TstTimelineLanes)
#include "moc_timeline_demo_window.cpp"
#include "test_timeline_lanes.moc"

// The log2 histogram plot: an empty plot shows a message and no axes; the NaN/Inf bars of the
// tensor panel count the selected tensor only; a bar of one element is visible on the log axis;
// limit labels stay above every curve; the NaN/+Inf/-Inf ticks keep apart in a narrow plot.
#include <QImage>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "ui/style/theme.h"
#include "ui/views/log2_histogram_plot.h"

using namespace dlui;

namespace {

dl::Log2Histogram hist(std::initializer_list<std::pair<int, std::uint64_t>> bins, std::uint64_t nan = 0,
                       std::uint64_t posInf = 0, std::uint64_t negInf = 0) {
    dl::Log2Histogram h;
    for (auto [e, n] : bins) h.exp[dl::Log2Histogram::binOf(e)] = n;
    h.nan = nan;
    h.posInf = posInf;
    h.negInf = negInf;
    return h;
}

// The limit labels' pixel rects as drawn (after a replot); defined below.
std::vector<std::pair<QRectF, QString>> limitLabels(QCustomPlot& p);

// Pixel rect of an item text after a replot.
QRectF textRect(QCustomPlot& p, QCPItemText* t) {
    const QPointF a = t->position->pixelPosition();
    const QFontMetricsF fm(t->font());
    const double w = fm.horizontalAdvance(t->text()) + 4, h = fm.height();
    const double x = t->positionAlignment() & Qt::AlignRight
        ? a.x() - w
        : (t->positionAlignment() & Qt::AlignHCenter ? a.x() - w / 2 : a.x());
    const double y = t->positionAlignment() & Qt::AlignBottom ? a.y() - h : a.y();
    (void)p;
    return {x, y, w, h};
}

std::vector<std::pair<QRectF, QString>> limitLabels(QCustomPlot& p) {
    std::vector<std::pair<QRectF, QString>> out;
    for (int i = 0; i < p.itemCount(); ++i) {
        auto* t = qobject_cast<QCPItemText*>(p.item(i));
        if (t && t->visible() && t->position->typeY() == QCPItemPosition::ptAxisRectRatio)
            out.emplace_back(textRect(p, t), t->text());
    }
    return out;
}

// The limit lines as drawn: x and the vertical pixel span.
struct DrawnLine {
    double x, top, bottom;
};
std::vector<DrawnLine> limitLines(QCustomPlot& p) {
    std::vector<DrawnLine> out;
    for (int i = 0; i < p.itemCount(); ++i)
        if (auto* l = qobject_cast<QCPItemLine*>(p.item(i))) {
            const QPointF a = l->start->pixelPosition(), b = l->end->pixelPosition();
            out.push_back({a.x(), std::min(a.y(), b.y()), std::max(a.y(), b.y())});
        }
    return out;
}

QString firstOverlap(const std::vector<std::pair<QRectF, QString>>& labels) {
    for (std::size_t i = 0; i < labels.size(); ++i)
        for (std::size_t j = i + 1; j < labels.size(); ++j)
            if (labels[i].first.intersects(labels[j].first))
                return labels[i].second + QStringLiteral(" / ") + labels[j].second;
    return {};
}

}  // namespace

class TstHistogramPlot : public QObject {
    Q_OBJECT
private slots:
    void emptyShowsMessageNotAxes() {
        Log2HistogramPlot p;
        p.resize(400, 250);
        p.clearSeries();
        p.finish({});
        QVERIFY(!p.emptyMessage().isEmpty());
        QVERIFY(!p.xAxis->visible() && !p.yAxis->visible());
        QCOMPARE(p.plottableCount(), 0);
        p.grab();  // paints without asserting
        // Data again: axes back, message gone.
        p.clearSeries();
        QVERIFY(p.addSeries(QStringLiteral("t"), hist({{3, 10}}), QPen(Qt::blue)));
        p.finish({});
        QVERIFY(p.emptyMessage().isEmpty());
        QVERIFY(p.xAxis->visible() && p.yAxis->visible());
    }

    // The placeholder is drawn whole and centred in the plot, whatever the axis rect (hidden
    // axes) is: every pixel that is not background lies in one box as wide as the text.
    void emptyMessageIsWholeAndCentred() {
        Log2HistogramPlot p;
        p.resize(420, 330);
        p.show();
        QVERIFY(QTest::qWaitForWindowExposed(&p));
        p.clearSeries();
        p.finish({});
        p.replot();
        const QString msg = p.emptyMessage();
        QVERIFY(!msg.isEmpty());
        const QImage img = p.grab().toImage();
        const QRgb bg = img.pixel(1, 1);
        int x0 = img.width(), x1 = -1, y0 = img.height(), y1 = -1;
        for (int y = 0; y < img.height(); ++y)
            for (int x = 0; x < img.width(); ++x)
                if (img.pixel(x, y) != bg) {
                    x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
                }
        QVERIFY2(x1 >= 0, "nothing drawn");
        const int textWidth = QFontMetrics(p.font()).horizontalAdvance(msg);
        QVERIFY2(x1 - x0 + 1 >= textWidth * 8 / 10,
                 qPrintable(QStringLiteral("text drawn %1 px wide, needs about %2").arg(x1 - x0 + 1).arg(textWidth)));
        QVERIFY2(std::abs((x0 + x1) / 2 - img.width() / 2) < 30 && std::abs((y0 + y1) / 2 - img.height() / 2) < 30,
                 qPrintable(QStringLiteral("text centred at %1,%2 in %3x%4")
                                .arg((x0 + x1) / 2)
                                .arg((y0 + y1) / 2)
                                .arg(img.width())
                                .arg(img.height())));
    }

    void specialsOfTheSelectedTensorOnly() {
        Log2HistogramPlot p;
        p.resize(500, 300);
        p.clearSeries();
        // An op with two tensors: 4 NaN / 4 +Inf in one, 16 +Inf in the selected one.
        p.addSeries(QStringLiteral("input.0"), hist({{2, 5}}, 4, 4, 0), QPen(Qt::blue));
        p.addSeries(QStringLiteral("output.0 (selected)"), hist({{17, 1}}, 0, 16, 0), QPen(Qt::red));
        p.finish(Log2HistogramPlot::SpecialCounts{0, 16, 0});
        const auto g = p.specialGroups();
        QCOMPARE(g.size(), std::size_t(1));
        QCOMPARE(g[0].nan, 0.0);
        QCOMPARE(g[0].posInf, 16.0);
        // Comparing runs: one group per series.
        p.clearSeries();
        p.addSeries(QStringLiteral("A"), hist({{2, 5}}, 4, 0, 0), QPen(Qt::blue));
        p.addSeries(QStringLiteral("B"), hist({{2, 5}}, 0, 7, 0), QPen(Qt::red));
        p.finish();
        QCOMPARE(p.specialGroups().size(), std::size_t(2));
        QCOMPARE(p.specialGroups()[1].posInf, 7.0);
    }

    void oneElementIsVisibleAndLabelsStayOffTheCurves() {
        for (int width : {260, 420, 900}) {
            Log2HistogramPlot p;
            p.resize(width, 220);
            p.clearSeries();
            p.addSeries(QStringLiteral("x"), hist({{-24, 1}, {-14, 3000}, {15, 1}, {16, 2}}, 1, 1, 1), QPen(Qt::blue));
            p.finish(Log2HistogramPlot::SpecialCounts{1, 1, 1});
            p.show();
            QVERIFY(QTest::qWaitForWindowExposed(&p));
            p.replot(QCustomPlot::rpImmediateRefresh);
            // A bar of one element is at least a few pixels tall on the log axis.
            const double y1 = p.yAxis->coordToPixel(1.0), y0 = p.yAxis->coordToPixel(Log2HistogramPlot::kFloor);
            QVERIFY2(y0 - y1 >= 6, qPrintable(QStringLiteral("w%1: %2 px").arg(width).arg(y0 - y1)));
            // Every limit label is above the tallest curve point.
            const double curveTop = p.yAxis->coordToPixel(3000.0);
            std::vector<QRectF> labels;
            for (int i = 0; i < p.itemCount(); ++i) {
                auto* t = qobject_cast<QCPItemText*>(p.item(i));
                if (!t || t->position->typeY() != QCPItemPosition::ptAxisRectRatio) continue;
                const QRectF r = textRect(p, t);
                QVERIFY2(r.bottom() <= curveTop + 1,
                         qPrintable(QStringLiteral("w%1: %2 at %3, curve top %4")
                                        .arg(width)
                                        .arg(t->text())
                                        .arg(r.bottom())
                                        .arg(curveTop)));
                for (const QRectF& o : labels)
                    QVERIFY2(!o.intersects(r),
                             qPrintable(QStringLiteral("w%1: %2 overlaps").arg(width).arg(t->text())));
                labels.push_back(r);
            }
            QVERIFY(labels.size() >= 3);
            // x tick labels do not run together: neighbouring ticks at least their label width apart.
            auto* ticker = dynamic_cast<QCPAxisTickerText*>(p.xAxis->ticker().data());
            QVERIFY(ticker);
            const QFontMetricsF fm(p.xAxis->tickLabelFont());
            double lastRight = -1e9;
            for (auto it = ticker->ticks().cbegin(); it != ticker->ticks().cend(); ++it) {
                const double x = p.xAxis->coordToPixel(it.key());
                const double w = fm.horizontalAdvance(it.value());
                QVERIFY2(x - w / 2 >= lastRight,
                         qPrintable(QStringLiteral("w%1: %2 runs into the previous label").arg(width).arg(it.value())));
                lastRight = x + w / 2;
            }
        }
    }

    // At every width and height, no limit label overlaps another or is crossed by a dashed line
    // (its own line ends at its edge), none runs off the plot, and fp16 max is always labelled;
    // with the bf16 limit on the axis (values near 2^125) and off it (the note, top right).
    void limitLabelsNeverCrossALineOrALabel() {
        const dl::Log2Histogram fp16 = hist({{-24, 1}, {-20, 2}, {-14, 40}, {0, 3}, {8, 20}, {15, 2}}, 0, 1, 0);
        const dl::Log2Histogram wide = hist({{-20, 2}, {0, 30}, {60, 5}, {125, 2}});
        for (const dl::Log2Histogram* h : {&fp16, &wide})
            for (int height : {150, 230, 330})
                for (int width = 240; width <= 1200; width += 35) {
                    Log2HistogramPlot p;
                    p.resize(width, height);
                    p.addSeries(QStringLiteral("output.0"), *h, QPen(Qt::blue));
                    p.finish();
                    p.show();
                    QVERIFY(QTest::qWaitForWindowExposed(&p));
                    QTest::qWait(5);
                    p.replot(QCustomPlot::rpImmediateRefresh);
                    const QString at =
                        QStringLiteral("%1x%2 %3: ").arg(width).arg(height).arg(h == &wide ? "wide" : "fp16");
                    const auto labels = limitLabels(p);
                    const auto lines = limitLines(p);
                    QCOMPARE(int(lines.size()), h == &wide ? 4 : 3);
                    QVERIFY2(std::any_of(labels.begin(), labels.end(),
                                         [](const auto& l) { return l.second.startsWith(QStringLiteral("fp16 max")); }),
                             qPrintable(at + QStringLiteral("fp16 max unlabelled")));
                    const QString clash = firstOverlap(labels);
                    QVERIFY2(clash.isEmpty(), qPrintable(at + clash + QStringLiteral(" overlap")));
                    for (const auto& [r, text] : labels) {
                        QVERIFY2(r.left() >= -1 && r.right() <= width + 1,
                                 qPrintable(at + text + QStringLiteral(" runs off the plot")));
                        for (const DrawnLine& l : lines)
                            QVERIFY2(
                                !(l.x > r.left() + 1 && l.x < r.right() - 1 && l.top < r.bottom() &&
                                  l.bottom > r.top()),
                                qPrintable(at + QStringLiteral("a line at x=%1 crosses \"%2\"").arg(l.x).arg(text)));
                    }
                }
    }

    // A small plot (the tensor dock at 1024x600) keeps its height for the bars: no axis titles, y
    // ticks on decades no closer than a label's height and never over each other, "1" always;
    // a stats-only tensor (NaN/Inf bars only) gets decades too, not "10 8 6 4 2".
    void smallPlotStaysReadable() {
        const dl::Log2Histogram h = hist({{-10, 3}, {0, 200}, {8, 20000}, {15, 2}}, 0, 1, 0);
        for (int height : {130, 160, 200, 300}) {
            Log2HistogramPlot p;
            p.resize(420, height);
            p.addSeries(QStringLiteral("output.0"), h, QPen(Qt::blue));
            p.finish();
            p.show();
            QVERIFY(QTest::qWaitForWindowExposed(&p));
            QTest::qWait(5);
            p.replot(QCustomPlot::rpImmediateRefresh);
            const QString at = QStringLiteral("height %1: ").arg(height);
            if (height < 230)
                QVERIFY2(p.xAxis->label().isEmpty() && p.yAxis->label().isEmpty(),
                         qPrintable(at + "axis titles take the room"));
            else
                QVERIFY(!p.xAxis->label().isEmpty());
            QVERIFY2(p.axisRect()->rect().height() >= height * 0.35,
                     qPrintable(at + QString::number(p.axisRect()->rect().height()) + " px plot"));
            const auto ticker = p.yAxis->ticker().dynamicCast<QCPAxisTickerText>();
            QVERIFY(ticker);
            const QMap<double, QString> ticks = ticker->ticks();
            QVERIFY2(ticks.contains(1.0) && ticks.value(1.0) == QStringLiteral("1"), qPrintable(at + "no 1 tick"));
            const double lineH = QFontMetrics(p.yAxis->tickLabelFont()).height();
            double prevY = 1e9;
            for (auto it = ticks.cbegin(); it != ticks.cend(); ++it) {
                if (it.key() > p.yAxis->range().upper) continue;
                const double e = std::log10(it.key());
                QVERIFY2(std::abs(e - std::round(e)) < 1e-9, qPrintable(at + it.value() + " is not a decade"));
                const double y = p.yAxis->coordToPixel(it.key());
                QVERIFY2(prevY - y >= lineH, qPrintable(at + it.value() + " over the tick below it"));
                prevY = y;
            }
        }
        Log2HistogramPlot stats;
        stats.resize(500, 250);
        stats.finish({3, 5, 0, {}});
        stats.show();
        QVERIFY(QTest::qWaitForWindowExposed(&stats));
        stats.replot(QCustomPlot::rpImmediateRefresh);
        const auto t = stats.yAxis->ticker().dynamicCast<QCPAxisTickerText>();
        QVERIFY(t && t->ticks().contains(1.0) && t->ticks().contains(10.0) && !t->ticks().contains(2.0));
    }

    // The NaN/Inf counts over the bars and the limit labels read on a dark palette (the counts
    // were QCPItemText's default black on the dark plot).
    void textsReadOnADarkPlot() {
        Log2HistogramPlot p;
        p.resize(500, 240);
        p.setPalette(theme::darkPalette());  // as the app does (--dark), before any data
        p.addSeries(QStringLiteral("x"), hist({{0, 3}, {15, 1}}, 1, 2, 0), QPen(Qt::blue));
        p.finish();
        const QColor bg = theme::ViewColors::fromPalette(p.palette()).plotBackground;
        QVERIFY(theme::isDark(p.palette()));
        int counts = 0;
        for (int i = 0; i < p.itemCount(); ++i)
            if (auto* t = qobject_cast<QCPItemText*>(p.item(i)); t && t->visible()) {
                const double contrast = std::abs(t->color().lightnessF() - bg.lightnessF());
                QVERIFY2(contrast > 0.3,
                         qPrintable(QStringLiteral("\"%1\": lightness %2 on %3")
                                        .arg(t->text())
                                        .arg(t->color().lightnessF())
                                        .arg(bg.lightnessF())));
                counts += t->positionAlignment() == (Qt::AlignHCenter | Qt::AlignBottom);
            }
        QCOMPARE(counts, 2);  // NaN 1 and +Inf 2
    }

    void labelsKeepApartInTheCompareDock() {
        // The compare panel's case: the plot already has its size (the dock's) when a selection
        // brings the data, after a replot of the previous state (here: the empty message, no
        // axes). An fp16 run with an Inf against a finite bf16 run: the bf16 limit is off the
        // axis, so its note sits top right, where "fp16 subnormal" (top left) may reach.
        for (int width : {700, 420, 372, 330, 290, 250}) {
            Log2HistogramPlot p;
            p.resize(width, 190);
            p.show();
            QVERIFY(QTest::qWaitForWindowExposed(&p));
            p.replot(QCustomPlot::rpImmediateRefresh);
            p.clearSeries();
            p.addSeries(QStringLiteral("A output.0"), hist({{0, 3}, {1, 10}, {2, 20}, {3, 12}, {15, 2}}, 0, 1, 0),
                        QPen(Qt::blue));
            p.addSeries(QStringLiteral("B output.0"), hist({{0, 3}, {1, 10}, {2, 20}, {3, 12}, {16, 2}}),
                        QPen(Qt::red));
            p.finish();
            QTest::qWait(20);  // the queued replot(s), no resize in between
            p.replot(QCustomPlot::rpImmediateRefresh);
            const auto labels = limitLabels(p);
            // All four down to 290 px; narrower, the least important make way (the lines stay).
            QVERIFY2(labels.size() >= (width >= 290 ? 4u : 2u),
                     qPrintable(QStringLiteral("w%1: %2 labels, axis rect %3 px high")
                                    .arg(width)
                                    .arg(labels.size())
                                    .arg(p.axisRect()->height())));
            const QString clash = firstOverlap(labels);
            QVERIFY2(clash.isEmpty(), qPrintable(QStringLiteral("w%1: %2 overlap").arg(width).arg(clash)));
            for (const auto& [r, text] : labels)  // and none runs off the plot
                QVERIFY2(
                    r.left() >= -1 && r.right() <= width + 1,
                    qPrintable(QStringLiteral("w%1: %2 at %3..%4").arg(width).arg(text).arg(r.left()).arg(r.right())));
        }
    }
};

QTEST_MAIN(TstHistogramPlot)
#include "test_histogram_plot.moc"

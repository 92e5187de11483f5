#include "ui/views/log2_histogram_plot.h"

#include <cmath>

#include "ui/util/state_colors.h"

namespace dlui {

namespace {

// "2⁻²⁴": the axis counts binary orders of magnitude, so label them as powers of two.
QString powerOfTwo(int e) {
    static const char16_t kSup[] = u"⁰¹²³⁴⁵⁶⁷⁸⁹";
    if (e == 0) return QStringLiteral("1");
    QString s = QStringLiteral("2");
    if (e < 0) s += QChar(u'⁻');
    for (QChar c : QString::number(std::abs(e))) s += QChar(kSup[c.digitValue()]);
    return s;
}

}  // namespace

Log2HistogramPlot::Log2HistogramPlot(QWidget* parent) : QCustomPlot(parent) {
    setMinimumHeight(150);
    // The legend goes in one row under the plot, so it never covers a histogram in a small dock.
    legend->setVisible(true);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.8);
    legend->setFont(small);
    legend->setBorderPen(Qt::NoPen);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(4);
    legend->setColumnSpacing(12);
    axisRect()->insetLayout()->take(legend);
    plotLayout()->addElement(1, 0, legend);
    plotLayout()->setRowStretchFactor(1, 0.001);
    legend->setMargins(QMargins(4, 0, 4, 2));
    xAxis->setLabel(tr("|x| (log₂ bins; a bar at 2ᵏ holds 2ᵏ ≤ |x| < 2ᵏ⁺¹)"));
    yAxis->setLabel(tr("elements"));
    yAxis->setScaleType(QCPAxis::stLogarithmic);
    yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
}

void Log2HistogramPlot::clearSeries() {
    clearPlottables();
    clearItems();
    m_specials.clear();
    m_any = false;
    m_lo = m_hi = 0;
}

bool Log2HistogramPlot::addSeries(const QString& name, const dl::Log2Histogram& h, const QPen& pen, const QBrush& fill) {
    if (h.empty()) return false;
    QVector<double> xs, ys;
    for (int b = 0; b < dl::Log2Histogram::kExpBins; ++b) {
        if (!h.exp[b]) continue;
        const int e = b + dl::Log2Histogram::kMinExp;
        m_lo = m_any ? std::min(m_lo, e) : e;
        m_hi = m_any ? std::max(m_hi, e) : e;
        m_any = true;
        xs << e + 0.5;
        ys << static_cast<double>(h.exp[b]);
    }
    auto* g = addGraph();
    g->setName(name);
    g->setPen(pen);
    g->setBrush(fill);
    g->setLineStyle(QCPGraph::lsStepCenter);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
    g->setData(xs, ys, true);
    m_specials.push_back({double(h.nan), double(h.posInf), double(h.negInf), pen.color()});
    return true;
}

void Log2HistogramPlot::addLimitLine(double x, const QString& label, const QColor& c, double labelY, bool labelLeft) {
    auto* line = new QCPItemStraightLine(this);
    line->point1->setCoords(x, 0);
    line->point2->setCoords(x, 1);
    line->setPen(QPen(c, 1.5, Qt::DashLine));
    auto* text = new QCPItemText(this);
    text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(x, labelY);
    text->setPositionAlignment((labelLeft ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
    text->setText(label);
    text->setColor(c);
    text->setPadding(labelLeft ? QMargins(0, 0, 3, 0) : QMargins(3, 0, 0, 0));
}

void Log2HistogramPlot::finish(bool perSeriesSpecials) {
    const int lo = std::min(m_any ? m_lo : 0, -26);
    const int hi = std::max(m_any ? m_hi : 0, 17);
    // NaN / +Inf / -Inf as bars to the right of the finite range.
    const double sx = hi + 4;
    // Bar spacing grows with the exponent span so the three labels stay apart in a narrow dock.
    const double gap = std::max(4.0, std::round((hi - lo) / 9.0));
    std::vector<Specials> groups = m_specials;
    if (!perSeriesSpecials || groups.empty()) {
        Specials sum{0, 0, 0, stateColor(dl::OpState::InfNan)};
        for (const Specials& s : m_specials) {
            sum.nan += s.nan;
            sum.posInf += s.posInf;
            sum.negInf += s.negInf;
        }
        groups = {sum};
    }
    const double width = 0.6 * gap / double(groups.size());
    QStringList counts[3];
    for (std::size_t k = 0; k < groups.size(); ++k) {
        const Specials& s = groups[k];
        auto* bars = new QCPBars(xAxis, yAxis);
        bars->setName(k == 0 ? tr("NaN / +Inf / −Inf") : QString());
        if (k > 0) bars->removeFromLegend();
        bars->setBrush(s.color);
        bars->setPen(Qt::NoPen);
        bars->setWidth(width);
        const double off = (double(k) - (double(groups.size()) - 1) / 2) * width;
        bars->setData({sx + off, sx + gap + off, sx + 2 * gap + off}, {s.nan, s.posInf, s.negInf}, true);
        counts[0] << QString::number(s.nan);
        counts[1] << QString::number(s.posInf);
        counts[2] << QString::number(s.negInf);
    }
    // Counts above the bars, only where there is something to count (the names are axis ticks).
    for (int k = 0; k < 3; ++k) {
        bool any = false;
        for (const Specials& s : groups) any |= (k == 0 ? s.nan : k == 1 ? s.posInf : s.negInf) > 0;
        if (!any) continue;
        auto* t = new QCPItemText(this);
        t->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        t->position->setCoords(sx + gap * k, 0.02);
        t->setPositionAlignment(Qt::AlignHCenter | Qt::AlignTop);
        t->setText(counts[k].join(QStringLiteral(" | ")));
    }
    addLimitLine(std::log2(65504.0), tr("fp16 max 65504"), QColor(0xc9, 0x2a, 0x2a), 0.02, true);
    addLimitLine(-14, tr("fp16 min normal 6.1e-5"), QColor(0x20, 0x80, 0x40), 0.62, false);
    addLimitLine(-24, tr("fp16 subnormal 6e-8"), QColor(0x60, 0x60, 0x60), 0.78, false);
    const double bf16Max = std::log2(3.3895313892515355e38);
    if (hi + 6 >= bf16Max) {
        addLimitLine(bf16Max, tr("bf16 max 3.4e38"), QColor(0x80, 0x40, 0xa0), 0.26, true);
    } else {
        auto* t = new QCPItemText(this);
        t->position->setType(QCPItemPosition::ptAxisRectRatio);
        t->position->setCoords(1.0, 0.45);
        t->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
        t->setText(tr("bf16 max 3.4e38 (2¹²⁸) →"));
        t->setColor(QColor(0x80, 0x40, 0xa0));
    }
    // Ticks at powers of two, every 4 or 8 exponents depending on the span; the special bars
    // right of the range carry their own labels.
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const int step = (hi - lo) > 60 ? 16 : (hi - lo) > 30 ? 8 : 4;
    for (int e = (lo / step) * step; e <= hi + 1; e += step) ticker->addTick(e, powerOfTwo(e));
    ticker->addTick(sx, QStringLiteral("NaN"));
    ticker->addTick(sx + gap, QStringLiteral("+Inf"));
    ticker->addTick(sx + 2 * gap, QStringLiteral("−Inf"));
    xAxis->setTicker(ticker);
    rescaleAxes(true);
    xAxis->setRange(lo - 1, sx + 2 * gap + 2);
    yAxis->setRange(0.8, std::max(10.0, yAxis->range().upper * 3));
    replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace dlui

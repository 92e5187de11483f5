#include "ui/views/log2_histogram_plot.h"

#include <algorithm>
#include <cmath>

#include "core/util/half.h"
#include "ui/style/state_colors.h"
#include "ui/views/limit_label_layout.h"

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

// "10⁴" for the element counts' decades (the y axis is logarithmic).
QString powerOfTen(int e) {
    static const char16_t kSup[] = u"⁰¹²³⁴⁵⁶⁷⁸⁹";
    if (e <= 3) return QString::number(static_cast<qlonglong>(std::llround(std::pow(10.0, e))));
    QString s = QStringLiteral("10");
    for (QChar c : QString::number(e)) s += QChar(kSup[c.digitValue()]);
    return s;
}

const char* kXAxisLabel =
    QT_TRANSLATE_NOOP("dlui::Log2HistogramPlot", "|x| (log₂ bins; a bar at 2ᵏ holds 2ᵏ ≤ |x| < 2ᵏ⁺¹)");

QString countText(double v) { return QString::number(static_cast<qulonglong>(v)); }

const double kFp16MaxLog2 = std::log2(double(dl::kFp16Max));
const double kBf16MaxLog2 = std::log2(double(dl::kBf16Max));

}  // namespace

Log2HistogramPlot::Log2HistogramPlot(QWidget* parent) : QCustomPlot(parent) {
    setMinimumHeight(130);
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
    xAxis->setLabel(tr(kXAxisLabel));
    yAxis->setLabel(tr("elements"));
    yAxis->setScaleType(QCPAxis::stLogarithmic);
    yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());  // decades, set in relayout
    applyPalette();
    showEmpty(tr("No tensor selected"));
    // The axis rect is known only once a replot has laid out the axes and legend for the new
    // content (a fresh selection in a dock of unchanged size gets no resize): if the label rows
    // were packed for another size, pack them again before this replot draws.
    // The legend's columns follow the width at every replot, before the layout pass (a hidden
    // plot, as the PDF report's, gets no resize event: its legend stayed in one column).
    connect(this, &QCustomPlot::beforeReplot, this, [this] {
        if (m_finished) fitLegend();
    });
    connect(this, &QCustomPlot::afterLayout, this, [this] {
        if (!m_finished || axisRect()->rect().size() == m_laidOutFor || m_stalePasses >= 3) return;
        ++m_stalePasses;
        relayout();
        replot(QCustomPlot::rpQueuedReplot);  // the y range may have moved the axis rect again
    });
}

void Log2HistogramPlot::applyPalette() {
    // QCustomPlot paints white with black axes whatever the palette: follow it (dark themes).
    const theme::ViewColors c = theme::ViewColors::fromPalette(palette());
    setBackground(c.plotBackground);
    legend->setBrush(c.plotBackground);
    legend->setTextColor(c.plotText);
    for (QCPAxis* a : {xAxis, yAxis, xAxis2, yAxis2}) {
        a->setBasePen(QPen(c.plotText));
        a->setTickPen(QPen(c.plotText));
        a->setSubTickPen(QPen(c.plotText));
        a->setTickLabelColor(c.plotText);
        a->setLabelColor(c.plotText);
        a->grid()->setPen(QPen(c.plotGrid, 1, Qt::DotLine));
        // No solid line at 2⁰ = 1 (QCustomPlot's zero line): it read as one more limit, glaring white in dark mode.
        a->grid()->setZeroLinePen(Qt::NoPen);
    }
    for (QCPItemText* t : m_counts)
        if (t) t->setColor(c.plotText);
}

void Log2HistogramPlot::changeEvent(QEvent* e) {
    if (e->type() == QEvent::PaletteChange || e->type() == QEvent::ApplicationPaletteChange) {
        applyPalette();
        replot(QCustomPlot::rpQueuedReplot);
    }
    QCustomPlot::changeEvent(e);
}

void Log2HistogramPlot::clearSeries() {
    clearPlottables();
    clearItems();
    m_specials.clear();
    m_groups.clear();
    m_bars.clear();
    m_counts = {};
    m_limits.clear();
    m_emptyText = nullptr;
    m_any = m_finished = false;
    m_lo = m_hi = 0;
    m_maxCount = 1;
    for (QCPAxis* a : {xAxis, yAxis}) {
        a->setVisible(true);
        a->grid()->setVisible(true);
    }
    legend->setVisible(true);
}

void Log2HistogramPlot::showEmpty(const QString& message) {
    clearSeries();
    // No axes at all: an empty log axis draws meaningless ticks.
    for (QCPAxis* a : {xAxis, yAxis}) {
        a->setVisible(false);
        a->grid()->setVisible(false);
    }
    legend->setVisible(false);
    m_emptyText = new QCPItemText(this);
    // Centred in the whole plot and not clipped to the axis rect: with the axes hidden that rect
    // can be a sliver (seen as "nsor sel" in the tensor dock of a dump with no origin).
    m_emptyText->setClipToAxisRect(false);
    m_emptyText->position->setType(QCPItemPosition::ptViewportRatio);
    m_emptyText->position->setCoords(0.5, 0.5);
    m_emptyText->setPositionAlignment(Qt::AlignCenter);
    m_emptyText->setText(message);
    m_emptyText->setColor(palette().color(QPalette::PlaceholderText));
    replot(QCustomPlot::rpQueuedReplot);
}

bool Log2HistogramPlot::addSeries(const QString& name, const dl::Log2Histogram& h, const QPen& pen,
                                  const QBrush& fill) {
    if (h.empty()) return false;
    if (m_emptyText) clearSeries();
    QVector<double> xs, ys;
    for (int b = 0; b < dl::Log2Histogram::kExpBins; ++b) {
        if (!h.exp[b]) continue;
        const int e = b + dl::Log2Histogram::kMinExp;
        m_lo = m_any ? std::min(m_lo, e) : e;
        m_hi = m_any ? std::max(m_hi, e) : e;
        m_any = true;
        xs << e + 0.5;
        ys << static_cast<double>(h.exp[b]);
        m_maxCount = std::max(m_maxCount, ys.back());
    }
    auto* g = addGraph();
    g->setName(name);
    g->setPen(pen);
    g->setBrush(fill);
    g->setLineStyle(QCPGraph::lsStepCenter);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
    g->setData(xs, ys, true);
    m_specials.push_back({{double(h.nan), double(h.posInf), double(h.negInf)}, pen.color()});
    return true;
}

void Log2HistogramPlot::finish() { finishWith(m_specials); }

void Log2HistogramPlot::finish(const SpecialCounts& selected) {
    finishWith({{selected, stateColor(dl::OpState::InfNan)}});
}

std::vector<Log2HistogramPlot::SpecialCounts> Log2HistogramPlot::specialGroups() const {
    std::vector<SpecialCounts> out;
    for (const Specials& s : m_groups) out.push_back(s.n);
    return out;
}

std::array<QString, 3> Log2HistogramPlot::countLabels() const {
    std::array<QString, 3> out;
    for (int k = 0; k < 3; ++k)
        if (m_counts[k]) out[k] = m_counts[k]->text();
    return out;
}

void Log2HistogramPlot::addLimit(double x, const QString& label, const QString& brief, const QColor& c, bool labelLeft,
                                 bool withLine) {
    Limit l;
    l.key = x;
    l.preferLeft = labelLeft;
    l.full = label;
    l.brief = brief;
    if (withLine) {
        // From the x axis up to its label's row (set in relayout), so it crosses no other label.
        l.line = new QCPItemLine(this);
        for (QCPItemPosition* p : {l.line->start, l.line->end}) p->setTypeY(QCPItemPosition::ptAxisRectRatio);
        l.line->start->setCoords(x, 1.0);
        l.line->end->setCoords(x, 0.0);
        l.line->setPen(QPen(c, 1.5, Qt::DashLine));
    }
    l.text = new QCPItemText(this);
    if (withLine)
        l.text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    else
        l.text->position->setType(QCPItemPosition::ptAxisRectRatio);
    l.text->setText(label);
    l.text->setColor(c);
    m_limits.push_back(l);
}

void Log2HistogramPlot::finishWith(std::vector<Specials> groups) {
    const bool anySpecial = std::any_of(groups.begin(), groups.end(),
                                        [](const Specials& s) { return s.n.nan + s.n.posInf + s.n.negInf > 0; });
    if (!m_any && !anySpecial) {
        showEmpty(tr("No histogram: this tensor has statistics only, or no data"));
        return;
    }
    if (m_emptyText) {  // only NaN/Inf to show: a fresh plot without the placeholder
        clearSeries();
    }
    if (groups.empty()) groups.push_back({{}, stateColor(dl::OpState::InfNan)});
    m_groups = groups;
    m_lo = std::min(m_any ? m_lo : 0, -26);
    m_hi = std::max(m_any ? m_hi : 0, 17);
    for (std::size_t k = 0; k < m_groups.size(); ++k) {
        const Specials& s = m_groups[k];
        auto* bars = new QCPBars(xAxis, yAxis);
        bars->setName(k == 0 ? tr("NaN / +Inf / −Inf") : QString());
        if (k > 0) bars->removeFromLegend();
        bars->setBrush(s.color);
        bars->setPen(Qt::NoPen);
        bars->setBaseValue(kFloor);  // from the bottom of the log axis, not from 0 (= -infinity)
        m_bars.push_back(bars);
        m_maxCount = std::max({m_maxCount, s.n.nan, s.n.posInf, s.n.negInf});
    }
    // Counts above the bars, only where there is something to count (the names are axis ticks).
    for (int k = 0; k < 3; ++k) {
        QStringList parts;
        bool any = false;
        for (const Specials& s : m_groups) {
            const double v = k == 0 ? s.n.nan : k == 1 ? s.n.posInf : s.n.negInf;
            parts << (s.n.text[k].isEmpty() ? countText(v) : s.n.text[k]);
            any |= v > 0;
        }
        if (!any) continue;
        auto* t = new QCPItemText(this);
        t->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        t->setText(parts.join(QStringLiteral(" | ")));
        t->setColor(
            theme::ViewColors::fromPalette(palette()).plotText);  // QCPItemText's black was unreadable in dark mode
        m_counts[k] = t;
    }
    const QColor bf16 = theme::forBackground(theme::kLimitBf16Max, palette());
    addLimit(kFp16MaxLog2, tr("fp16 max 65504"), tr("fp16 max"), theme::forBackground(theme::kLimitFp16Max, palette()),
             true);
    if (m_hi + 6 >= kBf16MaxLog2)
        addLimit(kBf16MaxLog2, tr("bf16 max 3.4e38"), tr("bf16 max"), bf16, true);
    else
        addLimit(0, tr("bf16 max 3.4e38 (2¹²⁸) →"), tr("bf16 max →"), bf16, true, false);
    addLimit(-14, tr("fp16 min normal 6.1e-5"), tr("min normal"),
             theme::forBackground(theme::kLimitFp16MinNormal, palette()), false);
    addLimit(-24, tr("fp16 subnormal 6e-8"), tr("subnormal"),
             theme::forBackground(theme::kLimitFp16Subnormal, palette()), false);
    m_finished = true;
    m_stalePasses = 0;
    fitLegend();
    relayout();
    replot(QCustomPlot::rpQueuedReplot);
}

void Log2HistogramPlot::resizeEvent(QResizeEvent* e) {
    QCustomPlot::resizeEvent(e);
    if (m_finished) {
        m_stalePasses = 0;
        fitLegend();
        relayout();
        replot(QCustomPlot::rpQueuedReplot);
    }
}

void Log2HistogramPlot::fitLegend() {
    // Legend columns as many as fit the plot's width whole (four in a row clipped "output.0
    // (selected)" and "NaN / +Inf / −Inf" in the tensor dock at a 1.5 scale).
    int itemW = 1;
    for (int i = 0; i < legend->itemCount(); ++i)  // cells of the grid: a wrapped one may be empty
        if (const QCPAbstractLegendItem* item = legend->item(i))
            itemW = std::max(itemW, item->minimumOuterSizeHint().width());
    const int columns = std::clamp((width() - 8) / (itemW + legend->columnSpacing()), 1, 4);
    if (columns != legend->wrap()) {
        legend->setWrap(columns);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);  // re-flows the items
    }
}

void Log2HistogramPlot::relayout() {
    // The axis rect's size before the first replot is a guess; the resize after it corrects it.
    const QRect ar = axisRect()->rect();
    m_laidOutFor = ar.size();
    const double W = ar.width() > 40 ? ar.width() : std::max(100, width() - 80);
    const double H = ar.height() > 20 ? ar.height() : std::max(60, height() - 70);
    const QFontMetrics fm(font());
    const double lineH = fm.height() + 1;
    // A short plot (1024x600 screens) keeps its height for the bars: no axis titles.
    const bool compact = height() < 230;
    xAxis->setLabel(compact ? QString() : tr(kXAxisLabel));
    yAxis->setLabel(compact ? QString() : tr("elements"));
    // x: the finite range, then NaN / +Inf / -Inf spaced so their labels and counts stay apart.
    double labelPx = 0;
    for (const QString& s : {QStringLiteral("NaN"), QStringLiteral("+Inf"), QStringLiteral("−Inf")})
        labelPx = std::max<double>(labelPx, fm.horizontalAdvance(s));
    for (QCPItemText* t : m_counts)
        if (t) labelPx = std::max<double>(labelPx, fm.horizontalAdvance(t->text()));
    labelPx += 12;
    const double base = (m_hi + 1) - (m_lo - 1) + 4;  // units left of the first special bar
    double gap = 4;
    if (W > 3 * labelPx + 20)
        gap = std::max(gap, std::ceil(labelPx * (base + 2) / (W - 2 * labelPx)));
    else
        gap = std::max(gap, base);  // too narrow for anything better: half the axis for the specials
    const double xMin = m_lo - 1;
    // Power-of-two ticks no closer than their labels.
    const double pxPerUnitGuess = W / (base + 2 * gap + 2);
    const double powPx = fm.horizontalAdvance(powerOfTwo(-128)) + 10;
    int step = 4;
    while (step < 128 && step * pxPerUnitGuess < powPx) step *= 2;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    int lastTick = m_lo;
    for (int e = static_cast<int>(std::floor(double(m_lo) / step)) * step; e <= m_hi + 1; e += step) {
        if (e < xMin) continue;
        ticker->addTick(e, powerOfTwo(e));
        lastTick = e;
    }
    const double sx = std::max(double(m_hi) + 4, lastTick + gap);
    ticker->addTick(sx, QStringLiteral("NaN"));
    ticker->addTick(sx + gap, QStringLiteral("+Inf"));
    ticker->addTick(sx + 2 * gap, QStringLiteral("−Inf"));
    xAxis->setTicker(ticker);
    const double xMax = sx + 2 * gap + gap / 2;
    xAxis->setRange(xMin, xMax);
    const double width = 0.6 * gap / double(std::max<std::size_t>(1, m_groups.size()));
    for (std::size_t k = 0; k < m_bars.size(); ++k) {
        const Specials& s = m_groups[k];
        const double off = (double(k) - (double(m_groups.size()) - 1) / 2) * width;
        m_bars[k]->setWidth(width);
        m_bars[k]->setData({sx + off, sx + gap + off, sx + 2 * gap + off}, {s.n.nan, s.n.posInf, s.n.negInf}, true);
    }
    for (int k = 0; k < 3; ++k) {
        if (!m_counts[k]) continue;
        double top = kFloor;
        for (const Specials& s : m_groups) top = std::max(top, k == 0 ? s.n.nan : k == 1 ? s.n.posInf : s.n.negInf);
        m_counts[k]->position->setCoords(sx + gap * k, top);
    }
    // Limit labels in rows from the top, each beside its line, in a band above every curve and
    // bar that the y range keeps free (limit_label_layout.h: no label on a line or a label).
    const auto px = [&](double x) { return (x - xMin) / (xMax - xMin) * W; };
    std::vector<LimitLabelBox> boxes;
    for (const Limit& l : m_limits)
        boxes.push_back({l.line ? px(l.key) : W, l.line != nullptr, l.preferLeft, fm.horizontalAdvance(l.full) + 4.0,
                         fm.horizontalAdvance(l.brief) + 4.0});
    const int maxRows = std::max(1, static_cast<int>(0.5 * H / lineH));
    const std::vector<LimitLabelPlace> places = placeLimitLabels(boxes, W, maxRows);
    int rows = 0;
    for (const LimitLabelPlace& p : places) rows = std::max(rows, p.row + 1);
    const double bandRatio = std::min(1.0, (2 + rows * lineH) / H);
    for (std::size_t k = 0; k < m_limits.size(); ++k) {
        const Limit& l = m_limits[k];
        const LimitLabelPlace& p = places[k];
        l.text->setVisible(p.row >= 0);
        const double top = (2 + p.row * lineH) / H;
        // A line whose label is left out stops under the band.
        if (l.line) l.line->end->setCoords(l.key, p.row >= 0 ? top : bandRatio);
        if (p.row < 0) continue;
        l.text->setText(p.shortText ? l.brief : l.full);
        l.text->setPositionAlignment((p.left ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
        l.text->setPadding(p.left ? QMargins(0, 0, 3, 0) : QMargins(3, 0, 0, 0));
        l.text->position->setCoords(l.line ? l.key : 1.0, top);
    }
    // y: log axis from the floor, with room for the label rows and the counts over the bars.
    const double band = (double(rows) + (m_counts[0] || m_counts[1] || m_counts[2] ? 1.2 : 0.3)) * lineH + 4;
    const double f = std::clamp(band / H, 0.1, 0.7);
    const double lm = std::log(std::max(m_maxCount, 1.0) * 1.15), ll = std::log(kFloor);
    const double upper = std::max(std::exp((lm - f * ll) / (1 - f)), 10.0);
    yAxis->setRange(kFloor, upper);
    // Decade ticks (1, 10, 100, 10³ …) no closer than a label's height, "1" always: a log ticker
    // crammed "10 8 6 4 2" into a short range and printed them over each other in a small plot.
    const double pxPerDecade = H / std::log10(upper / kFloor);
    int every = 1;
    while (every < 64 && every * pxPerDecade < lineH * 1.3) every *= 2;
    auto yTicks = QSharedPointer<QCPAxisTickerText>::create();
    for (int e = 0; std::pow(10.0, e) <= upper; e += every) yTicks->addTick(std::pow(10.0, e), powerOfTen(e));
    yAxis->setTicker(yTicks);
    yAxis->setSubTicks(false);
}

}  // namespace dlui

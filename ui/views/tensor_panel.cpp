#include <qcustomplot.h>

#include "ui/views/tensor_panel.h"

#include <QLabel>
#include <QVBoxLayout>
#include <cmath>

#include "core/analysis/tensor_anomaly.h"
#include "ui/models/dump_session.h"
#include "ui/util/state_colors.h"

namespace dlui {

namespace {

QString num(double v) { return std::isnan(v) ? QStringLiteral("–") : QString::number(v, 'g', 6); }

const QColor kPalette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0x2c, 0xa0, 0x2c), QColor(0x8c, 0x56, 0x4b),
                           QColor(0x17, 0xbe, 0xcf), QColor(0x7f, 0x7f, 0x7f)};

}  // namespace

TensorPanel::TensorPanel(DumpSession* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_header(new QLabel(this)), m_plot(new QCustomPlot(this)) {
    m_header->setTextFormat(Qt::RichText);
    m_header->setWordWrap(true);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_header->setText(tr("<i>Select an op on the timeline or in the table.</i>"));
    m_plot->setMinimumHeight(200);
    // A compact legend in the top-left corner: log2|x| below -26 is empty for fp16 data.
    m_plot->legend->setVisible(true);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.8);
    m_plot->legend->setFont(small);
    m_plot->legend->setBrush(QColor(255, 255, 255, 210));
    m_plot->legend->setRowSpacing(0);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(6, 4, 6, 4);
    lay->addWidget(m_header);
    lay->addWidget(m_plot, 1);
    connect(m_session, &DumpSession::selectionChanged, this, &TensorPanel::show);
    connect(m_session, &DumpSession::dumpChanged, this, [this] {
        m_plot->clearPlottables();
        m_plot->clearItems();
        m_plot->replot();
        m_plotted = 0;
        m_header->setText(tr("<i>Select an op on the timeline or in the table.</i>"));
    });
}

QString TensorPanel::headerText() const { return m_header->text(); }

void TensorPanel::show(quint32 op, quint32 tensor) {
    const dl::DumpIndex* ix = m_session->index();
    if (!ix || tensor >= ix->tensors.size()) return;
    const dl::TensorRecord& t = ix->tensors[tensor];
    const dl::OpRecord& o = ix->ops[op];
    const auto str = [&](dl::StrId id) { return QString::fromStdString(ix->strings.str(id)).toHtmlEscaped(); };
    QStringList dims;
    for (std::int64_t d : ix->shape(t)) dims << QString::number(d);
    const dl::TensorStats s = ix->stats(t);
    QString dtype = QString::fromLatin1(dl::dtypeName(t.dtype).data());
    if (t.origDtype != dl::DType::Unknown && t.origDtype != t.dtype)
        dtype += tr(" (was %1)").arg(QString::fromLatin1(dl::dtypeName(t.origDtype).data()));
    QString h = QStringLiteral("<b>%1</b> <i>%2</i> · %3 · rank %4 · iteration %5<br>")
                    .arg(str(o.name), str(o.type), QString::fromStdString(dl::tensorLabel(t))).arg(o.rank).arg(o.iteration);
    if (o.scope) h += QStringLiteral("<small>%1</small><br>").arg(str(o.scope));
    h += tr("shape [%1] · %2 · %3 · %4<br>").arg(dims.join(QLatin1Char(',')), dtype, str(t.format),
                                                  t.file ? str(t.file) : tr("stats only"));
    h += tr("min %1 · max %2 · mean %3 · max|x| <b>%4</b> · L2 %5 · NaN %6 · Inf %7 · saturated %8 · elements %9")
             .arg(num(s.has(dl::stat::Min) ? s.min : NAN), num(s.has(dl::stat::Max) ? s.max : NAN),
                  num(s.has(dl::stat::Mean) ? s.mean : NAN), num(s.has(dl::stat::MaxAbs) ? s.maxAbs : NAN),
                  num(s.has(dl::stat::L2) ? s.l2 : NAN))
             .arg(s.nanCount).arg(s.infCount()).arg(s.satCount).arg(s.count);
    const dl::TensorAnomaly an = dl::classifyTensor(*ix, t);
    if (an.headroom >= 0) h += tr(" · headroom to fp16 max %1%").arg(an.headroom * 100, 0, 'f', 1);
    m_header->setText(h);
    plotOp(op, tensor);
}

void TensorPanel::addLimitLine(double x, const QString& label, const QColor& c, double labelY, bool labelLeft) {
    auto* line = new QCPItemStraightLine(m_plot);
    line->point1->setCoords(x, 0);
    line->point2->setCoords(x, 1);
    line->setPen(QPen(c, 1.5, Qt::DashLine));
    auto* text = new QCPItemText(m_plot);
    text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(x, labelY);
    text->setPositionAlignment((labelLeft ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
    text->setText(label);
    text->setColor(c);
    text->setPadding(labelLeft ? QMargins(0, 0, 3, 0) : QMargins(3, 0, 0, 0));
}

void TensorPanel::plotOp(quint32 op, quint32 selected) {
    const dl::DumpIndex* ix = m_session->index();
    const dl::OpRecord& o = ix->ops[op];
    m_plot->clearPlottables();
    m_plot->clearItems();
    m_plotted = 0;
    int lo = 0, hi = 0;
    bool any = false;
    double special[3] = {0, 0, 0};  // NaN, +Inf, -Inf over the op's tensors
    for (quint32 ti = o.firstTensor; ti < o.firstTensor + o.tensorCount; ++ti) {
        dl::Log2Histogram hist;
        if (!ix->histogram(ix->tensors[ti], hist) || hist.empty()) continue;
        QVector<double> xs, ys;
        for (int b = 0; b < dl::Log2Histogram::kExpBins; ++b) {
            if (!hist.exp[b]) continue;
            const int e = b + dl::Log2Histogram::kMinExp;
            lo = any ? std::min(lo, e) : e;
            hi = any ? std::max(hi, e) : e;
            any = true;
            xs << e + 0.5;
            ys << static_cast<double>(hist.exp[b]);
        }
        special[0] += hist.nan;
        special[1] += hist.posInf;
        special[2] += hist.negInf;
        auto* g = m_plot->addGraph();
        const QColor c = ti == selected ? QColor(0xd6, 0x27, 0x28) : kPalette[m_plotted % 5];
        g->setName(QString::fromStdString(dl::tensorLabel(ix->tensors[ti])) + (ti == selected ? tr(" (selected)") : QString()));
        g->setPen(QPen(c, ti == selected ? 2.2 : 1.4));
        g->setLineStyle(QCPGraph::lsStepCenter);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
        g->setData(xs, ys, true);
        ++m_plotted;
    }
    lo = std::min(lo, -26);
    hi = std::max(hi, 17);
    // NaN / +Inf / -Inf as bars to the right of the finite range.
    auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    bars->setName(tr("NaN / +Inf / −Inf"));
    bars->setBrush(stateColor(dl::OpState::InfNan));
    bars->setPen(Qt::NoPen);
    bars->setWidth(2.4);
    const double sx = hi + 4;
    bars->setData({sx, sx + 4, sx + 8}, {special[0], special[1], special[2]}, true);
    const char* names[] = {"NaN", "+Inf", "-Inf"};
    for (int k = 0; k < 3; ++k) {
        auto* t = new QCPItemText(m_plot);
        t->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        t->position->setCoords(sx + 4 * k, 0.98);
        t->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        t->setText(QStringLiteral("%1\n%2").arg(QLatin1String(names[k])).arg(special[k]));
    }
    addLimitLine(std::log2(65504.0), tr("fp16 max 65504"), QColor(0xc9, 0x2a, 0x2a), 0.02, true);
    addLimitLine(-14, tr("fp16 min normal 6.1e-5"), QColor(0x20, 0x80, 0x40), 0.62, false);
    addLimitLine(-24, tr("fp16 subnormal 6e-8"), QColor(0x60, 0x60, 0x60), 0.78, false);
    const double bf16Max = std::log2(3.3895313892515355e38);
    if (hi + 6 >= bf16Max) addLimitLine(bf16Max, tr("bf16 max 3.4e38"), QColor(0x80, 0x40, 0xa0), 0.26, true);
    else {
        auto* t = new QCPItemText(m_plot);
        t->position->setType(QCPItemPosition::ptAxisRectRatio);
        t->position->setCoords(1.0, 0.62);
        t->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
        t->setText(tr("bf16 max 3.4e38 (2^128) →"));
        t->setColor(QColor(0x80, 0x40, 0xa0));
    }
    m_plot->xAxis->setLabel(tr("log2 |x|"));
    m_plot->yAxis->setLabel(tr("elements"));
    m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    m_plot->rescaleAxes(true);
    m_plot->xAxis->setRange(lo - 1, sx + 10);
    m_plot->yAxis->setRange(0.8, std::max(10.0, m_plot->yAxis->range().upper * 3));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace dlui

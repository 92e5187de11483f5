#include "ui/views/tensor_panel.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QLabel>
#include <QMenu>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include <iterator>
#include "core/analysis/tensor_anomaly.h"
#include "ui/models/dump_session.h"
#include "ui/style/figure_text.h"
#include "ui/style/op_names.h"
#include "ui/style/theme.h"
#include "ui/views/log2_histogram_plot.h"

namespace dlui {

namespace {

// The file name alone: the full path (often 100+ characters) is the header's tooltip.
QString fileName(const QString& path) { return path.section(QLatin1Char('/'), -1); }

QString num(double v) { return std::isnan(v) ? QStringLiteral("–") : QString::number(v, 'g', 6); }

}  // namespace

TensorPanel::TensorPanel(DumpSession* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_header(new QLabel(this)), m_plot(new Log2HistogramPlot(this)) {
    m_header->setTextFormat(Qt::RichText);
    m_header->setWordWrap(true);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Its names are elided to the width it gets (updateHeader): a 200-character name without a
    // break point held the dock, and the window, 1769 px wide. The full name is in the tooltip and
    // in "Copy full name".
    m_header->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_header->setMinimumWidth(120);
    m_header->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_header, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        QMenu menu(this);
        QAction* copySel = menu.addAction(tr("Copy"), this,
                                          [this] { QGuiApplication::clipboard()->setText(m_header->selectedText()); });
        copySel->setEnabled(m_header->hasSelectedText());
        menu.addAction(tr("Copy full name"), this, [this] { QGuiApplication::clipboard()->setText(m_fullName); })
            ->setEnabled(!m_fullName.isEmpty());
        menu.addAction(tr("Copy file path"), this, [this] { QGuiApplication::clipboard()->setText(m_filePath); })
            ->setEnabled(!m_filePath.isEmpty());
        menu.exec(m_header->mapToGlobal(pos));
    });
    m_header->setText(tr("<i>Select an op on the timeline or in the table.</i>"));
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(6, 4, 6, 4);
    lay->addWidget(m_header);
    lay->addWidget(m_plot, 1);
    connect(m_session, &DumpSession::selectionChanged, this, &TensorPanel::show);
    connect(m_session, &DumpSession::dumpChanged, this, &TensorPanel::showNothing);
}

void TensorPanel::showNothing() {
    m_op = m_tensor = 0xffffffffu;
    m_fullName.clear();
    m_filePath.clear();
    m_plot->showEmpty(tr("No tensor selected"));
    m_header->setText(tr("<i>Select an op on the timeline or in the table.</i>"));
    m_header->setToolTip({});
}

QString TensorPanel::headerText() const { return m_header->text(); }

int TensorPanel::plottedTensors() const { return m_plot->seriesCount(); }

void TensorPanel::show(quint32 op, quint32 tensor) {
    const dl::DumpIndex* ix = m_session->index();
    if (!ix) return;
    if (op >= ix->ops.size() || tensor >= ix->tensors.size()) {  // selection cleared
        showNothing();
        return;
    }
    m_op = op;
    m_tensor = tensor;
    updateHeader();
    plotOp(op, tensor);
}

void TensorPanel::resizeEvent(QResizeEvent* e) {
    QWidget::resizeEvent(e);
    updateHeader();
}

void TensorPanel::updateHeader() {
    const dl::DumpIndex* ix = m_session->index();
    if (!ix || m_op >= ix->ops.size() || m_tensor >= ix->tensors.size()) return;
    const quint32 op = m_op, tensor = m_tensor;
    // Names longer than the header is wide are elided in the middle (the op's "-op4411" end and
    // the scope's start stay); the header wraps between fields.
    const int room = std::max(60, m_header->contentsRect().width() - 4);
    const QFontMetrics fm(m_header->font());
    QFont smallFont = m_header->font();
    smallFont.setPointSizeF(smallFont.pointSizeF() * 0.83);  // <small>
    const QFontMetrics fmSmall(smallFont);
    QFont bold = m_header->font();
    bold.setBold(true);
    const QFontMetrics fmBold(bold);
    const auto fit = [room](const QFontMetrics& m, const QString& s) { return m.elidedText(s, Qt::ElideMiddle, room); };
    const dl::TensorRecord& t = ix->tensors[tensor];
    const dl::OpRecord& o = ix->ops[op];
    const auto str = [&](dl::StrId id) { return QString::fromStdString(ix->strings.str(id)).toHtmlEscaped(); };
    QStringList dims;
    for (std::int64_t d : ix->shape(t)) dims << QString::number(d);
    const dl::TensorStats s = ix->stats(t);
    QString dtype = QString::fromLatin1(dl::dtypeName(t.dtype).data());
    if (t.origDtype != dl::DType::Unknown && t.origDtype != t.dtype)
        dtype += tr(" (was %1)").arg(QString::fromLatin1(dl::dtypeName(t.origDtype).data()));
    const OpNames names = opNames(*ix, o);
    m_fullName = names.full;
    m_filePath = ix->side(t).file ? QString::fromStdString(ix->strings.str(ix->side(t).file)) : QString();
    QString h =
        QStringLiteral("<b>%1</b> <i>%2</i> · %3 · rank %4 · iteration %5<br>")
            .arg(fit(fmBold, names.shortName).toHtmlEscaped(), str(o.type), QString::fromStdString(ix->tensorLabel(t)))
            .arg(o.rank)
            .arg(o.iteration);
    // The full name (the header wraps): the short op above says which one it is.
    if (names.full != names.shortName)
        h += QStringLiteral("<small>%1</small><br>").arg(fit(fmSmall, names.full).toHtmlEscaped());
    // Statistics-only dumps name no format: no empty field ("float16 · · stats only").
    QStringList fields{tr("shape [%1]").arg(dims.join(QLatin1Char(','))), dtype};
    if (!str(t.format).isEmpty()) fields << str(t.format);
    fields << (ix->side(t).file ? fit(fm, fileName(m_filePath)).toHtmlEscaped() : tr("stats only"));
    h += fields.join(QStringLiteral(" · ")) + QStringLiteral("<br>");
    // L2 is over the finite elements (MindSpore 2.3+ statistic.csv and msprobe's Norm are inf as
    // soon as one element is): say so, and show none for a tensor without a finite element.
    const bool l2Known = s.has(dl::stat::L2) && s.count > s.nanCount + s.infCount();
    h += tr("min %1 · max %2 · mean %3 · max|x| <b>%4</b> · L2 (finite) %5 · NaN %6 · Inf %7 · saturated %8 · elements "
            "%9")
             .arg(figureText(s, dl::StatFigure::Min), figureText(s, dl::StatFigure::Max),
                  figureText(s, dl::StatFigure::Mean), figureText(s, dl::StatFigure::MaxAbs), num(l2Known ? s.l2 : NAN))
             .arg(countText(s, s.nanCount), countText(s, s.infCount()))
             .arg(s.satCount)
             .arg(s.count);
    const dl::TensorAnomaly an = dl::classifyTensor(*ix, t);
    // The share of 65504 it reaches (TensorAnomaly::fp16MaxShare) and the headroom, the room
    // left below it (0% at the limit).
    if (an.fp16MaxShare >= 0)
        h += tr(" · %1% of fp16 max · headroom %2%")
                 .arg(an.fp16MaxShare * 100, 0, 'f', 1)
                 .arg((1 - an.fp16MaxShare) * 100, 0, 'f', 1);
    m_header->setText(h);
    QString tip = m_fullName;
    if (!m_filePath.isEmpty()) tip += QLatin1Char('\n') + m_filePath;
    m_header->setToolTip(tip);
}

void TensorPanel::plotOp(quint32 op, quint32 selected) {
    const dl::DumpIndex* ix = m_session->index();
    const dl::OpRecord& o = ix->ops[op];
    m_plot->clearSeries();
    int palette = 0;
    for (quint32 ti = o.firstTensor; ti < o.firstTensor + o.tensorCount; ++ti) {
        dl::Log2Histogram hist;
        if (!ix->histogram(ix->tensors[ti], hist)) continue;
        const bool sel = ti == selected;
        const QColor c = theme::forBackground(
            sel ? theme::kSeriesSelected : theme::kSeries[palette % std::size(theme::kSeries)], this->palette());
        const QString name =
            QString::fromStdString(ix->tensorLabel(ix->tensors[ti])) + (sel ? tr(" (selected)") : QString());
        if (m_plot->addSeries(name, hist, QPen(c, sel ? 2.2 : 1.4)) && !sel) ++palette;
    }
    // NaN/Inf bars of the selected tensor alone (its statistics, so stats-only tensors count too).
    const dl::TensorStats st = selected < ix->tensors.size() ? ix->stats(ix->tensors[selected]) : dl::TensorStats{};
    Log2HistogramPlot::SpecialCounts counts{double(st.nanCount), double(st.posInfCount), double(st.negInfCount)};
    counts.text = {countText(st, st.nanCount), countText(st, st.posInfCount), countText(st, st.negInfCount)};
    m_plot->finish(counts);
}

}  // namespace dlui

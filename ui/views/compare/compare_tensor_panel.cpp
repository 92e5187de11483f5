#include "ui/views/compare/compare_tensor_panel.h"

#include <QLabel>
#include <QVBoxLayout>
#include <cmath>

#include "core/analysis/tensor_anomaly.h"
#include "ui/models/compare_session.h"
#include "ui/style/figure_text.h"
#include "ui/style/state_colors.h"
#include "ui/views/log2_histogram_plot.h"

namespace dlui {

namespace {

const QColor kRunA(0x1f, 0x77, 0xb4), kRunB(0xe0, 0x7b, 0x00);

QString num(double v) { return std::isnan(v) ? QStringLiteral("–") : QString::number(v, 'g', 6); }

QString statCell(const dl::TensorStats& s, std::uint32_t bit, double v) {
    return s.has(bit) ? num(v) : QStringLiteral("–");
}

QString shapeText(const dl::DumpIndex& ix, const dl::TensorRecord& t) {
    QStringList dims;
    for (std::int64_t d : ix.shape(t)) dims << QString::number(d);
    return QLatin1Char('[') + dims.join(QLatin1Char(',')) + QLatin1Char(']');
}

// One table row: label, run A, run B (bold where they differ).
QString row(const QString& label, const QString& a, const QString& b) {
    const bool diff = a != b;
    const auto cell = [diff](const QString& v) { return diff ? QStringLiteral("<b>%1</b>").arg(v) : v; };
    // Padded apart: A's "inf" and B's "1198.76" read as one number "inf1198.76" at 1366x768.
    return QStringLiteral(
               "<tr><td>%1</td><td align=right style='padding-left:10px'>%2</td>"
               "<td align=right style='padding-left:10px'>%3</td></tr>")
        .arg(label, cell(a), cell(b));
}

}  // namespace

CompareTensorPanel::CompareTensorPanel(CompareSession* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_header(new QLabel(this)), m_plot(new Log2HistogramPlot(this)) {
    m_header->setTextFormat(Qt::RichText);
    m_header->setWordWrap(true);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(6, 4, 6, 4);
    lay->addWidget(m_header);
    lay->addWidget(m_plot, 1);
    connect(m_session, &CompareSession::selectionChanged, this, &CompareTensorPanel::show);
    show();
}

QString CompareTensorPanel::headerText() const { return m_header->text(); }

int CompareTensorPanel::plottedSeries() const { return m_plot->seriesCount(); }

void CompareTensorPanel::show() {
    m_plot->clearSeries();
    const dl::RunComparison* c = m_session->comparison();
    const qint64 r = m_session->currentRow();
    if (!c || r < 0) {
        QString h = tr("<i>Select a tensor in the aligned table or an op on either timeline.</i>");
        if (c && m_session->currentOpA() != dl::kNoIndex && m_session->currentOpB() == dl::kNoIndex)
            h = tr("<b>%1</b> exists only in run A.")
                    .arg(m_session->opLabel(false, m_session->currentOpA()).toHtmlEscaped());
        else if (c && m_session->currentOpB() != dl::kNoIndex && m_session->currentOpA() == dl::kNoIndex)
            h = tr("<b>%1</b> exists only in run B.")
                    .arg(m_session->opLabel(true, m_session->currentOpB()).toHtmlEscaped());
        m_header->setText(h);
        m_plot->showEmpty(tr("No tensor selected"));
        return;
    }
    const dl::DumpIndex &a = *m_session->indexA(), &b = *m_session->indexB();
    const dl::TensorPair& p = c->alignment.tensors[std::size_t(r)];
    const dl::TensorRecord &ta = a.tensors[p.a], &tb = b.tensors[p.b];
    const dl::TensorComparison& row_ = c->rows[std::size_t(r)];
    const dl::TensorMetrics& m = row_.metrics;
    const QString label = QString::fromStdString(a.tensorLabel(ta));
    QString h = tr("<b>%1</b> · %2<br><span style='color:%3'>A</span> %4<br><span style='color:%5'>B</span> %6<br>")
                    .arg(QString::fromStdString(a.strings.str(a.ops[ta.op].type)).toHtmlEscaped(), label, kRunA.name(),
                         m_session->opLabel(false, ta.op).toHtmlEscaped(), kRunB.name(),
                         m_session->opLabel(true, tb.op).toHtmlEscaped());
    QString verdict;
    if (r == c->firstDivergence)
        verdict =
            tr("<b style='color:%1'>First divergence</b>").arg(compareColor(dl::CompareState::FirstDivergence).name());
    else if (row_.diverged)
        verdict = tr("<b style='color:%1'>Diverged</b>").arg(compareColor(dl::CompareState::Diverged).name());
    else
        verdict = tr("<b>Agrees</b>");
    if (!row_.reason.empty()) verdict += QStringLiteral(": ") + QString::fromStdString(row_.reason).toHtmlEscaped();
    h += verdict + QStringLiteral("<br>");
    h += m.fromData ? tr("cosine %1 · max abs err %2 · max rel err %3 · one-thousandth %4 · five-thousandth %5")
                          .arg(num(m.cosine), num(m.maxAbsErr), num(m.maxRelErr), num(m.oneThousandthRatio),
                               num(m.fiveThousandthRatio))
                    : tr("statistics only: relative differences max %1 · min %2 · mean %3 · L2 %4")
                          .arg(num(m.maxRelDiff), num(m.minRelDiff), num(m.meanRelDiff), num(m.l2RelDiff));
    const dl::TensorStats sa = a.stats(ta), sb = b.stats(tb);
    h +=
        QStringLiteral(
            "<table cellspacing=0 cellpadding=1><tr><th></th><th align=right style='color:%1; padding-left:10px'>A</th>"
            "<th align=right style='color:%2; padding-left:10px'>B</th></tr>")
            .arg(kRunA.name(), kRunB.name());
    h += row(tr("dtype"), QString::fromLatin1(dl::dtypeName(ta.dtype).data()),
             QString::fromLatin1(dl::dtypeName(tb.dtype).data()));
    h += row(tr("shape"), shapeText(a, ta), shapeText(b, tb));
    // Shown figures count infinities (a tensor holding +Inf peaks at inf), as in the main window.
    for (const auto& [label, f] : {std::pair(tr("max"), dl::StatFigure::Max), std::pair(tr("min"), dl::StatFigure::Min),
                                   std::pair(tr("mean"), dl::StatFigure::Mean)})
        h += row(label, figureText(sa, f), figureText(sb, f));
    h += row(tr("L2 norm"), statCell(sa, dl::stat::L2, sa.l2), statCell(sb, dl::stat::L2, sb.l2));
    h += row(tr("NaN / Inf"), tr("%1 / %2").arg(countText(sa, sa.nanCount), countText(sa, sa.infCount())),
             tr("%1 / %2").arg(countText(sb, sb.nanCount), countText(sb, sb.infCount())));
    h += QStringLiteral("</table>");
    m_header->setText(h);

    dl::Log2Histogram hist;
    if (a.histogram(ta, hist)) {
        QColor fill = kRunA;
        fill.setAlpha(40);
        m_plot->addSeries(tr("A %1").arg(label), hist, QPen(kRunA, 2.0), QBrush(fill));
    }
    if (b.histogram(tb, hist)) m_plot->addSeries(tr("B %1").arg(label), hist, QPen(kRunB, 2.0, Qt::DashLine));
    m_plot->finish();
}

}  // namespace dlui

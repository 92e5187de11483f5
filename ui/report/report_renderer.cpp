// qcustomplot.h uses Qt's foreach (disabled project-wide by QT_NO_FOREACH): allow it in this
// translation unit, before any Qt header is seen.
#undef QT_NO_FOREACH
#include <qcustomplot.h>

#include "ui/report/report_renderer.h"

#include <QBuffer>
#include <QGuiApplication>
#include <QPdfWriter>
#include <QSaveFile>
#include <QScreen>
#include <memory>

#include "core/query/op_state.h"
#include "core/report/pdf_outline.h"
#include "ui/report/report_figures.h"
#include "ui/report/report_layout.h"
#include "ui/style/theme.h"

namespace dlui {

namespace {

// Device units per inch = the screen's logical DPI: QCustomPlot lays out its text with screen font
// metrics, so the PDF must measure fonts the same way or labels overlap; the app's painters then
// also draw at the size they have on screen.
int reportResolution() {
    const QScreen* s = QGuiApplication::primaryScreen();
    return s ? qRound(s->logicalDotsPerInchY()) : 96;
}

QString q(const std::string& s) { return QString::fromStdString(s); }

// Everything a pass needs; the figures are built once and drawn on both passes.
struct Doc {
    const dl::DumpIndex& index;
    const dl::AnalysisResult& analysis;
    const ReportRenderOptions& options;
    dl::ReportContent content;
    dl::OpStates states;
    std::unique_ptr<TimelineExcerpt> timeline;
    std::unique_ptr<HistogramFigure> histogram;
    bool histogramOk = false;
    std::unique_ptr<GraphFigure> graph;  // made on the first pass (it needs the page's font and width)
};

void verdictSection(ReportLayout& L, const Doc& d) {
    const dl::ReportContent& c = d.content;
    QFont title = L.body();
    title.setPointSizeF(18);
    title.setBold(true);
    L.paragraph(QStringLiteral("DumpLens overflow report"), title, theme::kNavy);
    L.heading(QStringLiteral("Verdict"));
    QFont v = L.body();
    v.setPointSizeF(12);
    v.setBold(true);
    L.paragraph(q(c.verdict), v, c.overflow ? theme::kVerdictBad : theme::kVerdictGood);
    for (const std::string& s : c.summary) L.paragraph(q(s));
}

void originSection(ReportLayout& L, const Doc& d) {
    const dl::ReportContent& c = d.content;
    if (c.originOp == dl::kNoIndex) {
        L.heading(QStringLiteral("Headroom"));
        L.paragraph(QStringLiteral("How far the largest fp16 value of the run is from the fp16 maximum (65504)."),
                    L.small());
        L.fields(c.headroom);
        return;
    }
    L.heading(QStringLiteral("First overflow"));
    L.fields(c.origin);
    if (c.sourceLines.size() > 1) {
        L.paragraph(QStringLiteral("Source trace (graph IR):"), L.bold());
        L.bullets(c.sourceLines, QStringLiteral("›"));
    }
}

void chainSection(ReportLayout& L, const Doc& d) {
    const dl::ReportContent& c = d.content;
    if (c.chain.empty()) return;
    L.heading(QStringLiteral("Chain across stages"));
    L.paragraph(
        QStringLiteral("Each box is a run of chain steps on one pipeline stage, in causal order; arrows follow the "
                       "damage from the origin."),
        L.small());
    const int line = L.lineHeight(L.small());
    const int h = chainDiagramHeight(c, L.contentWidth(), line);
    L.figure(h, [&](QCPPainter& p, const QRect& r) { drawChainDiagram(p, r, c, L.small(), line); });
    L.table(c.chainTable, {0.4, 1.1, 2.4, 0.6, 0.7, 0.6, 1.6, 2.8});
}

void graphSection(ReportLayout& L, Doc& d) {
    const dl::ReportContent& c = d.content;
    if (c.originOp == dl::kNoIndex) return;
    if (!d.graph)
        d.graph = std::make_unique<GraphFigure>(d.index, d.analysis, d.states, c.originOp, L.small(), L.contentWidth(),
                                                static_cast<int>(L.contentWidth() * 1.1));
    const dl::OpRecord& o = d.index.ops[c.originOp];
    if (!d.graph->available()) {
        L.heading(QStringLiteral("Graph around the origin"));
        const QString reason = d.graph->reason();
        if (reason.startsWith(QLatin1String("no graph IR")))
            L.paragraph(QStringLiteral("The dump has no graph IR for rank %1 (MindSpore writes it in graph mode, as "
                                       "rank_N/graphs/*.ir), so there is no graph of the origin's producers and "
                                       "consumers.")
                            .arg(o.rank));
        else
            L.paragraph(QStringLiteral("No graph of the origin's producers and consumers: %1.").arg(reason));
        return;
    }
    L.ensure(d.graph->height() + 6 * L.lineHeight(L.body()));
    L.heading(QStringLiteral("Graph around the origin"));
    L.paragraph(
        QStringLiteral("Producers (left) and consumers (right) of %1 up to %2 along the dataflow of "
                       "rank %3's graph IR, laid out as the app's Graph tab draws it. Colours as on the "
                       "timeline (purple: origin, red: inf/nan, orange: saturated, yellow: near the limit); "
                       "thick purple edges and navy frames: the chain's path; dashed: not dumped.")
            .arg(q(d.index.strings.str(o.name)),
                 d.graph->hops() == 1 ? QStringLiteral("1 hop") : QStringLiteral("%1 hops").arg(d.graph->hops()))
            .arg(o.rank),
        L.small());
    L.figure(d.graph->height(), [&](QCPPainter& p, const QRect& r) { d.graph->paint(p, r); });
}

void timelineSection(ReportLayout& L, const Doc& d) {
    const dl::ReportContent& c = d.content;
    if (c.originOp == dl::kNoIndex) return;
    // Keep the heading on the page of its figure.
    if (d.timeline && d.timeline->available()) L.ensure(d.timeline->height() + 5 * L.lineHeight(L.body()));
    L.heading(QStringLiteral("Timeline around the origin"));
    if (d.timeline && d.timeline->available()) {
        L.paragraph(
            QStringLiteral("Iteration %1, all ranks grouped by stage, zoomed to the ops around the origin "
                           "(blue frame; purple: origin, red: inf/nan, orange: saturated, yellow: near the limit).")
                .arg(c.iteration),
            L.small());
        L.figure(d.timeline->height(), [&](QCPPainter& p, const QRect& r) { d.timeline->paint(p, r); });
    }
    L.paragraph(
        QStringLiteral("The origin's neighbours in execution order on rank %1:").arg(d.index.ops[c.originOp].rank),
        L.small());
    L.table(c.timelineNeighbours, {0.6, 3.2, 1.4, 1.2, 2.0});
}

void histogramSection(ReportLayout& L, const Doc& d) {
    const dl::ReportContent& c = d.content;
    if (c.originOp == dl::kNoIndex) return;
    if (d.histogramOk) L.ensure(static_cast<int>(L.contentWidth() * 0.5) + 5 * L.lineHeight(L.body()));
    L.heading(QStringLiteral("Histograms of the origin's inputs and outputs"));
    if (d.histogramOk) {
        L.paragraph(
            QStringLiteral("log2|x| per tensor of %1 (red: the tensor that overflowed) against the fp16 maximum "
                           "65504 (2^16) and the bf16 maximum 3.4e38 (2^128); NaN/Inf in their own bars.")
                .arg(q(d.index.strings.str(d.index.ops[c.originOp].name))),
            L.small());
        const int h = static_cast<int>(L.contentWidth() * 0.5);
        L.figure(h, [&](QCPPainter& p, const QRect& r) { d.histogram->paint(p, r); });
    } else {
        L.paragraph(QStringLiteral("No histogram: the dump holds statistics only for this op."), L.small());
    }
    dl::ReportTable t;
    t.columns = {"Tensor", "dtype", "max|x|", "% of fp16 max", "Anomalous"};
    for (const auto& h : c.histogramTensors) {
        t.rows.push_back({h.label, h.dtype, h.maxAbs >= 0 ? dl::reportNumber(h.maxAbs) : "-",
                          h.maxAbs >= 0 ? QString::number(h.maxAbs / 655.04, 'f', 1).toStdString() + "%" : "-",
                          h.anomalous ? "YES" : "no"});
        t.emphasis.push_back(h.anomalous);
    }
    L.table(t);
}

void replaySection(ReportLayout& L, const Doc& d) {
    const dl::ReportContent& c = d.content;
    if (c.replayStatus.empty() && c.recommendation.empty()) return;
    L.heading(QStringLiteral("Replay and recommendation"));
    L.paragraph(q(c.replayStatus));
    L.table(c.replay);
    if (!c.replayNotes.empty()) L.bullets(c.replayNotes);
    if (!c.recommendation.empty()) {
        QFont f = L.body();
        f.setPointSizeF(10.5);
        f.setBold(true);
        L.paragraph(QStringLiteral("Recommendation%1: %2")
                        .arg(c.recommendationFromReplay ? QString() : QStringLiteral(" (rule of thumb, no replay)"),
                             q(c.recommendation)),
                    f, theme::kNavy);
    }
}

void listsSection(ReportLayout& L, const Doc& d) {
    const dl::ReportContent& c = d.content;
    if (!c.iterations.empty()) {
        L.heading(QStringLiteral("Iterations"));
        L.table(c.iterations, {1, 1, 1, 3});
    }
    L.heading(QStringLiteral("Near the fp16 limit"));
    L.paragraph(QStringLiteral("%1 tensor(s) with max|x| at or above %2% of 65504%3.")
                    .arg(c.nearLimitTotal)
                    .arg(c.nearLimitThreshold * 100)
                    .arg(c.nearLimitTotal > c.nearLimit.rows.size()
                             ? QStringLiteral(" (the %1 closest are listed)").arg(c.nearLimit.rows.size())
                             : QString()));
    L.table(c.nearLimit, {3, 1.3, 1.6, 1, 1, 0.6, 0.6});
    if (!d.options.comparison.empty()) {
        L.heading(QStringLiteral("Comparison"));
        L.bullets(d.options.comparison);
    }
    L.heading(QStringLiteral("Evidence and warnings"));
    if (!c.evidence.empty()) L.bullets(c.evidence);
    if (c.warnings.empty())
        L.paragraph(QStringLiteral("No warnings from the analysis."));
    else
        L.bullets(c.warnings, QStringLiteral("!"));
    if (c.warningsTotal > c.warnings.size())
        L.paragraph(QStringLiteral("… and %1 more warning(s).").arg(c.warningsTotal - c.warnings.size()), L.small());
    if (c.unreadableTotal) {
        L.heading(QStringLiteral("Appendix: files that could not be read"));
        L.paragraph(QStringLiteral("%1 file(s) or folder(s) could not be read; the verdict covers only what could.")
                        .arg(c.unreadableTotal));
        L.bullets(c.unreadable, QStringLiteral("!"));
        if (c.unreadableTotal > c.unreadable.size())
            L.paragraph(QStringLiteral("… and %1 more.").arg(c.unreadableTotal - c.unreadable.size()), L.small());
    }
}

// One layout pass; totalPages 0 when counting.
bool renderPass(Doc& d, int totalPages, QByteArray& bytes, ReportRenderInfo& info,
                std::vector<dl::PdfOutlineEntry>& outline, QString& error) {
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QPdfWriter writer(&buffer);
    writer.setResolution(reportResolution());
    writer.setPageLayout(QPageLayout(QPageSize(d.options.pageSize), QPageLayout::Portrait, QMarginsF(0, 0, 0, 0)));
    writer.setTitle(QStringLiteral("DumpLens overflow report: %1").arg(q(d.index.root)));
    writer.setCreator(QStringLiteral("DumpLens " DUMPLENS_VERSION));
    QCPPainter painter;
    if (!painter.begin(&writer)) {
        error = QStringLiteral("could not start the PDF painter");
        return false;
    }
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    painter.setRenderHint(QPainter::Antialiasing);
    const QString stamp =
        QStringLiteral("%1 · DumpLens %2")
            .arg(d.options.generated.toString(QStringLiteral("yyyy-MM-dd HH:mm")), QStringLiteral(DUMPLENS_VERSION));
    {
        ReportLayout L(writer, painter, QStringLiteral("DumpLens overflow report · %1").arg(q(d.index.root)), stamp,
                       totalPages);
        verdictSection(L, d);
        originSection(L, d);
        L.heading(QStringLiteral("Run"));
        L.fields(d.content.run);
        chainSection(L, d);
        graphSection(L, d);
        timelineSection(L, d);
        histogramSection(L, d);
        replaySection(L, d);
        listsSection(L, d);
        info.pages = L.pageIndex() + 1;
        outline = L.outline();
    }
    painter.end();
    return true;
}

}  // namespace

bool parsePageSize(const QString& name, QPageSize::PageSizeId& out) {
    if (name.compare(QLatin1String("A4"), Qt::CaseInsensitive) == 0)
        out = QPageSize::A4;
    else if (name.compare(QLatin1String("Letter"), Qt::CaseInsensitive) == 0)
        out = QPageSize::Letter;
    else
        return false;
    return true;
}

bool renderReportPdf(const dl::DumpIndex& index, const dl::AnalysisResult& analysis, const ReportRenderOptions& options,
                     QByteArray& pdf, ReportRenderInfo& info, QString& error) {
    Doc d{index,
          analysis,
          options,
          dl::buildReportContent(index, analysis, options.content),
          dl::computeOpStates(index, &analysis, analysis.nearLimitThreshold),
          nullptr,
          nullptr,
          false};
    if (d.content.originOp != dl::kNoIndex) {
        d.timeline =
            std::make_unique<TimelineExcerpt>(index, analysis, d.states, d.content.originOp, d.content.iteration);
        d.histogram = std::make_unique<HistogramFigure>(index, analysis, d.states);
        d.histogramOk = d.histogram->plot(d.content.originOp, d.content.originTensor);
    }
    std::vector<dl::PdfOutlineEntry> outline;
    QByteArray counting;
    if (!renderPass(d, 0, counting, info, outline, error)) return false;
    pdf.clear();
    const int pages = info.pages;
    if (!renderPass(d, pages, pdf, info, outline, error)) return false;
    if (info.pages != pages) {
        error = QStringLiteral("page count changed between layout passes (%1 vs %2)").arg(pages).arg(info.pages);
        return false;
    }
    std::string bytes(pdf.constData(), static_cast<std::size_t>(pdf.size()));
    std::string err;
    if (!dl::addPdfOutline(bytes, outline, err)) {
        error = QStringLiteral("could not add the PDF outline: %1").arg(q(err));
        return false;
    }
    pdf = QByteArray(bytes.data(), static_cast<qsizetype>(bytes.size()));
    info.sections.clear();
    for (const auto& e : outline) info.sections.push_back(e.title);
    return true;
}

bool writeReportPdf(const dl::DumpIndex& index, const dl::AnalysisResult& analysis, const ReportRenderOptions& options,
                    const QString& path, ReportRenderInfo& info, QString& error) {
    // As `dumplens-cli report` does: a dump with nothing readable has no verdict to report.
    if (analysis.noData) {
        error = QStringLiteral("No data: nothing readable in %1; no report written")
                    .arg(QString::fromStdString(index.root));
        return false;
    }
    QByteArray pdf;
    if (!renderReportPdf(index, analysis, options, pdf, info, error)) return false;
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(pdf) != pdf.size() || !f.commit()) {
        error = QStringLiteral("could not write %1: %2").arg(path, f.errorString());
        return false;
    }
    return true;
}

}  // namespace dlui

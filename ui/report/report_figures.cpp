// qcustomplot.h uses Qt's foreach (disabled project-wide by QT_NO_FOREACH): allow it in this
// translation unit, before any Qt header is seen.
#undef QT_NO_FOREACH
#include <qcustomplot.h>

#include "ui/report/report_figures.h"

#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

#include "core/analysis/rank_dataflow.h"
#include "core/query/op_graph_layout.h"
#include "ui/models/dump_session.h"
#include "ui/style/state_colors.h"
#include "ui/style/theme.h"
#include "ui/views/graph/graph_scene.h"
#include "ui/views/log2_histogram_plot.h"
#include "ui/views/tensor_panel.h"

namespace dlui {

namespace {

constexpr int kBoxLines = 5;  // steps listed per box before "+N more"
constexpr int kGap = 56;      // horizontal space between boxes (holds the arrow)
constexpr int kMinBoxWidth = 220, kMaxBoxWidth = 320;

QString stepLine(const dl::ReportChainStep& s) {
    return QStringLiteral("%1: %2  r%3 it%4  %5")
        .arg(QString::fromStdString(s.role), QString::fromStdString(s.opType))
        .arg(s.rank)
        .arg(s.iteration)
        .arg(QString::fromStdString(s.kind));
}

QString viaLabel(const std::string& via) {
    if (via == "send_receive") return QStringLiteral("Send/Recv");
    if (via == "collective") return QStringLiteral("collective");
    if (via == "weight_update") return QStringLiteral("weights");
    if (via == "clock_only") return QStringLiteral("clock only");
    if (via == "same_rank") return QStringLiteral("same rank");
    if (via == "dataflow") return QStringLiteral("dataflow");
    return {};
}

// Between two rows of boxes: the arrow's drop with its label beside it, then its head.
int rowGap(int line) { return std::max(kGap / 2, line + 22); }

int boxesPerRow(int width, std::size_t boxes) {
    const int fit = std::max(1, (width + kGap) / (kMinBoxWidth + kGap));
    return static_cast<int>(std::min<std::size_t>(boxes, static_cast<std::size_t>(fit)));
}

int boxHeight(const dl::ReportChainBox& b, int line) {
    const int lines = std::min<int>(static_cast<int>(b.steps.size()), kBoxLines) + (b.steps.size() > kBoxLines ? 1 : 0);
    return (lines + 1) * line + line / 2 + 8;
}

QColor roleColor(const std::string& role) {
    if (role == "origin") return stateColor(dl::OpState::Origin);
    if (role == "send" || role == "receive") return theme::kSelection;
    return stateColor(dl::OpState::InfNan);
}

void arrow(QPainter& p, QPointF a, QPointF b) {
    p.drawLine(a, b);
    const QPointF d = (b - a) / std::max(1.0, std::hypot(b.x() - a.x(), b.y() - a.y()));
    const QPointF n(-d.y(), d.x());
    QPainterPath head;
    head.moveTo(b);
    head.lineTo(b - d * 12 + n * 6);
    head.lineTo(b - d * 12 - n * 6);
    head.closeSubpath();
    p.fillPath(head, p.pen().color());
}

}  // namespace

int chainDiagramHeight(const dl::ReportContent& c, int width, int line) {
    if (c.chain.empty()) return 0;
    const int perRow = boxesPerRow(width, c.chain.size());
    int h = 0;
    for (std::size_t i = 0; i < c.chain.size(); i += perRow) {
        int row = 0;
        for (std::size_t k = i; k < std::min(c.chain.size(), i + perRow); ++k)
            row = std::max(row, boxHeight(c.chain[k], line));
        h += row + rowGap(line);
    }
    return h;
}

void drawChainDiagram(QCPPainter& p, const QRect& r, const dl::ReportContent& c, const QFont& font, int line) {
    if (c.chain.empty()) return;
    p.setFont(font);
    const int perRow = boxesPerRow(r.width(), c.chain.size());
    const int boxW = std::min((r.width() - (perRow - 1) * kGap) / perRow, kMaxBoxWidth);
    int y = r.top();
    QRectF prev;
    for (std::size_t i = 0; i < c.chain.size(); i += perRow) {
        int rowH = 0;
        for (std::size_t k = i; k < std::min(c.chain.size(), i + perRow); ++k)
            rowH = std::max(rowH, boxHeight(c.chain[k], line));
        for (std::size_t k = i; k < std::min(c.chain.size(), i + perRow); ++k) {
            const dl::ReportChainBox& b = c.chain[k];
            const QRectF box(r.left() + static_cast<int>(k - i) * (boxW + kGap), y, boxW, boxHeight(b, line));
            const bool origin = !b.steps.empty() && b.steps.front().role == "origin";
            p.setPen(QPen(origin ? stateColor(dl::OpState::Origin) : theme::kNodeBorder, origin ? 2.5 : 1.2));
            p.setBrush(origin ? theme::kOriginFill : theme::kPanelFill);
            p.drawRoundedRect(box, 8, 8);
            QFont hf = font;
            hf.setBold(true);
            p.setFont(hf);
            p.setPen(Qt::black);
            p.drawText(box.adjusted(8, 4, -8, 0), Qt::AlignLeft | Qt::AlignTop,
                       (b.stage >= 0 ? QStringLiteral("Stage %1").arg(b.stage) : QStringLiteral("Stage ?")) +
                           QStringLiteral(" · iteration %1").arg(b.iteration));
            p.setFont(font);
            int ly = static_cast<int>(box.top()) + 4 + line + line / 4;
            for (std::size_t s = 0; s < b.steps.size() && s < kBoxLines; ++s, ly += line) {
                p.setPen(roleColor(b.steps[s].role));
                p.drawText(
                    QRectF(box.left() + 8, ly, box.width() - 16, line), Qt::AlignLeft | Qt::AlignVCenter,
                    QFontMetricsF(font, p.device()).elidedText(stepLine(b.steps[s]), Qt::ElideRight, box.width() - 16));
            }
            if (b.steps.size() > kBoxLines) {
                p.setPen(Qt::darkGray);
                p.drawText(QRectF(box.left() + 8, ly, box.width() - 16, line), Qt::AlignLeft | Qt::AlignVCenter,
                           QStringLiteral("+%1 more").arg(b.steps.size() - kBoxLines));
            }
            if (!prev.isNull()) {
                const bool weights = b.via == "weight_update";
                p.setPen(
                    QPen(weights ? theme::kWeightUpdate : theme::kEdge, 2, weights ? Qt::DashLine : Qt::SolidLine));
                // Through what the damage crossed (the link of the box's first step), beside its
                // arrow and clear of it and of its head (a label on the line was unreadable).
                const QString via = viaLabel(b.via);
                const QColor viaColor = weights ? theme::kWeightUpdate : theme::kEdge;
                if (k == i) {
                    // First box of a new row: from the previous row's last box down, left along
                    // the gap and down into the box; the label right of the first drop, where no
                    // line runs.
                    const QPointF start(prev.center().x(), prev.bottom());
                    const double rowAbove = y - rowGap(line);  // the bottom of the row above's tallest box
                    const double elbowY = rowAbove + line + 6;
                    p.drawLine(start, QPointF(start.x(), elbowY));
                    p.drawLine(QPointF(start.x(), elbowY), QPointF(box.center().x(), elbowY));
                    arrow(p, QPointF(box.center().x(), elbowY), QPointF(box.center().x(), box.top()));
                    if (!via.isEmpty()) {
                        p.setPen(viaColor);
                        p.drawText(QRectF(start.x() + 6, rowAbove + 2, 260, line), Qt::AlignLeft | Qt::AlignVCenter,
                                   via);
                    }
                } else {
                    const QPointF from(prev.right(), prev.top() + line), to(box.left(), box.top() + line);
                    arrow(p, from, to);
                    if (!via.isEmpty()) {  // under the arrow, below its head's half width (6)
                        p.setPen(viaColor);
                        p.drawText(QRectF(from.x(), from.y() + 9, to.x() - from.x(), line * 2),
                                   Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap, via);
                    }
                }
            }
            prev = box;
        }
        y += rowH + rowGap(line);
    }
}

TimelineExcerpt::TimelineExcerpt(const dl::DumpIndex& index, const dl::AnalysisResult& analysis,
                                 const dl::OpStates& states, std::uint32_t op, std::uint32_t iteration)
    : m_op(op) {
    dl::TimelineOptions opt;
    opt.iteration = iteration;
    auto data = std::make_shared<const dl::TimelineData>(dl::buildTimeline(index, &analysis, states, opt));
    std::size_t lane = 0, item = 0;
    if (data->lanes.empty() || !data->locate(op, lane, item)) return;
    m_vp.setDataRange(data->t0, data->t1);
    // A dozen ops either side of the origin on its own lane.
    const auto& items = data->lanes[lane].items;
    const std::size_t a = item >= 12 ? item - 12 : 0, b = std::min(items.size() - 1, item + 12);
    const double from = static_cast<double>(items[a].start - data->t0),
                 to = static_cast<double>(items[b].end - data->t0);
    const double pad = std::max((to - from) * 0.05, 1.0);
    m_vp.zoomTo(from - pad, to + pad);
    m_painter.setData(std::move(data), &index);
    m_ok = true;
}

int TimelineExcerpt::height() const {
    return TimelinePainter::kOverviewHeight + TimelinePainter::kRulerHeight + m_painter.contentHeight() + 4;
}

void TimelineExcerpt::paint(QCPPainter& p, const QRect& r) {
    TimelinePaintState st;
    st.selectedOp = m_op;
    m_painter.paint(p, r, m_vp, st);
    p.setPen(theme::kGridLine);
    p.setBrush(Qt::NoBrush);
    p.drawRect(r);
}

GraphFigure::GraphFigure(const dl::DumpIndex& index, const dl::AnalysisResult& analysis, const dl::OpStates& states,
                         std::uint32_t op, const QFont& font, int width, int maxHeight) {
    dl::RankDataflow flow(index);
    GraphSceneStyle style;
    style.font = font;
    QFont bold = font;
    bold.setBold(true);
    const QFontMetricsF fm(font), fmb(bold);
    // Three lines per box, a node a little wider than its 22-character lines, the gaps holding the curves.
    GraphGeometry& geo = style.geometry;
    geo.nodeW = std::ceil(fm.averageCharWidth() * 22 + 12);
    geo.nodeH = std::ceil(fmb.height() + 2 * fm.height() + 8);
    geo.layerGap = geo.nodeW + 32;
    geo.rowGap = geo.nodeH + 12;
    constexpr double kLegible = 0.8;  // the smallest scale at which the text stays readable on paper
    for (int hops = 2; hops >= 1; --hops) {
        dl::OpGraph g;
        std::string error;
        if (!dl::buildOpGraph(index, &analysis, states, flow, op, hops, g, error, dl::kMaxGraphNodes)) {
            m_reason = QString::fromStdString(error);
            return;
        }
        const dl::OpGraphLayout l = dl::layoutOpGraph(g);
        const double needW = (l.layers - 1) * geo.layerGap + geo.nodeW + 24,
                     needH = std::max(1, l.maxRows) * geo.rowGap + 24;
        const double scale = std::min({1.0, width / needW, maxHeight / needH});
        if (scale < kLegible && hops > 1) continue;
        style.thirdLines.clear();
        for (const dl::OpGraphNode& n : g.nodes) style.thirdLines << graphNodeStateLine(index, n);
        m_scene = std::make_unique<QGraphicsScene>();
        m_source = populateGraphScene(*m_scene, g, l, style).adjusted(-12, -12, 12, 12);
        m_height = int(
            std::ceil(m_source.height() * std::min({1.0, width / m_source.width(), maxHeight / m_source.height()})));
        m_hops = g.hops;
        m_graph = std::move(g);
        m_ok = true;
        return;
    }
}

GraphFigure::~GraphFigure() = default;

void GraphFigure::paint(QCPPainter& p, const QRect& r) {
    if (!m_ok) return;
    // Scaled down to the width when wider (never up), centred across it.
    const double scale = std::min({1.0, r.width() / m_source.width(), r.height() / m_source.height()});
    const QSizeF size = m_source.size() * scale;
    const QRectF target(r.left() + (r.width() - size.width()) / 2, r.top(), size.width(), size.height());
    m_scene->render(&p, target, m_source, Qt::KeepAspectRatio);
}

HistogramFigure::HistogramFigure(const dl::DumpIndex& index, const dl::AnalysisResult& analysis,
                                 const dl::OpStates& states)
    : m_session(std::make_unique<DumpSession>()) {
    auto dump = std::make_shared<LoadedDump>();
    dump->ok = true;
    // Non-owning: the caller keeps the index and analysis alive for this figure's lifetime.
    dump->index = std::shared_ptr<const dl::DumpIndex>(&index, [](const dl::DumpIndex*) {});
    dump->analysis = std::shared_ptr<const dl::AnalysisResult>(&analysis, [](const dl::AnalysisResult*) {});
    dump->states = std::shared_ptr<const dl::OpStates>(&states, [](const dl::OpStates*) {});
    m_panel = std::make_unique<TensorPanel>(m_session.get());
    m_session->setDump(std::move(dump));
}

HistogramFigure::~HistogramFigure() {
    m_panel.reset();  // the panel listens to the session: destroy it first
}

bool HistogramFigure::plot(std::uint32_t op, std::uint32_t highlight) {
    m_session->select(op, highlight);
    return m_panel->plottedTensors() > 0;
}

void HistogramFigure::paint(QCPPainter& p, const QRect& r) {
    QCustomPlot* plot = m_panel->plot();
    plot->resize(r.size());
    plot->replot(QCustomPlot::rpImmediateRefresh);
    p.translate(r.topLeft());
    plot->toPainter(&p, r.width(), r.height());
}

}  // namespace dlui

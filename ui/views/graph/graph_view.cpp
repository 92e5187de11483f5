#include "ui/views/graph/graph_view.h"

#include <QFontMetrics>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsView>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainterPath>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <mutex>

#include "core/analysis/rank_dataflow.h"
#include "ui/jobs/background_task.h"
#include "ui/models/dump_session.h"
#include "ui/style/state_colors.h"
#include "ui/style/theme.h"
#include "ui/views/graph/graph_scene.h"

namespace dlui {

// The open dump's IR reader: the analysis's (its origin's rank already read), else one read on
// first use on the worker; shared by the builds of one dump (a superseded build may still be
// running, hence the lock).
struct GraphFlow {
    explicit GraphFlow(LoadedDumpPtr d)
        : dump(std::move(d)),
          flow(dump->dataflow ? dump->dataflow : std::make_shared<dl::RankDataflow>(*dump->index)) {}
    LoadedDumpPtr dump;
    std::mutex lock;
    std::shared_ptr<dl::RankDataflow> flow;
};

namespace {

constexpr GraphGeometry kGeometry;
constexpr double kNodeW = kGeometry.nodeW, kNodeH = kGeometry.nodeH;
constexpr int kNodeRole = kGraphNodeRole;

QPointF scenePos(const dl::OpGraphPoint& p) { return graphScenePos(p, kGeometry); }

QString hopsText(int hops) { return hops == 1 ? QObject::tr("1 hop") : QObject::tr("%1 hops").arg(hops); }

struct Built {
    bool ok = false;
    QString error;
    dl::OpGraph graph;
    dl::OpGraphLayout layout;
    QStringList tips;
};

}  // namespace

GraphView::GraphView(DumpSession* session, QWidget* parent)
    : QWidget(parent),
      m_session(session),
      m_task(new BackgroundTask(this)),
      m_message(new QLabel(this)),
      m_hopsBox(new QSpinBox(this)),
      m_summary(new QLabel(this)),
      m_view(new QGraphicsView(this)),
      m_scene(new QGraphicsScene(this)) {
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    m_message->setObjectName(QStringLiteral("graphMessage"));
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_message->setStyleSheet(QStringLiteral("color: %1; padding: 12px;").arg(theme::kTextMuted.name()));
    m_view->setScene(m_scene);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setBackgroundBrush(theme::kCanvas);
    m_view->setDragMode(QGraphicsView::ScrollHandDrag);
    m_view->viewport()->installEventFilter(this);
    // The bar: how far the neighbourhood reaches, and what it holds.
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 3, 6, 3);
    auto* hopsLabel = new QLabel(tr("&Hops:"), this);
    hopsLabel->setBuddy(m_hopsBox);
    m_hopsBox->setObjectName(QStringLiteral("graphHops"));
    m_hopsBox->setRange(1, kMaxHops);
    m_hopsBox->setValue(m_hops);
    m_hopsBox->setToolTip(
        tr("Producers and consumers up to this many edges from the centre op (as dumplens-cli graph --hops)"));
    m_hopsBox->setKeyboardTracking(false);
    m_summary->setObjectName(QStringLiteral("graphSummary"));
    m_summary->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // never widens the dock
    m_summary->setStyleSheet(QStringLiteral("color: %1;").arg(theme::kTextMuted.name()));
    bar->addWidget(hopsLabel);
    bar->addWidget(m_hopsBox);
    bar->addSpacing(10);
    bar->addWidget(m_summary, 1);
    lay->addLayout(bar);
    connect(m_hopsBox, &QSpinBox::valueChanged, this, &GraphView::setHops);
    lay->addWidget(m_message);
    lay->addWidget(m_view, 1);
    connect(m_session, &DumpSession::dumpChanged, this, &GraphView::onDumpChanged);
    connect(m_session, &DumpSession::selectionChanged, this, [this](quint32 op, quint32) { onSelection(op); });
    showMessage(tr("Open a dump with MindSpore's graph IR to see an op's producers and consumers."));
}

GraphView::~GraphView() = default;

QString GraphView::summary() const { return m_summary->text(); }

void GraphView::setHops(int hops) {
    hops = std::clamp(hops, 1, kMaxHops);
    if (hops == m_hops) return;
    m_hops = hops;
    if (m_hopsBox->value() != hops) m_hopsBox->setValue(hops);  // re-enters with m_hops == hops: no-op
    const quint32 op = m_building ? m_wanted : m_centreOp;
    if (op != dl::kNoIndex && m_flow) build(op);
}

QString GraphView::message() const { return m_message->isHidden() ? QString() : m_message->text(); }

void GraphView::showMessage(const QString& text) {
    m_scene->clear();
    m_graph = {};
    m_layout = {};
    m_centreOp = dl::kNoIndex;
    m_summary->clear();
    m_message->setText(text);
    m_message->show();
    m_view->hide();
}

void GraphView::onDumpChanged() {
    ++m_generation;
    m_task->cancel();
    m_building = false;
    m_wanted = dl::kNoIndex;
    const LoadedDumpPtr d = m_session->dump();
    m_flow = d && d->index ? std::make_shared<GraphFlow>(d) : nullptr;
    if (!d || !d->index)
        return showMessage(tr("Open a dump with MindSpore's graph IR to see an op's producers and consumers."));
    if (!d->analysis || d->statesPending()) return showMessage(tr("The graph shows once the analysis has run…"));
    const quint32 op = m_session->currentOp() != dl::kNoIndex ? m_session->currentOp()
        : d->analysis->firstOverflow                          ? d->analysis->firstOverflow->op
                                                              : dl::kNoIndex;
    if (op == dl::kNoIndex) return showMessage(tr("Select an op to see its producers and consumers in the graph IR."));
    build(op);
}

void GraphView::onSelection(quint32 op) {
    if (!m_flow || !m_session->analysis() || m_session->dump()->statesPending()) return;
    if (op == dl::kNoIndex) return highlight(op);
    if (m_building && op == m_wanted) return;
    for (const dl::OpGraphNode& n : m_graph.nodes)
        if (n.op == op && !m_building) return highlight(op);  // already in view: follow it there
    build(op);
}

void GraphView::build(quint32 op) {
    m_wanted = op;
    m_building = true;
    const std::shared_ptr<GraphFlow> flow = m_flow;
    const quint64 gen = m_generation;
    const int hops = m_hops;
    m_summary->setText(tr("Laying out %1 around the op…").arg(hopsText(hops)));
    m_task->start([this, flow, op, gen, hops](std::stop_token stop, const BackgroundTask::Post& post) {
        auto b = std::make_shared<Built>();
        {
            std::lock_guard guard(flow->lock);
            if (stop.stop_requested()) return;
            const LoadedDump& d = *flow->dump;
            std::string error;
            b->ok = dl::buildOpGraph(*d.index, d.analysis.get(), *d.states, *flow->flow, op, hops, b->graph, error,
                                     dl::kMaxGraphNodes);
            b->error = QString::fromStdString(error);
        }
        if (b->ok) {
            b->layout = dl::layoutOpGraph(b->graph);
            const dl::DumpIndex& ix = *flow->dump->index;
            for (const dl::OpGraphNode& n : b->graph.nodes)
                b->tips << QStringLiteral("%1\n%2 · %3 · %4")
                               .arg(QString::fromStdString(n.name),
                                    QString::fromStdString(n.opType.empty() ? n.kind : n.opType), stateText(n.state),
                                    QString::fromStdString(dl::opGraphFigure(ix, n)));
        }
        post([this, b, op, gen, hops] {
            if (gen != m_generation || op != m_wanted || hops != m_hops) return;  // a newer dump or selection took over
            m_building = false;
            if (!b->ok)
                return showMessage(tr("No graph for this op: %1 (the graph view needs MindSpore's graph IR, "
                                      "rank_N/graphs/*.ir).")
                                       .arg(b->error));
            m_graph = std::move(b->graph);
            m_layout = std::move(b->layout);
            showGraph(m_graph, m_layout, op);
            const QStringList tips = b->tips;
            for (QGraphicsItem* it : m_scene->items())
                if (it->data(kNodeRole).isValid() && !it->parentItem())
                    it->setToolTip(tips.value(it->data(kNodeRole).toInt()));
        });
    });
}

void GraphView::showGraph(const dl::OpGraph& g, const dl::OpGraphLayout& l, quint32 op) {
    m_scene->clear();
    m_centreOp = op;
    m_message->hide();
    m_view->show();
    GraphSceneStyle style;
    style.font = font();
    populateGraphScene(*m_scene, g, l, style);
    QString summary = tr("%1 nodes, %2 edges within %3").arg(g.nodes.size()).arg(g.edges.size()).arg(hopsText(g.hops));
    if (g.truncated)
        summary = tr("the nearest %1 kernels of more within 1 hop (%2 edges): the graph shows at most %3")
                      .arg(dl::kMaxGraphNodes)
                      .arg(g.edges.size())
                      .arg(dl::kMaxGraphNodes);
    else if (g.hops < g.requestedHops)
        summary += tr(" (%1 would hold more than %2 kernels)").arg(hopsText(g.requestedHops)).arg(dl::kMaxGraphNodes);
    m_summary->setText(summary);
    m_summary->setToolTip(summary);
    m_scene->setSceneRect(m_scene->itemsBoundingRect().adjusted(-30, -30, 30, 30));
    // The whole neighbourhood when it fits at a readable size, else as much of it as does (it scrolls).
    const QSizeF room = m_view->viewport()->size(), need = m_scene->sceneRect().size();
    const double scale = std::clamp(std::min(room.width() / need.width(), room.height() / need.height()), 0.6, 1.0);
    m_view->setTransform(QTransform::fromScale(scale, scale));
    highlight(m_session->currentOp());
}

void GraphView::highlight(quint32 op) {
    for (QGraphicsItem* it : m_scene->items()) {
        if (it->data(kNodeRole).isValid() && it->data(kGraphFrameRole).toBool()) delete it;  // the old frame
    }
    for (std::size_t i = 0; i < m_graph.nodes.size(); ++i) {
        if (op == dl::kNoIndex || m_graph.nodes[i].op != op) continue;
        const QPointF c = scenePos(m_layout.pos[i]);
        QPainterPath frame;
        frame.addRoundedRect(QRectF(c.x() - kNodeW / 2 - 4, c.y() - kNodeH / 2 - 4, kNodeW + 8, kNodeH + 8), 9, 9);
        auto* f = m_scene->addPath(frame, QPen(theme::kSelection, 2.5), Qt::NoBrush);
        f->setZValue(3);
        f->setData(kNodeRole, int(i));
        f->setData(kGraphFrameRole, true);
        f->setAcceptedMouseButtons(Qt::NoButton);
        m_view->centerOn(c);
    }
}

QPoint GraphView::nodeViewportPos(int i) const {
    if (i < 0 || std::size_t(i) >= m_layout.pos.size()) return {};
    return m_view->mapFromScene(scenePos(m_layout.pos[std::size_t(i)]));
}

bool GraphView::eventFilter(QObject* watched, QEvent* e) {
    if (watched == m_view->viewport() && e->type() == QEvent::MouseButtonPress) {
        const auto* me = static_cast<QMouseEvent*>(e);
        if (me->button() == Qt::LeftButton) {
            for (QGraphicsItem* it : m_view->items(me->position().toPoint())) {
                if (!it->data(kNodeRole).isValid() || it->data(kGraphFrameRole).toBool()) continue;
                const std::size_t i = std::size_t(it->data(kNodeRole).toInt());
                if (i < m_graph.nodes.size() && m_graph.nodes[i].op != dl::kNoIndex) {
                    m_session->select(m_graph.nodes[i].op);
                    return true;
                }
                break;
            }
        }
    }
    return QWidget::eventFilter(watched, e);
}

}  // namespace dlui

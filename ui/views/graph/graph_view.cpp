#include "ui/views/graph/graph_view.h"

#include <QFontMetrics>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsView>
#include <QLabel>
#include <QMouseEvent>
#include <QPainterPath>
#include <QVBoxLayout>
#include <algorithm>
#include <mutex>

#include "core/analysis/rank_dataflow.h"
#include "ui/jobs/background_task.h"
#include "ui/models/dump_session.h"
#include "ui/style/state_colors.h"
#include "ui/style/theme.h"

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

constexpr double kNodeW = 156, kNodeH = 40, kLayerGap = 220, kRowGap = 58;
constexpr int kNodeRole = 0;  // QGraphicsItem::data key: the node's index in the graph

QPointF scenePos(const dl::OpGraphPoint& p) { return {p.x * kLayerGap, p.y * kRowGap}; }

QString shortName(const std::string& scoped) {
    const QString s = QString::fromStdString(scoped);
    const qsizetype slash = s.lastIndexOf(QLatin1Char('/'));
    return slash < 0 ? s : s.mid(slash + 1);
}

bool darkFill(dl::OpState s) {
    return s == dl::OpState::Origin || s == dl::OpState::InfNan || s == dl::OpState::Saturated;
}

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
    lay->addWidget(m_message);
    lay->addWidget(m_view, 1);
    connect(m_session, &DumpSession::dumpChanged, this, &GraphView::onDumpChanged);
    connect(m_session, &DumpSession::selectionChanged, this, [this](quint32 op, quint32) { onSelection(op); });
    showMessage(tr("Open a dump with MindSpore's graph IR to see an op's producers and consumers."));
}

GraphView::~GraphView() = default;

QString GraphView::message() const { return m_message->isHidden() ? QString() : m_message->text(); }

void GraphView::showMessage(const QString& text) {
    m_scene->clear();
    m_graph = {};
    m_layout = {};
    m_centreOp = dl::kNoIndex;
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
    m_task->start([this, flow, op, gen](std::stop_token stop, const BackgroundTask::Post& post) {
        auto b = std::make_shared<Built>();
        {
            std::lock_guard guard(flow->lock);
            if (stop.stop_requested()) return;
            const LoadedDump& d = *flow->dump;
            std::string error;
            b->ok =
                dl::buildOpGraph(*d.index, d.analysis.get(), *d.states, *flow->flow, op, kDefaultHops, b->graph, error);
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
        post([this, b, op, gen] {
            if (gen != m_generation || op != m_wanted) return;  // a newer dump or selection took over
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
    // Edges first, under the nodes: a curve through each dummy, leaving a node on the side it heads to.
    for (std::size_t e = 0; e < g.edges.size(); ++e) {
        const auto& route = l.route[e];
        if (route.size() < 2 || g.edges[e].from == g.edges[e].to) continue;  // a self loop: not drawn
        QPainterPath path;
        QPointF prev = scenePos(route[0]);
        const auto side = [](QPointF at, double towardsX) {
            return at + QPointF(towardsX >= at.x() ? kNodeW / 2 : -kNodeW / 2, 0);
        };
        prev = side(prev, scenePos(route[1]).x());
        path.moveTo(prev);
        for (std::size_t i = 1; i < route.size(); ++i) {
            QPointF next = scenePos(route[i]);
            if (i + 1 == route.size()) next = side(next, prev.x());
            const double bend = (next.x() - prev.x()) / 2;
            path.cubicTo(prev + QPointF(bend, 0), next - QPointF(bend, 0), next);
            prev = next;
        }
        const bool chain = g.edges[e].onChain;
        auto* item = m_scene->addPath(path, QPen(chain ? theme::kStateOrigin : theme::kEdge, chain ? 3.2 : 1.2));
        item->setZValue(chain ? 1 : 0);
        // The arrow head, pointing along the last stretch.
        const double dir = path.pointAtPercent(1).x() >= path.pointAtPercent(0.97).x() ? 1 : -1;
        QPolygonF head;
        head << prev << prev + QPointF(-9 * dir, -4.5) << prev + QPointF(-9 * dir, 4.5);
        auto* h = m_scene->addPolygon(head, Qt::NoPen, chain ? theme::kStateOrigin : theme::kEdge);
        h->setZValue(item->zValue());
    }
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics fm(font()), fmb(bold);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const dl::OpGraphNode& n = g.nodes[i];
        const QPointF c = scenePos(l.pos[i]);
        const QRectF r(c.x() - kNodeW / 2, c.y() - kNodeH / 2, kNodeW, kNodeH);
        QPainterPath shape;
        shape.addRoundedRect(r, 6, 6);
        const bool dumped = n.op != dl::kNoIndex;
        const QColor fill = dumped ? stateColor(n.state) : theme::kStripBackground;
        QPen border(n.onChain ? theme::kNavy : theme::kNodeBorder, n.onChain ? 2.6 : 1);
        if (!dumped) border.setStyle(Qt::DashLine);
        auto* node = m_scene->addPath(shape, border, fill);
        node->setZValue(2);
        node->setData(kNodeRole, int(i));
        if (dumped) node->setCursor(Qt::PointingHandCursor);
        const QColor ink = dumped && darkFill(n.state) ? QColor(Qt::white) : theme::kText;
        const QString title = QString::fromStdString(n.opType.empty() ? n.kind : n.opType);
        const QString sub = n.kind == "kernel" ? shortName(n.name) : QString::fromStdString(n.name);
        auto* t1 = new QGraphicsSimpleTextItem(fmb.elidedText(title, Qt::ElideRight, int(kNodeW) - 10), node);
        t1->setFont(bold);
        t1->setBrush(ink);
        t1->setPos(r.left() + 6, r.top() + 3);
        auto* t2 = new QGraphicsSimpleTextItem(fm.elidedText(sub, Qt::ElideMiddle, int(kNodeW) - 10), node);
        t2->setBrush(ink);
        t2->setPos(r.left() + 6, r.top() + 3 + fmb.height());
        for (QGraphicsItem* t : {static_cast<QGraphicsItem*>(t1), static_cast<QGraphicsItem*>(t2)})
            t->setData(kNodeRole, int(i));
    }
    m_scene->setSceneRect(m_scene->itemsBoundingRect().adjusted(-30, -30, 30, 30));
    // The whole neighbourhood when it fits at a readable size, else as much of it as does (it scrolls).
    const QSizeF room = m_view->viewport()->size(), need = m_scene->sceneRect().size();
    const double scale = std::clamp(std::min(room.width() / need.width(), room.height() / need.height()), 0.6, 1.0);
    m_view->setTransform(QTransform::fromScale(scale, scale));
    highlight(m_session->currentOp());
}

void GraphView::highlight(quint32 op) {
    for (QGraphicsItem* it : m_scene->items()) {
        if (it->data(kNodeRole).isValid() && it->data(kNodeRole + 1).toBool()) delete it;  // the old frame
    }
    for (std::size_t i = 0; i < m_graph.nodes.size(); ++i) {
        if (op == dl::kNoIndex || m_graph.nodes[i].op != op) continue;
        const QPointF c = scenePos(m_layout.pos[i]);
        QPainterPath frame;
        frame.addRoundedRect(QRectF(c.x() - kNodeW / 2 - 4, c.y() - kNodeH / 2 - 4, kNodeW + 8, kNodeH + 8), 9, 9);
        auto* f = m_scene->addPath(frame, QPen(theme::kSelection, 2.5), Qt::NoBrush);
        f->setZValue(3);
        f->setData(kNodeRole, int(i));
        f->setData(kNodeRole + 1, true);
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
                if (!it->data(kNodeRole).isValid() || it->data(kNodeRole + 1).toBool()) continue;
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

#include "ui/views/graph/graph_scene.h"

#include <QCursor>
#include <QFontMetrics>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QPainterPath>
#include <cmath>

#include "ui/style/state_colors.h"
#include "ui/style/theme.h"

namespace dlui {

namespace {

QString shortName(const std::string& scoped) {
    const QString s = QString::fromStdString(scoped);
    const qsizetype slash = s.lastIndexOf(QLatin1Char('/'));
    return slash < 0 ? s : s.mid(slash + 1);
}

bool darkFill(dl::OpState s) {
    return s == dl::OpState::Origin || s == dl::OpState::InfNan || s == dl::OpState::Saturated;
}

}  // namespace

QPointF graphScenePos(const dl::OpGraphPoint& p, const GraphGeometry& g) { return {p.x * g.layerGap, p.y * g.rowGap}; }

QString graphNodeStateLine(const dl::DumpIndex& index, const dl::OpGraphNode& n) {
    if (n.kind == "kernel" && n.op == dl::kNoIndex) return QStringLiteral("not dumped");
    if (n.worstTensor == dl::kNoIndex) return stateText(n.state);
    // opGraphFigure's figures, at 5 significant digits (65504, 47580, 0.45679) to fit a box.
    const dl::TensorStats st = index.stats(index.tensors[n.worstTensor]);
    QStringList parts;
    if (st.infCount()) parts << QStringLiteral("%1 inf").arg(st.infCount());
    if (st.nanCount) parts << QStringLiteral("%1 nan").arg(st.nanCount);
    if (std::isfinite(st.maxAbs)) parts << QStringLiteral("max|x| %1").arg(QString::number(st.maxAbs, 'g', 5));
    return parts.isEmpty() ? stateText(n.state)
                           : stateText(n.state) + QStringLiteral(" · ") + parts.join(QStringLiteral(", "));
}

QRectF populateGraphScene(QGraphicsScene& scene, const dl::OpGraph& g, const dl::OpGraphLayout& l,
                          const GraphSceneStyle& s) {
    QRectF bounds;
    const GraphGeometry& geo = s.geometry;
    const auto pos = [&](const dl::OpGraphPoint& p) { return graphScenePos(p, geo); };
    // Edges first, under the nodes: a curve through each dummy, leaving a node on the side it heads to.
    for (std::size_t e = 0; e < g.edges.size(); ++e) {
        const auto& route = l.route[e];
        if (route.size() < 2 || g.edges[e].from == g.edges[e].to) continue;  // a self loop: not drawn
        QPainterPath path;
        QPointF prev = pos(route[0]);
        const auto side = [&](QPointF at, double towardsX) {
            return at + QPointF(towardsX >= at.x() ? geo.nodeW / 2 : -geo.nodeW / 2, 0);
        };
        prev = side(prev, pos(route[1]).x());
        path.moveTo(prev);
        for (std::size_t i = 1; i < route.size(); ++i) {
            QPointF next = pos(route[i]);
            if (i + 1 == route.size()) next = side(next, prev.x());
            const double bend = (next.x() - prev.x()) / 2;
            path.cubicTo(prev + QPointF(bend, 0), next - QPointF(bend, 0), next);
            prev = next;
        }
        const bool chain = g.edges[e].onChain;
        auto* item = scene.addPath(path, QPen(chain ? theme::kStateOrigin : theme::kEdge, chain ? 3.2 : 1.2));
        item->setZValue(chain ? 1 : 0);
        // The arrow head, pointing along the last stretch.
        const double dir = path.pointAtPercent(1).x() >= path.pointAtPercent(0.97).x() ? 1 : -1;
        QPolygonF head;
        head << prev << prev + QPointF(-9 * dir, -4.5) << prev + QPointF(-9 * dir, 4.5);
        auto* h = scene.addPolygon(head, Qt::NoPen, chain ? theme::kStateOrigin : theme::kEdge);
        h->setZValue(item->zValue());
        bounds |= item->sceneBoundingRect() | h->sceneBoundingRect();
    }
    QFont bold = s.font;
    bold.setBold(true);
    const QFontMetrics fm(s.font), fmb(bold);
    const bool third = !s.thirdLines.isEmpty();
    const int textW = int(geo.nodeW) - 10;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const dl::OpGraphNode& n = g.nodes[i];
        const QPointF c = pos(l.pos[i]);
        const QRectF r(c.x() - geo.nodeW / 2, c.y() - geo.nodeH / 2, geo.nodeW, geo.nodeH);
        QPainterPath shape;
        shape.addRoundedRect(r, 6, 6);
        const bool dumped = n.op != dl::kNoIndex;
        const QColor fill = dumped ? stateColor(n.state) : theme::kStripBackground;
        QPen border(n.onChain ? theme::kNavy : theme::kNodeBorder, n.onChain ? 2.6 : 1);
        if (!dumped) border.setStyle(Qt::DashLine);
        auto* node = scene.addPath(shape, border, fill);
        node->setZValue(2);
        node->setData(kGraphNodeRole, int(i));
        if (dumped) node->setCursor(Qt::PointingHandCursor);
        bounds |= node->sceneBoundingRect();
        const QColor ink = dumped && darkFill(n.state) ? QColor(Qt::white) : theme::kText;
        const QString title = QString::fromStdString(n.opType.empty() ? n.kind : n.opType);
        const QString sub = n.kind == "kernel" ? shortName(n.name) : QString::fromStdString(n.name);
        // The lines centred in the box's height.
        const double lines = fmb.height() + fm.height() * (third ? 2 : 1);
        double y = r.top() + (geo.nodeH - lines) / 2;
        const auto addLine = [&](const QString& text, const QFont& f, const QFontMetrics& m, Qt::TextElideMode mode) {
            auto* t = new QGraphicsSimpleTextItem(m.elidedText(text, mode, textW), node);
            t->setFont(f);
            t->setBrush(ink);
            t->setPos(r.left() + 6, y);
            t->setData(kGraphNodeRole, int(i));
            y += m.height();
        };
        addLine(title, bold, fmb, Qt::ElideRight);
        addLine(sub, s.font, fm, Qt::ElideMiddle);
        if (third) {
            // "state · figure"; the figure alone when both do not fit (the fill says the state).
            QString line = s.thirdLines.value(int(i));
            const qsizetype dot = line.indexOf(QStringLiteral(" · "));
            if (dot > 0 && fm.elidedText(line, Qt::ElideRight, textW) != line) line = line.mid(dot + 3);
            addLine(line, s.font, fm, Qt::ElideRight);
        }
    }
    return bounds;
}

}  // namespace dlui

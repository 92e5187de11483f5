#pragma once
// The drawing of an op graph's layered layout (core/query/op_graph_layout.h) as QGraphicsScene
// items, shared by the Graph dock (ui/views/graph/graph_view.h) and the PDF report's figure
// (ui/report/report_figures.h): edges as curves through their dummies with arrow heads, the
// chain's edges thick in the origin colour; nodes as rounded boxes filled in the timeline's state
// colours (dashed when the op was not dumped), the chain's nodes framed in navy; text the op type
// (bold), the short name and optionally a third line (state and worst figure).
#include <QFont>
#include <QPointF>
#include <QRectF>
#include <QStringList>

#include "core/query/op_graph.h"
#include "core/query/op_graph_layout.h"

class QGraphicsScene;

namespace dlui {

struct GraphGeometry {
    double nodeW = 156, nodeH = 40, layerGap = 220, rowGap = 58;  // scene units
};

struct GraphSceneStyle {
    GraphGeometry geometry;
    QFont font;              // the short name and third line; the op type in its bold
    QStringList thirdLines;  // per node; empty: two lines per node
};

// QGraphicsItem::data keys: the node's index in the graph (on each node's items), and true on the
// selection frame.
constexpr int kGraphNodeRole = 0;
constexpr int kGraphFrameRole = 1;

QPointF graphScenePos(const dl::OpGraphPoint& p, const GraphGeometry& g);
// Adds the graph's items to `scene` (not cleared first) and returns their bounding rectangle.
QRectF populateGraphScene(QGraphicsScene& scene, const dl::OpGraph& g, const dl::OpGraphLayout& l,
                          const GraphSceneStyle& s);
// "near limit · max|x| 47580": the third line of a node.
QString graphNodeStateLine(const dl::DumpIndex& index, const dl::OpGraphNode& n);

}  // namespace dlui

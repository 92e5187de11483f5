#pragma once
// The "Graph" dock: the selected op's neighbourhood in its rank's graph IR (core/query/op_graph.h),
// producers left of consumers in a layered layout (core/query/op_graph_layout.h), nodes in the
// timeline's state colours, the chain's path drawn thick. It opens on the origin, follows the
// selection, and a click on a dumped node selects that op everywhere. The IR is read and laid out
// on a worker thread; without IR the view says so in one line.
#include <QWidget>
#include <memory>

#include "core/query/op_graph.h"
#include "core/query/op_graph_layout.h"

class QGraphicsScene;
class QGraphicsView;
class QLabel;
class QSpinBox;

namespace dlui {

class BackgroundTask;
class DumpSession;
struct GraphFlow;

class GraphView : public QWidget {
    Q_OBJECT
public:
    explicit GraphView(DumpSession* session, QWidget* parent = nullptr);
    ~GraphView() override;

    static constexpr int kDefaultHops = 2;  // as `dumplens-cli graph --hops`
    static constexpr int kMaxHops = 6;
    int hops() const { return m_hops; }
    // Producers and consumers up to `hops` edges (clamped to 1..kMaxHops) from the centre: the
    // shown graph is rebuilt around the same op on the worker.
    void setHops(int hops);
    QSpinBox* hopsBox() const { return m_hopsBox; }
    // "23 nodes, 31 edges" of the shown graph, "" while none shows.
    QString summary() const;
    const dl::OpGraph& graph() const { return m_graph; }
    const dl::OpGraphLayout& layout() const { return m_layout; }
    quint32 centreOp() const { return m_centreOp; }  // the op the shown graph is built around
    bool isBuilding() const { return m_building; }
    // The one-line message shown instead of the graph (no IR, no op), empty while a graph shows.
    QString message() const;
    // Node i's centre in the view's viewport coordinates (for clicking in tests).
    QPoint nodeViewportPos(int i) const;
    QGraphicsView* canvas() const { return m_view; }

private:
    void onDumpChanged();
    void onSelection(quint32 op);
    void build(quint32 op);
    void showGraph(const dl::OpGraph& g, const dl::OpGraphLayout& l, quint32 op);
    void showMessage(const QString& text);
    void highlight(quint32 op);
    bool eventFilter(QObject* watched, QEvent* e) override;

    DumpSession* m_session;
    BackgroundTask* m_task;
    std::shared_ptr<GraphFlow> m_flow;  // the open dump's IR, read on first use by the worker
    QLabel* m_message;
    QSpinBox* m_hopsBox;
    QLabel* m_summary;
    int m_hops = kDefaultHops;
    QGraphicsView* m_view;
    QGraphicsScene* m_scene;
    dl::OpGraph m_graph;
    dl::OpGraphLayout m_layout;
    quint32 m_centreOp = dl::kNoIndex;
    quint32 m_wanted = dl::kNoIndex;  // the op of the build under way
    bool m_building = false;
    quint64 m_generation = 0;  // drops the result of a build for an older dump
};

}  // namespace dlui

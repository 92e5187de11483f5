#pragma once
// The report's vector figures: the overflow chain as stage boxes with arrows, a timeline excerpt
// around the origin (the app's TimelinePainter), and the origin op's histograms (the app's
// TensorPanel plot, exported through QCustomPlot::toPainter). Widgets need a QApplication; the CLI
// makes one on the offscreen platform.
#include <QRect>
#include <QRectF>
#include <QString>
#include <memory>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"
#include "core/query/op_graph.h"
#include "core/query/op_state.h"
#include "core/report/report_content.h"
#include "core/timeline/timeline_data.h"
#include "ui/views/timeline/timeline_painter.h"

class QCPPainter;
class QFont;
class QGraphicsScene;

namespace dlui {

class DumpSession;
class TensorPanel;

// Chain diagram: one box per run of consecutive steps in a stage, in chain order, wrapped in rows.
// `line`: the line height of `font` on the target device.
int chainDiagramHeight(const dl::ReportContent& c, int width, int line);
void drawChainDiagram(QCPPainter& p, const QRect& r, const dl::ReportContent& c, const QFont& font, int line);

class TimelineExcerpt {
public:
    // Builds the timeline of `iteration` and a window of a few ops either side of `op`.
    TimelineExcerpt(const dl::DumpIndex& index, const dl::AnalysisResult& analysis, const dl::OpStates& states,
                    std::uint32_t op, std::uint32_t iteration);
    bool available() const { return m_ok; }
    int height() const;
    void paint(QCPPainter& p, const QRect& r);

private:
    bool m_ok = false;
    std::uint32_t m_op;
    TimelinePainter m_painter;
    dl::TimelineViewport m_vp;
};

// The origin's neighbourhood in its rank's graph IR as the Graph dock lays it out (op_graph,
// op_graph_layout, the dock's scene drawing), with a third line per node (state, worst figure)
// and scaled to the page: 2 hops, or 1 when 2 would not be legible.
class GraphFigure {
public:
    // `font`: the report's small font. Reads the IR of the op's rank with a reader of its own.
    GraphFigure(const dl::DumpIndex& index, const dl::AnalysisResult& analysis, const dl::OpStates& states,
                std::uint32_t op, const QFont& font, int width, int maxHeight);
    ~GraphFigure();
    bool available() const { return m_ok; }
    // Why there is no figure (no graph IR for the rank, the op not in it).
    const QString& reason() const { return m_reason; }
    int hops() const { return m_hops; }
    const dl::OpGraph& graph() const { return m_graph; }
    int height() const { return m_height; }
    void paint(QCPPainter& p, const QRect& r);

private:
    bool m_ok = false;
    QString m_reason;
    int m_hops = 0, m_height = 0;
    dl::OpGraph m_graph;
    std::unique_ptr<QGraphicsScene> m_scene;
    QRectF m_source;
};

class HistogramFigure {
public:
    // The index and analysis must outlive this object (they are shared without ownership).
    HistogramFigure(const dl::DumpIndex& index, const dl::AnalysisResult& analysis, const dl::OpStates& states);
    ~HistogramFigure();
    // Plots the op's tensors with `highlight` (the overflowing tensor) marked; false when none has a histogram.
    bool plot(std::uint32_t op, std::uint32_t highlight);
    void paint(QCPPainter& p, const QRect& r);

private:
    std::unique_ptr<DumpSession> m_session;
    std::unique_ptr<TensorPanel> m_panel;
};

}  // namespace dlui

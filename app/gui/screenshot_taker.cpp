#include "app/gui/screenshot_taker.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QTimer>

#include "ui/compare_window.h"
#include "ui/main_window.h"
#include "ui/models/compare_session.h"
#include "ui/models/dump_session.h"
#include "ui/views/chain_view.h"
#include "ui/views/compare/compare_summary_bar.h"
#include "ui/views/compare/compare_table_panel.h"
#include "ui/views/compare/compare_tensor_panel.h"
#include "ui/views/compare/compare_timelines.h"
#include "ui/views/graph/graph_view.h"
#include "ui/views/op_table_panel.h"
#include "ui/views/tensor_panel.h"
#include "ui/views/timeline/timeline_panel.h"
#include "ui/views/verdict_banner.h"

namespace dlui {

ScreenshotTaker::ScreenshotTaker(MainWindow* window, const QString& dir, bool compare)
    : QObject(window), m_window(window), m_dir(dir), m_compare(compare) {
    QDir().mkpath(dir);
    connect(window->session(), &DumpSession::selectionChanged, this, [this] {
        // The origin is selected after the analysis; give the views time to lay out and replot.
        if (m_scheduled || !m_window->session()->analysis()) return;
        m_scheduled = true;
        QTimer::singleShot(2500, this, &ScreenshotTaker::capture);
    });
}

void ScreenshotTaker::save(QWidget* w, const char* name) const {
    w->grab().save(m_dir + QLatin1Char('/') + QLatin1String(name));
}

void ScreenshotTaker::capture() {
    save(m_window, "window.png");
    save(m_window->banner(), "verdict_banner.png");
    save(m_window->timelinePanel(), "timeline.png");
    save(m_window->opTable(), "op_table.png");
    save(m_window->tensorPanel(), "tensor_panel.png");
    save(m_window->chainView(), "chain_view.png");
    // The graph is a tab behind the table: bring it forward, let it lay out, then shoot it.
    if (auto* dock = qobject_cast<QDockWidget*>(m_window->graphView()->parentWidget())) dock->raise();
    QTimer::singleShot(800, this, &ScreenshotTaker::captureGraph);
}

void ScreenshotTaker::captureGraph() {
    save(m_window, "window_graph.png");
    save(m_window->graphView(), "graph_view.png");
    if (!m_compare) return finish();
    CompareWindow* cw = m_window->compareWindow();
    if (cw && !cw->isBusy() && cw->session()->isReady()) return captureCompare();
    // The comparison is still running (or not started yet): wait for it.
    QTimer* poll = new QTimer(this);
    connect(poll, &QTimer::timeout, this, [this, poll] {
        CompareWindow* w = m_window->compareWindow();
        if (!w || w->isBusy()) return;
        poll->stop();
        QTimer::singleShot(1500, this, &ScreenshotTaker::captureCompare);
    });
    poll->start(200);
}

void ScreenshotTaker::captureCompare() {
    CompareWindow* cw = m_window->compareWindow();
    save(cw, "compare_window.png");
    save(cw->summary(), "compare_summary.png");
    save(cw->timelines(), "compare_timelines.png");
    save(cw->table(), "compare_table.png");
    save(cw->tensorPanel(), "compare_tensor.png");
    finish();
}

void ScreenshotTaker::finish() {
    // Leave a moment for an external full-screen capture (import -window root) before quitting.
    QTimer::singleShot(4000, qApp, &QApplication::quit);
}

}  // namespace dlui

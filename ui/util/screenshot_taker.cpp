#include "ui/util/screenshot_taker.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QTimer>

#include "ui/mainwindow.h"
#include "ui/models/dump_session.h"
#include "ui/views/chain_view.h"
#include "ui/views/op_table_panel.h"
#include "ui/views/tensor_panel.h"
#include "ui/views/timeline_panel.h"
#include "ui/views/verdict_banner.h"

namespace dlui {

ScreenshotTaker::ScreenshotTaker(MainWindow* window, const QString& dir) : QObject(window), m_window(window), m_dir(dir) {
    QDir().mkpath(dir);
    connect(window->session(), &DumpSession::selectionChanged, this, [this] {
        // The origin is selected after the analysis; give the views time to lay out and replot.
        if (m_scheduled || !m_window->session()->analysis()) return;
        m_scheduled = true;
        QTimer::singleShot(2500, this, &ScreenshotTaker::capture);
    });
}

void ScreenshotTaker::capture() {
    const auto save = [this](QWidget* w, const char* name) { w->grab().save(m_dir + QLatin1Char('/') + QLatin1String(name)); };
    save(m_window, "window.png");
    save(m_window->banner(), "verdict_banner.png");
    save(m_window->timelinePanel(), "timeline.png");
    save(m_window->opTable(), "op_table.png");
    save(m_window->tensorPanel(), "tensor_panel.png");
    save(m_window->chainView(), "chain_view.png");
    // Leave a moment for an external full-screen capture (import -window root) before quitting.
    QTimer::singleShot(4000, qApp, &QApplication::quit);
}

}  // namespace dlui

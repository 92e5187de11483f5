#pragma once
// File > Export trace…: ask for a path (never inside the dump), then write the open dump as a
// Chrome/Perfetto trace (core/export/trace_events.h, the writer `dumplens-cli export-trace` uses)
// on a background thread, with its progress and outcome in the window's status bar. A second
// export supersedes the first (whose file is then not written).
#include <QString>

#include "ui/jobs/loaded_dump.h"

class QMainWindow;

namespace dlui {

class BackgroundTask;

class TraceExporter {
public:
    explicit TraceExporter(QMainWindow* window);  // the window owns the task
    void exportInteractively(const LoadedDumpPtr& dump);
    // The same without the dialog (tests, scripts): false with the reason when refused at once.
    bool start(const LoadedDumpPtr& dump, const QString& path, QString& error);
    bool isRunning() const;

private:
    QMainWindow* m_window;
    BackgroundTask* m_task;
};

}  // namespace dlui

#include "ui/jobs/trace_export.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMessageBox>
#include <QStatusBar>

#include "core/export/trace_events.h"
#include "core/index/output_guard.h"
#include "ui/jobs/background_task.h"

namespace dlui {

namespace {
const char* const kTitle = QT_TRANSLATE_NOOP("TraceExporter", "Export trace");
QString tr(const char* s) { return QObject::tr(s); }
}  // namespace

TraceExporter::TraceExporter(QMainWindow* window) : m_window(window), m_task(new BackgroundTask(window)) {}

bool TraceExporter::isRunning() const { return m_task->isRunning(); }

void TraceExporter::exportInteractively(const LoadedDumpPtr& dump) {
    if (!dump || !dump->index || !dump->analysis || dump->statesPending()) return;
    const QString path = QFileDialog::getSaveFileName(m_window, tr(kTitle),
                                                      QFileInfo(dump->path).fileName() + QStringLiteral("-trace.json"),
                                                      tr("Trace Event Format (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (!start(dump, path, error)) QMessageBox::warning(m_window, tr(kTitle), error);
}

bool TraceExporter::start(const LoadedDumpPtr& dump, const QString& path, QString& error) {
    if (!dump || !dump->index || !dump->analysis || !dump->states || dump->statesPending()) {
        error = tr("No analysed dump is open.");
        return false;
    }
    // As every -o of the CLI: never into the dump the index was made from.
    const std::string inside = dl::outputInsideDump(path.toStdString(), dl::dumpRootsOf(*dump->index));
    if (!inside.empty()) {
        error = QString::fromStdString(inside);
        return false;
    }
    QMainWindow* window = m_window;  // used only inside posts, which run while the task (its child) lives
    window->statusBar()->showMessage(tr("Exporting the trace to %1…").arg(path));
    m_task->start([dump, path, window](std::stop_token stop, const BackgroundTask::Post& post) {
        dl::TraceExportOptions opt;
        opt.stop = stop;
        opt.progress = [&post, window, path](std::uint64_t done, std::uint64_t total) {
            const int pct = total ? int(done * 100 / total) : 100;
            post([window, path, pct] {
                window->statusBar()->showMessage(QObject::tr("Exporting the trace to %1… %2 %").arg(path).arg(pct));
            });
        };
        dl::TraceExportSummary sum;
        std::string err;
        const bool ok =
            dl::exportTraceFile(path.toStdString(), *dump->index, dump->analysis.get(), *dump->states, opt, sum, err);
        post([window, path, ok, sum, err] {
            if (ok)
                window->statusBar()->showMessage(QObject::tr("Trace written to %1: %2 ops, %3 chain flows (open it in "
                                                             "ui.perfetto.dev or chrome://tracing)")
                                                     .arg(path)
                                                     .arg(sum.slices)
                                                     .arg(sum.flows),
                                                 15000);
            else if (!sum.cancelled)
                QMessageBox::warning(window, QObject::tr(kTitle), QString::fromStdString(err));
        });
    });
    return true;
}

}  // namespace dlui

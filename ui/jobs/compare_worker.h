#pragma once
// Opens the second run on a worker thread (index and analysis, like the main dump), then aligns
// and compares it with the open run. Progress and the result come back as queued signals.
#include <QObject>
#include <memory>

#include "core/compare/run_comparison.h"
#include "ui/jobs/loaded_dump.h"

namespace dlui {

class BackgroundTask;

struct ComparedRuns {
    LoadedDumpPtr a, b;
    // Null unless ok. Not const: the compare session re-judges it in place when the thresholds
    // change (a million rows are not copied).
    std::shared_ptr<dl::RunComparison> comparison;
    bool ok = false;
    bool cancelled = false;
    QString error;
};
using ComparedRunsPtr = std::shared_ptr<const ComparedRuns>;

class CompareWorker : public QObject {
    Q_OBJECT
public:
    explicit CompareWorker(QObject* parent = nullptr);

    // `a` must be an opened dump; B is opened from pathB (a demo variant when demoDirB is set).
    void start(LoadedDumpPtr a, const QString& pathB, const QString& demoDirB, const dl::CompareOptions& options);
    void cancel();
    bool isRunning() const;

signals:
    void stageChanged(const QString& text);
    void progress(quint64 filesDone, quint64 filesTotal, quint64 bytesDone, quint64 bytesTotal,
                  int phase);  // dl::ProgressPhase
    void finished(dlui::ComparedRunsPtr result);

private:
    BackgroundTask* m_task;
};

}  // namespace dlui

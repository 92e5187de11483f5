#pragma once
// Opens one dump on the calling (worker) thread: writes the bundled demo variant if asked,
// indexes, then analyses. Shared by the load worker (the main run) and the compare worker (the
// second run), which differ only in where they send progress.
#include <QString>
#include <functional>
#include <stop_token>

#include "core/analysis/overflow_analyzer.h"
#include "core/util/progress.h"
#include "ui/jobs/loaded_dump.h"

namespace dlui {

struct DumpLoadCallbacks {
    std::function<void(const QString&)> stage;          // "Indexing…", "Analysing…"
    std::function<void(const dl::Progress&)> progress;  // throttled to ~20 calls a second
    std::function<void(LoadedDumpPtr)> indexed;         // index ready, analysis not yet
};

// When demoDir is set, `path` is a bundled demo variant inside it, written first if missing.
LoadedDumpPtr loadDump(const QString& path, const QString& demoDir, std::stop_token stop, const DumpLoadCallbacks& cb);

// The second half of loadDump: analyses `dump.index` (`options` as given, with `stop`) and fills
// analysis, states and dataflow. False when stopped (dump unchanged). The watch (dump_watcher.h)
// runs it on each index the watcher hands over.
bool analyseDump(LoadedDump& dump, std::stop_token stop, dl::AnalysisOptions options);

}  // namespace dlui

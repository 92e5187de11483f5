#pragma once
// The immutable result of opening a dump, handed from the worker thread to the GUI as a whole.
#include <memory>

#include <QString>
#include <QStringList>

#include "core/analysis/analysis_result.h"
#include "core/analysis/rank_dataflow.h"
#include "core/index/dump_indexer.h"
#include "core/model/dump_index.h"
#include "core/query/op_state.h"

namespace dlui {

struct LoadedDump {
    QString path;
    bool ok = false;
    bool cancelled = false;
    QString error;  // when !ok
    std::shared_ptr<const dl::DumpIndex> index;
    std::shared_ptr<const dl::AnalysisResult> analysis;  // null until the analysis ran
    std::shared_ptr<const dl::OpStates> states;          // empty (pending) until the analysis ran
    bool statesPending() const { return index && states && states->tensor.size() != index->tensors.size(); }
    dl::IndexReport report;
    double analysisSeconds = 0;
    // The files complete so far of a folder being watched (ui/jobs/dump_watcher.h): the verdict
    // is "so far", and the next update replaces this dump.
    bool live = false;
    // The graph IR as the analysis read it, kept for the Graph view (a cache filled on use: its
    // users serialise on it, ui/views/graph/graph_view.cpp). Null until the analysis ran.
    std::shared_ptr<dl::RankDataflow> dataflow;
};

using LoadedDumpPtr = std::shared_ptr<const LoadedDump>;

}  // namespace dlui

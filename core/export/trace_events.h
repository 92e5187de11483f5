#pragma once
// The dump as a trace in the Trace Event Format (the JSON object form with "traceEvents") that
// Perfetto's UI and chrome://tracing open: one process per rank (sorted by rank), one thread per
// stream, every op a complete event ("X") with its overflow state and its worst tensor's figures
// in `args`, the overflow chain as flow events ("s"/"f", bound to the slices of the chain's ops)
// and the origin marked by an instant event. Written as it goes, one rank at a time: memory is
// the largest rank's op list (16 bytes an op), never the JSON.
//
// Time: when (nearly) every op has a timestamp, `ts` is the op's start in microseconds on the
// reference rank's clock (AnalysisResult::clockOffsetUs subtracted, as the timeline does); ops
// without one are left out and counted. Otherwise `ts` is the op's position in its rank's
// execution order (1 us an op). Ops the dump gives no end lead up to the next op of their stream
// (capped at 4x the stream's median gap: idle time is not the op), the last one the median gap;
// slices of one stream never overlap. args.dur_source says where each duration came from.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"
#include "core/query/op_state.h"
#include "core/util/progress.h"

namespace dl {

struct TraceExportOptions {
    bool alignClocks = true;  // subtract the analysis's clock offsets (needs the analysis)
    std::stop_token stop;     // stopped: returns false with `cancelled` set; a file is not written
    WorkCallback progress;    // ops written of all ops
};

struct TraceExportSummary {
    bool cancelled = false;
    bool timestamps = true;  // false: ts is the execution order
    std::size_t processes = 0, threads = 0, slices = 0;
    std::size_t opsWithoutTime = 0;  // left out (timestamps base only)
    std::size_t flows = 0;           // chain hops written as an s/f pair
    std::size_t hopsNotShown = 0;    // chain hops one of whose ops is left out
    bool originMarked = false;
    std::uint64_t bytes = 0;
};

// Receives the text in chunks of about a MiB; returns false when it cannot take them (the
// writer then stops with its error).
using TraceSink = std::function<bool(const char* data, std::size_t size, std::string& error)>;

// `analysis` may be null (no chain, no origin, no clock alignment); `states` is computeOpStates'.
bool writeTraceEvents(const DumpIndex& index, const AnalysisResult* analysis, const OpStates& states,
                      const TraceExportOptions& options, const TraceSink& sink, TraceExportSummary& summary,
                      std::string& error);

// The same into `path`, which appears whole or not at all (AtomicFile). The caller checks that
// `path` is not inside the dump (output_guard.h).
bool exportTraceFile(const std::string& path, const DumpIndex& index, const AnalysisResult* analysis,
                     const OpStates& states, const TraceExportOptions& options, TraceExportSummary& summary,
                     std::string& error);

}  // namespace dl

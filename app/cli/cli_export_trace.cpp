// The `export-trace` sub-command: the dump as a Trace Event Format file for Perfetto / chrome://tracing.
#include <iostream>

#include "app/cli/cli_commands.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/export/trace_events.h"
#include "core/index/dump_indexer.h"
#include "core/query/op_state.h"

namespace dlcli {

namespace {

int runExportTrace(const ExportTraceArgs& args) {
    if (refuseOutputInsideDump(args.output, {args.index.dir})) return kExitFailed;
    dl::DumpIndex index;
    dl::IndexReport report;
    if (!runIndex(args.index, index, report) || refuseNothingReadable(index, args.index.dir, "no trace written") ||
        refuseOutputInsideIndexedDumps(args.output, {&index}))
        return kExitFailed;
    const dl::AnalysisResult analysis = dl::analyze(index);
    const dl::OpStates states = dl::computeOpStates(index, &analysis, analysis.nearLimitThreshold);
    dl::TraceExportOptions opt;
    opt.alignClocks = !args.rawClocks;
    dl::TraceExportSummary sum;
    std::string error;
    const bool toStdout = args.output == "-";
    bool ok = false;
    if (toStdout) {
        const dl::TraceSink sink = [](const char* data, std::size_t n, std::string& e) {
            if (std::cout.write(data, std::streamsize(n))) return true;
            e = "could not write the trace to standard output";
            return false;
        };
        ok = dl::writeTraceEvents(index, &analysis, states, opt, sink, sum, error) && std::cout.flush();
    } else {
        ok = dl::exportTraceFile(args.output, index, &analysis, states, opt, sum, error);
    }
    if (!ok) {
        std::cerr << "dumplens-cli: " << (error.empty() ? "could not write " + args.output : error) << "\n";
        return kExitFailed;
    }
    // The summary goes where the trace does not.
    std::ostream& say = toStdout ? std::cerr : std::cout;
    say << "Trace written to " << (toStdout ? "standard output" : args.output) << ": " << sum.processes << " rank"
        << (sum.processes == 1 ? "" : "s") << ", " << sum.threads << " stream" << (sum.threads == 1 ? "" : "s") << ", "
        << sum.slices << " ops, " << sum.flows << " chain flow" << (sum.flows == 1 ? "" : "s") << ", "
        << (analysis.overflow ? "overflow" : "clean") << (sum.originMarked ? " (origin marked)" : "") << "\n";
    if (!sum.timestamps) say << "  no timestamps in the dump: ts is each rank's execution order, 1 us an op\n";
    if (sum.opsWithoutTime) say << "  " << sum.opsWithoutTime << " op(s) without a timestamp left out\n";
    if (sum.hopsNotShown) say << "  " << sum.hopsNotShown << " chain hop(s) between ops left out are not drawn\n";
    say << "  open it in https://ui.perfetto.dev or chrome://tracing\n";
    return kExitOk;
}

}  // namespace

void Commands::addExportTrace(CLI::App& app) {
    auto* sub = app.add_subcommand("export-trace",
                                   "write the op timeline and overflow chain as a Chrome/Perfetto trace (JSON)");
    sub->add_option("DIR", m_exportTrace.index.dir, "dump path, a rank_N folder, an iteration folder or a .dlx")
        ->required();
    sub->add_option("--cache-dir", m_exportTrace.index.cacheDir, "index cache folder (default: ~/.cache/dumplens)");
    sub->add_flag("--no-cache", m_exportTrace.index.noCache, "neither read nor write the index cache");
    sub->add_option("--threads", m_exportTrace.index.threads, "worker threads (default: all cores)");
    sub->add_option("-o,--output", m_exportTrace.output, "trace file to write (- for standard output)")->required();
    sub->add_flag("--raw-clocks", m_exportTrace.rawClocks,
                  "each rank on its own clock (default: aligned to the reference rank)");
    sub->callback([this] { m_exit = runExportTrace(m_exportTrace); });
}

}  // namespace dlcli

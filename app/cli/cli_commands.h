#pragma once
// Sub-command wiring for dumplens-cli: option structs bound to CLI11 and the core calls they make.
#include <CLI/CLI.hpp>

#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dl {
struct DumpIndex;
struct IndexReport;
}  // namespace dl

namespace dlcli {

// Exit status, one rule for every command (the --help footer, the man page, docs/cli.md):
// 0 done on readable data (an overflow found is 0 too: the verdict is in the output);
// 1 read, but nothing to answer with (compare: no op of run A matched run B);
// 2 nothing done: a usage error (options, an output inside a dump), an unusable path, nothing
//   readable in a dump, or a file that could not be written.
inline constexpr int kExitOk = 0, kExitNoMatch = 1, kExitFailed = 2;

// What --help says after the options; the man page and docs/cli.md are written from the same lists.
struct HelpItem {
    const char* name;
    const char* text;
};
inline constexpr HelpItem kExitStatuses[] = {
    {"0", "done on readable data (an overflow found included: the verdict is in the output)"},
    {"1", "read, but nothing to answer with: compare matched no op, or msprobe-csv found no row"},
    {"2",
     "nothing done: a usage error (an unknown command or option, a bad value, an output inside a dump), "
     "an unusable path, nothing readable in a dump, or a file not written"},
    {"3", "(index --mpi only) the index was written, but the parts of some processes are missing (each named)"},
};
inline constexpr HelpItem kEnvironment[] = {
    {"DUMPLENS_CACHE_DIR",
     "index cache folder; --cache-dir overrides it (default: $XDG_CACHE_HOME/dumplens, "
     "else ~/.cache/dumplens)"},
    {"XDG_CACHE_HOME", "holds the default index cache folder, dumplens/"},
};
// The footer of --help: the exit statuses, then the environment.
std::string helpFooter(std::span<const HelpItem> exitStatuses = kExitStatuses);

// True (after printing why) when `output` lies inside one of `dumps`: never write into a dump.
bool refuseOutputInsideDump(const std::string& output, const std::vector<std::string>& dumps);
// The same after indexing, against the dumps the indexes were made from (dl::dumpRootsOf): an
// index read from a .dlx names a dump the path given did not.
bool refuseOutputInsideIndexedDumps(const std::string& output, std::initializer_list<const dl::DumpIndex*> indexes);
// True (after printing "No data: nothing readable in DIR" and the first reasons) when `index`
// holds nothing readable; `what` says what is not done ("no index written").
bool refuseNothingReadable(const dl::DumpIndex& index, const std::string& dir, const char* what);

// watch runs until stopped: its status says whether an overflow was seen.
inline constexpr HelpItem kWatchExitStatuses[] = {
    {"0", "stopped (SIGINT / SIGTERM, or --until-overflow) after an overflow was seen"},
    {"1", "stopped while the dump was clean so far"},
    {"2", "DIR is not a folder, or an option is wrong"},
};

struct IndexArgs {
    std::string dir, cacheDir;
    bool json = false, noCache = false;
    unsigned threads = 0;
};
void bindIndexOptions(CLI::App* sub, IndexArgs& args);
// Indexes args.dir with a terminal progress bar; prints the error and returns false when unusable.
bool runIndex(const IndexArgs& args, dl::DumpIndex& index, dl::IndexReport& report);

// `report DIR -o FILE.pdf`: compiled only with the UI (app/cli/cli_report.cpp).
struct ReportArgs {
    IndexArgs index;
    std::string output, pageSize = "A4";
    std::string compareDir;  // --compare DIR_B: adds the comparison summary and first divergence
};

// `export-trace DIR -o FILE.json`: app/cli/cli_export_trace.cpp
struct ExportTraceArgs {
    IndexArgs index;
    std::string output;  // "-": standard output
    bool rawClocks = false;
};

// `compare A B`: app/cli/cli_compare.cpp
struct CompareArgs {
    IndexArgs a, b;  // a carries the shared index options
    std::string output, mapping, thresholds, rules = "precision", format, msprobeVersion = "26";
    std::optional<std::uint32_t> iterationA, iterationB;
    bool json = false, csv = false, statsOnly = false, highlight = false;
};

// `watch DIR`: app/cli/cli_watch.cpp
struct WatchArgs {
    std::string dir, exec, cacheDir;
    bool untilOverflow = false, json = false, noCache = false, noInotify = false;
    int settleMs = 500;
    unsigned threads = 0;
};
int runWatch(const WatchArgs& args);

class Commands {
public:
    void registerAll(CLI::App& app);
    int exitCode() const { return m_exit; }

private:
    void addIndex(CLI::App& app);
    void addInspect(CLI::App& app);
    void addDemo(CLI::App& app);
    void addAnalyze(CLI::App& app);
    void addCompare(CLI::App& app);
    int runCompare();
    CompareArgs m_compare;
#ifdef DUMPLENS_HAVE_UI
    void addReport(CLI::App& app);
    ReportArgs m_report;
#endif
    void addMerge(CLI::App& app);
    void addExportTrace(CLI::App& app);
    ExportTraceArgs m_exportTrace;
    int runMpiIndex();
    void addGraph(CLI::App& app);  // app/cli/cli_graph.cpp
    int runGraph();
    struct GraphArgs {
        IndexArgs index;
        std::string op, format = "json";
        int hops = 2, rank = -1, iteration = -1;
    } m_graph;
    void addWatch(CLI::App& app);
    WatchArgs m_watch;

    IndexArgs m_index;
    std::string m_indexOutput;
    bool m_indexMpi = false;
    double m_mpiTimeout = 3600;
    std::vector<std::string> m_mergeInputs;
    std::string m_mergeOutput;
    std::string m_inspectFile;
    bool m_inspectJson = false;
    std::string m_demoDir;
    IndexArgs m_analyzeIndex;
    int m_analyzeIteration = -1;
    std::string m_analyzeStages;
    int m_exit = 0;
};

}  // namespace dlcli

#pragma once
// Sub-command wiring for dumplens-cli: option structs bound to CLI11 and the core calls they make.
#include <CLI/CLI.hpp>

#include <string>

namespace dl {
struct DumpIndex;
struct IndexReport;
}  // namespace dl

namespace dlcli {

struct IndexArgs {
    std::string dir, cacheDir;
    bool json = false, noCache = false;
    unsigned threads = 0;
};
void bindIndexOptions(CLI::App* sub, IndexArgs& args);
// Indexes args.dir with a terminal progress bar; prints the error and returns false when unusable.
bool runIndex(const IndexArgs& args, dl::DumpIndex& index, dl::IndexReport& report);

// `compare A B`: app/cli/cli_compare.cpp
struct CompareArgs {
    IndexArgs a, b;   // a carries the shared index options
    std::string output, mapping, thresholds;
    bool json = false, csv = false, statsOnly = false;
};

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

    IndexArgs m_index;
    std::string m_inspectFile;
    bool m_inspectJson = false;
    std::string m_demoDir;
    IndexArgs m_analyzeIndex;
    int m_analyzeIteration = -1;
    std::string m_analyzeStages;
    int m_exit = 0;
};

}  // namespace dlcli

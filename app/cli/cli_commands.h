#pragma once
// Sub-command wiring for dumplens-cli: option structs bound to CLI11 and the core calls they make.
#include <CLI/CLI.hpp>

#include <string>

namespace dlcli {

class Commands {
public:
    void registerAll(CLI::App& app);
    int exitCode() const { return m_exit; }

private:
    void addIndex(CLI::App& app);
    void addInspect(CLI::App& app);
    void addDemo(CLI::App& app);
    void addAnalyze(CLI::App& app);

    struct IndexArgs {
        std::string dir, cacheDir;
        bool json = false, noCache = false;
        unsigned threads = 0;
    };
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

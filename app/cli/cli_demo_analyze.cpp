// The `demo` and `analyze` sub-commands (separate file: they pull in the demo writer and the analysis).
#include <iostream>

#include "app/cli/cli_commands.h"

namespace dlcli {

void Commands::addDemo(CLI::App& app) {
    auto* sub = app.add_subcommand("demo", "write the bundled demo dumps (computed fp16/bf16 runs) into OUTDIR");
    sub->add_option("OUTDIR", m_demoDir, "output folder")->required();
    sub->callback([this] {
        std::cerr << "dumplens-cli: demo writer not built yet\n";
        m_exit = 2;
    });
}

void Commands::addAnalyze(CLI::App& app) {
    auto* sub = app.add_subcommand("analyze", "find the first overflow, its chain across stages, and replay it");
    sub->add_option("DIR", m_analyzeIndex.dir, "dump folder")->required();
    sub->add_flag("--json", m_analyzeIndex.json, "print one JSON object");
    sub->callback([this] {
        std::cerr << "dumplens-cli: analysis not built yet\n";
        m_exit = 2;
    });
}

}  // namespace dlcli

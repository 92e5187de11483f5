// The `demo` and `analyze` sub-commands.
#include <iostream>

#include "app/cli/cli_commands.h"
#include "core/analysis/analysis_json.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/demo/demo_dumps.h"
#include "core/index/dump_indexer.h"

namespace dlcli {

void Commands::addDemo(CLI::App& app) {
    auto* sub = app.add_subcommand("demo", "write the bundled demo dumps (computed fp16/bf16 runs) into OUTDIR");
    sub->add_option("OUTDIR", m_demoDir, "output folder")->required();
    sub->callback([this] {
        dl::demo::DemoSummary summary;
        std::string error;
        if (!dl::demo::writeDemoDumps(m_demoDir, summary, error)) {
            std::cerr << "dumplens-cli: " << error << "\n";
            m_exit = kExitFailed;
            return;
        }
        std::cout << "Demo dumps written to " << m_demoDir << ":\n";
        for (const auto& v : summary.variants) std::cout << "  " << m_demoDir << "/" << v << "\n";
        if (!summary.notes.empty()) std::cout << summary.notes << "\n";
    });
}

void Commands::addAnalyze(CLI::App& app) {
    auto* sub = app.add_subcommand("analyze", "find the first overflow, its chain across stages, and replay it");
    bindIndexOptions(sub, m_analyzeIndex);
    sub->add_option("--iteration", m_analyzeIteration, "analyse this iteration instead of the first bad one");
    sub->add_option("--stages", m_analyzeStages, "rank-to-stage map, e.g. 0:0,1:1 or 0-1:0,2-3:1");
    sub->callback([this] {
        dl::DumpIndex index;
        dl::IndexReport report;
        if (!runIndex(m_analyzeIndex, index, report)) {
            m_exit = kExitFailed;
            return;
        }
        dl::AnalysisOptions opt;
        if (m_analyzeIteration >= 0) opt.iteration = std::uint32_t(m_analyzeIteration);
        opt.stages = m_analyzeStages;
        const dl::AnalysisResult result = dl::analyze(index, opt);
        if (m_analyzeIndex.json)
            std::cout << dl::toJson(index, result).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                      << "\n";
        else
            std::cout << dl::toText(index, result);
        if (result.noData) m_exit = kExitFailed;  // no verdict: a script must not read it as clean
    });
}

}  // namespace dlcli

// The `compare` sub-command: align two runs and report where they diverge.
#include <fstream>
#include <iostream>

#include "app/cli/cli_commands.h"
#include "core/compare/compare_json.h"
#include "core/compare/msprobe_table.h"
#include "core/compare/run_comparison.h"
#include "core/index/dump_indexer.h"
#include "core/util/printable.h"

namespace dlcli {

namespace {

bool writeOutput(const std::string& path, const std::string& text) {
    if (path.empty() || path == "-") {
        std::cout << text;
        return true;
    }
    std::ofstream out(path, std::ios::binary);
    out << dl::printable(text, true);  // as on the terminal: a later `cat` of the file is safe too
    out.close();
    if (!out) {
        std::cerr << "dumplens-cli: cannot write " << path << "\n";
        return false;
    }
    return true;
}

}  // namespace

void Commands::addCompare(CLI::App& app) {
    auto* sub =
        app.add_subcommand("compare", "align two runs (e.g. fp16 and the bf16 fix) and find where they diverge");
    sub->add_option("A", m_compare.a.dir, "first run (dump path, rank_N or iteration folder)")->required();
    sub->add_option("B", m_compare.b.dir, "second run, the baseline")->required();
    auto* json = sub->add_flag("--json", m_compare.json, "print JSON (schema dumplens.compare/1)");
    auto* csv = sub->add_flag("--csv", m_compare.csv, "print CSV, one row per matched tensor")->excludes(json);
    sub->add_option("--format", m_compare.format,
                    "text, json, csv, or msprobe-csv: msprobe's compare table row for row (two msprobe dumps)")
        ->check(CLI::IsMember({"text", "json", "csv", "msprobe-csv"}))
        ->excludes(json)
        ->excludes(csv);
    sub->add_option("--msprobe-version", m_compare.msprobeVersion,
                    "with --format msprobe-csv: whose table to write, 26 (msprobe 26.x: Result pass/warning/error, the "
                    "default) or 8.3 (msprobe 8.3 and before: Accuracy Reached or Not, Warning)")
        ->check([](const std::string& v) {
            dl::MsprobeGeneration g;
            return dl::parseMsprobeGeneration(v, g) ? std::string() : "expected 26 or 8.3, got " + v;
        });
    sub->add_flag(
        "--highlight", m_compare.highlight,
        "with --format msprobe-csv --msprobe-version 8.3: add msprobe's -hl highlight messages to Err_message");
    sub->add_option("-o,--output", m_compare.output, "write the report to FILE instead of stdout");
    sub->add_option("--mapping", m_compare.mapping, "CSV of name_a,name_b pairs that pin op pairs by hand");
    sub->add_option("--rules", m_compare.rules,
                    "precision: verdicts relative to the values' scale and the runs' dtypes (default); msprobe: "
                    "msprobe's absolute tests (cosine < 0.99 with max_abs > 0.001, cosine < 0.9, max_abs > 1)")
        ->check(CLI::IsMember({"precision", "msprobe"}));
    sub->add_option("--threshold", m_compare.thresholds,
                    "override tests, e.g. ulps=4,precision=bfloat16,cosine=0.95,max_abs=off,stats_rel=0.05,nan_inf=on");
    sub->add_option("--iteration-a", m_compare.iterationA, "compare only this iteration (step) of run A ...");
    sub->add_option("--iteration-b", m_compare.iterationB, "... with this iteration of run B (matched by name)");
    sub->add_flag("--stats-only", m_compare.statsOnly, "compare statistics only, even where tensor files exist");
    sub->add_option("--cache-dir", m_compare.a.cacheDir, "index cache folder (default: ~/.cache/dumplens)");
    sub->add_flag("--no-cache", m_compare.a.noCache, "neither read nor write the index cache");
    sub->add_option("--threads", m_compare.a.threads, "worker threads (default: all cores)");
    sub->callback([this] { m_exit = runCompare(); });
}

int Commands::runCompare() {
    CompareArgs& c = m_compare;
    if (refuseOutputInsideDump(c.output, {c.a.dir, c.b.dir})) return kExitFailed;
    dl::CompareOptions opt;
    std::string error;
    opt.thresholds =
        dl::CompareThresholds::defaults(c.rules == "msprobe" ? dl::CompareRules::Msprobe : dl::CompareRules::Precision);
    if (!dl::parseThresholds(c.thresholds, opt.thresholds, error) ||
        (!c.mapping.empty() && !dl::readMappingFile(c.mapping, opt.pins, error))) {
        std::cerr << "dumplens-cli: " << error << "\n";
        return kExitFailed;
    }
    if (c.format == "json") c.json = true;
    if (c.format == "csv") c.csv = true;
    const bool msprobeCsv = c.format == "msprobe-csv";
    opt.useData = !c.statsOnly;
    opt.iterations = {c.iterationA, c.iterationB};
    opt.threads = c.a.threads;
    const bool machine = c.json || c.csv || msprobeCsv;
    c.a.json = machine;
    IndexArgs b = c.a;
    b.dir = c.b.dir;
    dl::DumpIndex ia, ib;
    dl::IndexReport ra, rb;
    if (!runIndex(c.a, ia, ra) || !runIndex(b, ib, rb)) return kExitFailed;
    // A run with nothing readable has nothing to compare: not "no op matched".
    if (refuseNothingReadable(ia, c.a.dir, "nothing compared") ||
        refuseNothingReadable(ib, c.b.dir, "nothing compared") || refuseOutputInsideIndexedDumps(c.output, {&ia, &ib}))
        return kExitFailed;
    if (msprobeCsv) {  // msprobe's own table: built from the dump.json files, not from DumpLens's alignment
        std::string table;
        dl::MsprobeTableReport report;
        dl::MsprobeTableOptions mo;
        dl::parseMsprobeGeneration(c.msprobeVersion, mo.generation);  // checked by the option
        mo.highlight = c.highlight;
        mo.iterations = opt.iterations;
        if (!dl::writeMsprobeTableCsv(ia, ib, mo, table, report, error)) {
            std::cerr << "dumplens-cli: " << error << "\n";
            return kExitFailed;
        }
        for (const std::string& w : report.warnings) std::cerr << "dumplens-cli: warning: " << w << "\n";
        if (!writeOutput(c.output, table)) return kExitFailed;
        return report.rows ? kExitOk : kExitNoMatch;
    }
    const dl::RunComparison result = dl::compareRuns(ia, ib, opt);
    const std::string text = c.json ? dl::compareJson(result, ia, ib) + "\n"
        : c.csv                     ? dl::compareCsv(result, ia, ib)
                                    : dl::compareText(result, ia, ib);
    if (!writeOutput(c.output, text)) return kExitFailed;
    if (result.alignment.ops.empty()) {
        std::cerr << "dumplens-cli: no op of run A could be matched with run B\n";
        return kExitNoMatch;
    }
    return kExitOk;
}

}  // namespace dlcli

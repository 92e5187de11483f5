// The `report` sub-command: index, analyse and write the overflow report as PDF, headless.
#ifdef DUMPLENS_HAVE_UI
#include <QApplication>
#include <QPageSize>
#include <cstdlib>
#include <iostream>

#include "app/cli/cli_commands.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/compare/compare_json.h"
#include "core/compare/run_comparison.h"
#include "core/index/dump_indexer.h"
#include "core/util/text_lines.h"
#include "ui/report/report_renderer.h"

namespace dlcli {

namespace {

// Qt's offscreen platform looks up the runtime folder, and QStandardPaths warns on stderr when
// XDG_RUNTIME_DIR is unset (cron, ssh, containers): noise in a headless command's output, so only
// that message is dropped; every other goes to the default handler.
QtMessageHandler g_defaultHandler = nullptr;
void quietRuntimeDirWarning(QtMsgType type, const QMessageLogContext& context, const QString& msg) {
    if (type == QtWarningMsg && msg.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR"))) return;
    if (g_defaultHandler) g_defaultHandler(type, context, msg);
}

// The histogram is a QCustomPlot widget, so a QApplication is needed even without a display: the
// offscreen platform gives one (fonts via fontconfig, no X server).
int runReport(const ReportArgs& args) {
    QPageSize::PageSizeId pageSize = QPageSize::A4;
    if (!dlui::parsePageSize(QString::fromStdString(args.pageSize), pageSize)) {
        std::cerr << "dumplens-cli: --page-size must be A4 or Letter, not '" << args.pageSize << "'\n";
        return kExitFailed;
    }
    if (refuseOutputInsideDump(args.output, {args.index.dir, args.compareDir})) return kExitFailed;
    dl::DumpIndex index;
    dl::IndexReport indexReport;
    if (!runIndex(args.index, index, indexReport) || refuseOutputInsideIndexedDumps(args.output, {&index}))
        return kExitFailed;
    const dl::AnalysisResult analysis = dl::analyze(index);
    if (analysis.noData) {
        std::cerr << "dumplens-cli: No data: nothing readable in " << args.index.dir << "; no report written\n";
        for (std::size_t i = 0; i < analysis.fileWarnings.size() && i < 10; ++i)
            std::cerr << "  " << analysis.fileWarnings[i].first << ": " << analysis.fileWarnings[i].second << "\n";
        return kExitFailed;
    }
    std::vector<std::string> comparison;
    if (!args.compareDir.empty()) {
        IndexArgs other = args.index;
        other.dir = args.compareDir;
        dl::DumpIndex b;
        dl::IndexReport bReport;
        if (!runIndex(other, b, bReport) || refuseNothingReadable(b, args.compareDir, "no report written") ||
            refuseOutputInsideIndexedDumps(args.output, {&b}))
            return kExitFailed;
        comparison = dl::splitLines(dl::compareText(dl::compareRuns(index, b, {}), index, b));
    }
    if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY") && !std::getenv("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    static int argc = 1;
    static char name[] = "dumplens-cli";
    static char* argv[] = {name, nullptr};
    g_defaultHandler = qInstallMessageHandler(quietRuntimeDirWarning);
    QApplication app(argc, argv);
    dlui::ReportRenderOptions opt;
    opt.pageSize = pageSize;
    opt.comparison = std::move(comparison);
    dlui::ReportRenderInfo info;
    QString error;
    const QString out = QString::fromStdString(args.output);
    if (!dlui::writeReportPdf(index, analysis, opt, out, info, error)) {
        std::cerr << "dumplens-cli: " << error.toStdString() << "\n";
        return kExitFailed;
    }
    std::cout << "Report written to " << args.output << " (" << info.pages << " page" << (info.pages == 1 ? "" : "s")
              << ", " << (analysis.overflow ? "overflow" : "clean") << ")\n";
    return kExitOk;
}

}  // namespace

void Commands::addReport(CLI::App& app) {
    auto* sub = app.add_subcommand("report", "write the overflow report of a dump as PDF (headless)");
    bindIndexOptions(sub, m_report.index);
    sub->add_option("-o,--output", m_report.output, "PDF file to write")->required();
    sub->add_option("--page-size", m_report.pageSize, "A4 (default) or Letter");
    sub->add_option("--compare", m_report.compareDir, "a second run (e.g. the bf16 fix) to compare with");
    sub->callback([this] { m_exit = runReport(m_report); });
}

}  // namespace dlcli
#endif  // DUMPLENS_HAVE_UI

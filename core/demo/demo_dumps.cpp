#include "core/demo/demo_dumps.h"

#include <filesystem>

#include "core/demo/demo_model.h"
#include "core/demo/demo_writer.h"

namespace dl::demo {

bool writeDemoVariant(const std::string& root, const DemoOptions& options, DemoVariantInfo& info, std::string& error) {
    if (root.empty()) {
        error = "demo: empty output folder";
        return false;
    }
    if (options.overflowOnly && options.layout != DemoLayout::Ms22AsyncNpy) {
        error = "demo: overflow-only output is only modelled for the 2.2 A+M layout";
        return false;
    }
    DemoTrace trace;
    if (!DemoModel(options).run(trace, error)) return false;
    std::error_code ec;
    std::filesystem::create_directories(root, ec);
    if (ec) {
        error = "cannot create " + root + ": " + ec.message();
        return false;
    }
    info = DemoVariantInfo{};
    return DemoWriter(options, trace).write(root, info, error);
}

std::vector<std::pair<std::string, DemoOptions>> demoVariants() {
    DemoOptions sat;  // defaults: 2.2 A+M, saturation, NormHead scenario
    DemoOptions inf = sat;
    inf.mode = OverflowMode::InfNan;
    DemoOptions ovf = sat;
    ovf.overflowOnly = true;
    DemoOptions kbk = inf;
    kbk.layout = DemoLayout::Ms24KernelByKernel;
    DemoOptions fix = sat;
    fix.sqrtGradPrecision = DType::BFloat16;
    return {{"ms22_async_saturation", sat},
            {"ms22_async_infnan", inf},
            {"ms22_overflow_only", ovf},
            {"ms24_kbk", kbk},
            {"bf16_fix", fix}};
}

bool writeDemoDumps(const std::string& outDir, DemoSummary& summary, std::string& error) {
    summary = DemoSummary{};
    std::string notes;
    for (const auto& [name, options] : demoVariants()) {
        DemoVariantInfo info;
        if (!writeDemoVariant(outDir + "/" + name, options, info, error)) {
            error = name + ": " + error;
            return false;
        }
        summary.variants.push_back(name);
        if (name == "ms22_async_saturation") {
            summary.culpritOpName = info.culpritShortName;
            summary.firstOverflowIteration = info.firstOverflowIteration;
            notes += "culprit: " + info.culpritFullName + " (rank " + std::to_string(info.culpritRank) +
                ", iteration " + std::to_string(info.firstOverflowIteration) + ")\n";
            for (const auto& f : info.culpritOutputFiles) notes += "culprit output: " + name + "/" + f + "\n";
            notes += "decoy: " + info.decoyOpFullName + " (rank " + std::to_string(info.decoyRank) + ", max |x| " +
                std::to_string(int(info.decoyMaxAbs)) + ", finite)\n";
        }
        notes += name + ": " + std::to_string(info.filesWritten) + " files, " +
            std::to_string(info.bytesWritten / 1024) + " KiB" +
            (info.firstOverflowIteration < 0 ? ", no overflow"
                                             : ", first overflow " + info.culpritShortName + " iteration " +
                     std::to_string(info.firstOverflowIteration)) +
            "\n";
    }
    notes += "rank clocks: rank 2 runs 3 ms behind, so order overflows by Send/Receive, not raw timestamps\n";
    summary.notes = notes;
    return true;
}

}  // namespace dl::demo

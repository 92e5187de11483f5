#pragma once
// `dumplens-cli demo OUTDIR`: the bundled demo dumps of the motivating case (Baichuan2-like fp16
// network, 4 pipeline stages; the NormHead's SqrtGrad on rank 3 overflows first in iteration 5).
// Variants written under OUTDIR (each a full dump root):
//   ms22_async_saturation/  MindSpore 2.2 Ascend async A+M npy, saturation mode (default to open)
//   ms22_async_infnan/      same, INF/NAN mode (inf reaches the head weight; NaN everywhere from it. 6)
//   ms22_overflow_only/     A+M op_debug_mode 3: only overflowing ops' npy + Opdebug JSON records
//   ms24_kbk/               MindSpore 2.4 kernel-by-kernel layout (9-field names), INF/NAN mode
//   bf16_fix/               the twin run with SqrtGrad in bfloat16: nothing overflows
// See core/demo/README.md for the story and the numbers.
#include <string>
#include <vector>

#include "core/demo/demo_options.h"

namespace dl::demo {

struct DemoSummary {
    std::vector<std::string> variants;
    std::string culpritOpName;
    int firstOverflowIteration = -1;
    std::string notes;
};

// Writes every variant under outDir (created if missing). Nothing is written outside outDir.
bool writeDemoDumps(const std::string& outDir, DemoSummary& summary, std::string& error);

// One variant as a dump root at `root` (for tests that need their own variant).
bool writeDemoVariant(const std::string& root, const DemoOptions& options, DemoVariantInfo& info, std::string& error);

// The option sets of the bundled variants, by folder name.
std::vector<std::pair<std::string, DemoOptions>> demoVariants();

}  // namespace dl::demo

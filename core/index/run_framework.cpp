#include "core/index/run_framework.h"

#include <algorithm>
#include <string_view>

namespace dl {
namespace {

constexpr std::string_view kMsprobePrefix = "msprobe ";
constexpr std::string_view kLevel = ", level ";

// msprobe's "framework" values (formats.md 3.2) as people write them.
std::string displayName(std::string_view f) {
    if (f == "pytorch") return "PyTorch";
    if (f == "mindspore") return "MindSpore";
    if (f == "mindtorch") return "MindTorch";
    return std::string(f);
}

}  // namespace

std::string msprobeDumpMode(const std::string& task, const std::string& level) {
    std::string s = std::string(kMsprobePrefix) + (task.empty() ? "dump" : task);
    if (!level.empty()) s += std::string(kLevel) + level;
    return s;
}

RunFramework runFramework(const DumpIndex& ix) {
    RunFramework f;
    const std::string& mode = ix.meta.dumpMode;
    if (mode.starts_with(kMsprobePrefix)) {
        const std::string rest = mode.substr(kMsprobePrefix.size());
        const auto at = rest.find(kLevel);
        f.msprobeTask = rest.substr(0, at);
        if (at != std::string::npos) f.msprobeLevel = rest.substr(at + kLevel.size());
    }
    if (!ix.meta.frameworkVersion.empty()) {
        f.name = "MindSpore";
        f.version = ix.meta.frameworkVersion;
        return f;
    }
    // msprobe ops carry dump.json's "framework" as their net; absent in files before 2025.
    std::vector<std::uint32_t> msprobeRanks;
    bool mindsporeLayout = false;
    for (const RankInfo& r : ix.ranks) {
        if (r.format == DumpFormat::Msprobe) msprobeRanks.push_back(r.rank);
        mindsporeLayout |= r.format == DumpFormat::MindSporeNpy || r.format == DumpFormat::MindSporeStatsOnly ||
            r.format == DumpFormat::MindSporeBin;
    }
    for (const OpRecord& o : ix.ops)
        if (std::find(msprobeRanks.begin(), msprobeRanks.end(), o.rank) != msprobeRanks.end()) {
            if (const std::string_view net = ix.strings.view(o.net); !net.empty()) f.name = displayName(net);
            break;
        }
    if (f.name.empty() && mindsporeLayout) f.name = "MindSpore";
    return f;
}

std::string runFrameworkText(const RunFramework& f) {
    std::string s = f.name.empty() ? "unknown" : f.name;
    if (!f.version.empty())
        s += " " + f.version;
    else if (f.name == "MindSpore" && f.msprobeTask.empty())
        s += " (version unknown)";
    if (!f.msprobeTask.empty()) s += f.msprobeLevel.empty() ? " (msprobe)" : " (msprobe, level " + f.msprobeLevel + ")";
    return s;
}

}  // namespace dl

#include "core/index/index_summary.h"

#include "core/formats/reader_registry.h"
#include "core/index/run_framework.h"
#include "core/util/printable.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

namespace dl {

std::string_view dumpFormatName(DumpFormat f) {
    const FormatReader* r = readerFor(f);
    return r ? r->name : "unknown";
}

static std::string humanBytes(std::uint64_t b) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = double(b);
    int u = 0;
    while (v >= 1024 && u < 4) v /= 1024, ++u;
    return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string indexSummaryJson(const DumpIndex& index, const IndexReport& report) {
    using nlohmann::json;
    json j;
    j["schema"] = "dumplens.index/1";
    j["root"] = index.root;
    json ranks = json::array();
    for (const auto& r : index.ranks)
        ranks.push_back({{"rank", r.rank},
                         {"folder", r.folder},
                         {"format", dumpFormatName(r.format)},
                         {"host", r.host},
                         {"order_source", r.orderSource}});
    j["ranks"] = ranks;
    j["iterations"] = index.iterations();
    j["ops"] = index.ops.size();
    j["tensors"] = index.tensors.size();
    j["bytes"] = index.totalDataBytes();
    j["formats"] = report.formats;
    j["framework_version"] = index.meta.frameworkVersion;
    const RunFramework fw = runFramework(index);
    j["framework"] = fw.name;
    j["msprobe_level"] = fw.msprobeLevel;
    j["device_target"] = index.meta.deviceTarget;
    j["seconds"] = report.seconds;
    j["cache"] = {{"shards_from_cache", report.shardsFromCache},
                  {"shards_indexed", report.shardsIndexed},
                  {"files_read", report.filesRead},
                  {"files_reused", report.filesReused},
                  {"notes", report.cacheNotes}};
    j["overflow_records"] = index.overflows.size();
    const DumpIndex::Memory mem = index.memory();
    j["memory"] = {
        {"array_bytes", mem.arrays},
        {"string_bytes", mem.strings},
        {"array_bytes_per_tensor", index.tensors.empty() ? 0.0 : double(mem.arrays) / double(index.tensors.size())}};
    json warnings = json::array();
    for (const auto& w : index.warnings) warnings.push_back({{"path", w.path}, {"reason", w.reason}});
    j["warnings"] = warnings;
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string indexSummaryText(const DumpIndex& index, const IndexReport& report, std::size_t maxWarnings) {
    std::string s = fmt::format("Dump      {}\n", printable(index.root));
    if (const RunFramework fw = runFramework(index); !fw.name.empty() || !index.meta.deviceTarget.empty())
        s += fmt::format("Framework {}{}\n", runFrameworkText(fw),
                         index.meta.deviceTarget.empty() ? "" : " on " + index.meta.deviceTarget);
    std::string formats;
    for (const auto& f : report.formats) formats += (formats.empty() ? "" : ", ") + f;
    if (!formats.empty()) s += fmt::format("Formats   {}\n", formats);
    std::string ranks;
    for (const auto& r : index.ranks) ranks += (ranks.empty() ? "" : " ") + std::to_string(r.rank);
    const auto its = index.iterations();
    s += fmt::format("Ranks     {} ({})\n", index.ranks.size(), ranks);
    if (const std::string order = orderSourceEvidence(index.ranks); !order.empty())
        s += fmt::format("Order     {}\n", order);
    if (!its.empty()) s += fmt::format("Iterations {} ({}..{})\n", its.size(), its.front(), its.back());
    s += fmt::format("Ops       {}\nTensors   {}\nBytes     {}\n", index.ops.size(), index.tensors.size(),
                     humanBytes(index.totalDataBytes()));
    if (!index.overflows.empty()) s += fmt::format("Overflow records {}\n", index.overflows.size());
    s +=
        fmt::format("Time      {:.3f} s ({} shards from cache, {} indexed; {} files read, {} reused)\n", report.seconds,
                    report.shardsFromCache, report.shardsIndexed, report.filesRead, report.filesReused);
    for (const auto& n : report.cacheNotes) s += "Cache     " + n + "\n";
    s += fmt::format("Warnings  {}\n", index.warnings.size());
    for (std::size_t i = 0; i < index.warnings.size() && i < maxWarnings; ++i)
        s += fmt::format("  {}: {}\n", printable(index.warnings[i].path), printable(index.warnings[i].reason));
    if (index.warnings.size() > maxWarnings)
        s += fmt::format("  ... {} more (use --json for all)\n", index.warnings.size() - maxWarnings);
    return s;
}

std::size_t readableTensorCount(const DumpIndex& index) {
    std::size_t n = 0;
    for (const TensorRecord& t : index.tensors)
        n += !(t.flags & ReadError) &&
            ((t.flags & (HasData | HasCsvStats)) ||
             (t.packedStats.wide ? index.wideStats[t.packedStats.count].known : t.packedStats.known) != 0);
    return n;
}

bool holdsNothingReadable(const DumpIndex& index) { return readableTensorCount(index) == 0 && index.overflows.empty(); }

}  // namespace dl

#include "core/index/tensor_inspection.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/formats/mindspore/mapping_csv.h"
#include "core/index/tensor_file_job.h"
#include "core/util/half.h"

namespace dl {
namespace {
// The L2 of the finite elements is undefined, not 0, when there is none (an all-Inf tensor).
bool l2Known(const TensorStats& st) {
    return st.has(stat::L2) && st.count > st.nanCount + st.posInfCount + st.negInfCount;
}
}  // namespace

bool inspectTensorFile(const std::string& path, TensorInspection& out, std::string& error) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
        error = "'" + path + "' is not a readable file";
        return false;
    }
    out.path = path;
    const std::string base = fs::path(path).filename().string();
    parseDumpFileName(base, out.name);
    if (out.name.kind == DumpFileKind::Mapped) {
        // "{digits}.npy" (a name over NAME_MAX): the op is in the mapping.csv beside it. Without
        // it the header said "output 0, timestamp 0" for an op it did not know.
        MappingTable mapping;
        std::vector<std::uint32_t> badLines;
        std::string mapError;
        const fs::path csv = fs::path(path).parent_path() / "mapping.csv";
        if (fs::is_regular_file(csv, ec) && mapping.read(csv.string(), badLines, mapError))
            if (const std::string* original = mapping.lookup(base)) parseDumpFileName(*original, out.name);
    }
    StatsJob job;
    job.absPath = path;
    job.fileSize = fs::file_size(path, ec);
    job.hint = out.name.dtype;
    const bool rawBin = out.name.kind == DumpFileKind::MindSporeBin;
    if (!rawBin && !base.ends_with(".npy")) {
        error = "'" + path + "' is neither a .npy file nor a MindSpore <=1.2 .bin tensor";
        return false;
    }
    std::vector<std::uint8_t> scratch;
    out.data = rawBin ? runRawBinJob(job, out.name) : runTensorFileJob(job, TensorHeader::Npy, scratch);
    if (!out.data.ok) {
        error = path + ": " + out.data.error;
        return false;
    }
    return true;
}

std::string formatStat(double v, bool known) {
    if (!known || std::isnan(v)) return "n/a";
    return fmt::format("{:.6g}", v);
}

std::string histogramText(const Log2Histogram& h, int width) {
    std::uint64_t peak = std::max({h.zero, h.nan, h.posInf, h.negInf});
    int lo = Log2Histogram::kExpBins, hi = -1;
    for (int i = 0; i < Log2Histogram::kExpBins; ++i)
        if (h.exp[i]) {
            lo = std::min(lo, i);
            hi = std::max(hi, i);
            peak = std::max(peak, h.exp[i]);
        }
    auto bar = [&](std::uint64_t n) {
        const int len = peak ? int(std::ceil(double(n) * width / double(peak))) : 0;
        return std::string(std::size_t(len), '#');
    };
    std::string s;
    auto row = [&](const std::string& label, std::uint64_t n, const char* note) {
        s += fmt::format("  {:>14} {:>12} {}{}\n", label, n, bar(n), note);
    };
    if (h.nan) row("NaN", h.nan, "");
    if (h.negInf) row("-Inf", h.negInf, "");
    if (h.posInf) row("+Inf", h.posInf, "");
    for (int i = hi; i >= lo && hi >= 0; --i) {
        const int e = i + Log2Histogram::kMinExp;
        const char* note = e == 15 ? "  <- fp16 max 65504 lies in this bin"
            : e == -14             ? "  <- fp16 smallest normal"
            : e < -14 && e >= -24  ? "  (fp16 subnormal)"
            : e < -24              ? "  (flushes to 0 in fp16)"
                                   : "";
        row(fmt::format("[2^{}, 2^{})", e, e + 1), h.exp[std::size_t(i)], note);
    }
    if (h.zero) row("zero", h.zero, "");
    return s;
}

std::string inspectionText(const TensorInspection& t) {
    const auto& d = t.data;
    const auto& st = d.stats;
    std::string shape;
    for (std::size_t i = 0; i < d.shape.size(); ++i) shape += (i ? "," : "") + std::to_string(d.shape[i]);
    std::string s = fmt::format("File      {}\n", t.path);
    if (t.name.kind != DumpFileKind::Unknown)
        s += fmt::format("Op        {} {} ({} {}), task {} stream {}, timestamp {}\n", t.name.opType, t.name.opName,
                         t.name.io == Io::Input ? "input" : "output", t.name.slot, t.name.taskId, t.name.streamId,
                         t.name.timestampUs);
    s += fmt::format("Dtype     {}{}  shape ({})  format {}\n", dtypeName(d.dtype),
                     t.name.dtype != DType::Unknown && t.name.dtype != d.dtype
                         ? fmt::format(" (originally {})", dtypeName(t.name.dtype))
                         : std::string(),
                     shape, t.name.format.empty() ? "-" : t.name.format);
    s += fmt::format("Payload   {} bytes at offset {}{}\n", d.dataBytes, d.dataOffset,
                     d.bigEndian ? ", big-endian" : "");
    using namespace stat;
    // Every figure on this line is over the finite elements; L2 says so because MindSpore 2.3+
    // statistic.csv "L2Norm Value" and msprobe's Norm are inf as soon as one element is.
    s += fmt::format("min {}  max {}  mean {}  L2 (finite) {}  max|x| {}\n", formatStat(st.min, st.has(Min)),
                     formatStat(st.max, st.has(Max)), formatStat(st.mean, st.has(Mean)), formatStat(st.l2, l2Known(st)),
                     formatStat(st.maxAbs, st.has(MaxAbs)));
    s += fmt::format("elements {}  NaN {}  +Inf {}  -Inf {}  zero {}  <0 {}  >0 {}\n", st.count, st.nanCount,
                     st.posInfCount, st.negInfCount, st.zeroCount, st.negCount, st.posCount);
    s += fmt::format("|x| >= 65504: {}   fp16 subnormal/flush (0<|x|<2^-14): {}", st.satCount, st.subnormalCount);
    if (st.has(MaxAbs) && !std::isnan(st.maxAbs))
        s += fmt::format("   max|x| is {:.3g}% of the fp16 max", 100.0 * st.maxAbs / kFp16Max);
    s += "\nHistogram of log2|x|:\n" + histogramText(d.hist);
    return s;
}

std::string inspectionJson(const TensorInspection& t) {
    using nlohmann::json;
    const auto& d = t.data;
    const auto& st = d.stats;
    auto num = [](double v, bool known) { return known && !std::isnan(v) ? json(v) : json(nullptr); };
    using namespace stat;
    json hist = json::object();
    for (int i = 0; i < Log2Histogram::kExpBins; ++i)
        if (d.hist.exp[std::size_t(i)]) hist[std::to_string(i + Log2Histogram::kMinExp)] = d.hist.exp[std::size_t(i)];
    json j = {{"schema", "dumplens.inspect/1"},
              {"file", t.path},
              {"op_type", t.name.opType},
              {"op_name", t.name.opName},
              {"io", t.name.hasIo ? (t.name.io == Io::Input ? "input" : "output") : ""},
              {"slot", t.name.slot},
              {"dtype", dtypeName(d.dtype)},
              {"original_dtype", dtypeName(t.name.dtype)},
              {"shape", d.shape},
              {"format", t.name.format},
              {"data_offset", d.dataOffset},
              {"data_bytes", d.dataBytes},
              {"stats",
               {{"min", num(st.min, st.has(Min))},
                {"max", num(st.max, st.has(Max))},
                {"mean", num(st.mean, st.has(Mean))},
                {"l2", num(st.l2, l2Known(st))},
                {"l2_over", "finite elements"},
                {"max_abs", num(st.maxAbs, st.has(MaxAbs))},
                {"count", st.count},
                {"nan", st.nanCount},
                {"pos_inf", st.posInfCount},
                {"neg_inf", st.negInfCount},
                {"zero", st.zeroCount},
                {"negative", st.negCount},
                {"positive", st.posCount},
                {"fp16_saturated", st.satCount},
                {"fp16_subnormal", st.subnormalCount}}},
              {"histogram_log2",
               {{"exponents", hist},
                {"zero", d.hist.zero},
                {"nan", d.hist.nan},
                {"pos_inf", d.hist.posInf},
                {"neg_inf", d.hist.negInf}}}};
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace dl

#include "core/index/tensor_location.h"
#include "core/compare/run_comparison.h"

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>

#include "core/analysis/analysis_context.h"
#include "core/analysis/causal_order.h"
#include "core/analysis/comm_matcher.h"
#include "core/analysis/stage_map.h"
#include "core/io/npy_file.h"

namespace dl {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string fmtNum(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

bool parseValue(std::string_view key, std::string_view text, double off, double& out, std::string& error) {
    if (text == "off" || text == "none") {
        out = off;
        return true;
    }
    try {
        std::size_t used = 0;
        const std::string s(text);
        out = std::stod(s, &used);
        if (used == s.size() && std::isfinite(out)) return true;
    } catch (...) {
    }
    error = "threshold " + std::string(key) + ": \"" + std::string(text) + "\" is not a number (or \"off\")";
    return false;
}

// Symmetric relative difference of one statistic against `scale` (at least the figures
// themselves), with an absolute floor so near-zero figures do not trip it.
bool statCrosses(double a, double b, double scale, const CompareThresholds& t) {
    if (std::isnan(a) || std::isnan(b)) return false;
    const double d = std::fabs(a - b);
    return d > t.absFloor && d > t.statsRel * std::max({std::fabs(a), std::fabs(b), scale});
}

// Largest finite magnitude either run saw: the scale a mean is judged against, because a mean
// of signed values can cancel to near zero and make any change look huge.
double valueRange(const TensorStats& a, const TensorStats& b) {
    double r = 0;
    for (const TensorStats* s : {&a, &b}) {
        if (s->has(stat::Max) && std::isfinite(s->max)) r = std::max(r, std::fabs(s->max));
        if (s->has(stat::Min) && std::isfinite(s->min)) r = std::max(r, std::fabs(s->min));
    }
    return r;
}

std::uint64_t elementCount(const DumpIndex& idx, const TensorRecord& t) {
    std::uint64_t n = 1;
    for (std::uint32_t d = 0; d < t.ndim; ++d) n *= std::uint64_t(std::max<std::int64_t>(0, idx.dims[t.shapeOffset + d]));
    return n;
}

bool loadData(const DumpIndex& idx, const TensorRecord& t, std::vector<float>& out, std::string& error) {
    if (!tensorDataReachable(idx, t, error)) return false;
    const std::string path = tensorDataPath(idx, t);
    return loadTensorAsFloat(path, t.dataOffset, elementCount(idx, t), t.dtype, (t.flags & BigEndian) != 0, out, error);
}

struct Worker {
    const DumpIndex& a;
    const DumpIndex& b;
    const CompareOptions& opt;
    std::atomic<std::uint64_t> bytes{0};

    void compare(const TensorPair& p, TensorComparison& row) {
        const TensorRecord &ta = a.tensors[p.a], &tb = b.tensors[p.b];
        TensorMetrics& m = row.metrics;
        computeStatsMetrics(a.stats(ta), b.stats(tb), m);
        const bool shapesEqual = a.shape(ta) == b.shape(tb);
        if (!shapesEqual) m.shapeMismatch = true;
        const bool haveData = (ta.flags & HasData) && (tb.flags & HasData) && ta.file && tb.file &&
                              !(ta.flags & ReadError) && !(tb.flags & ReadError);
        const bool sameOrder = (ta.flags & FortranOrder) == (tb.flags & FortranOrder);
        if (opt.useData && haveData && shapesEqual && sameOrder) compareData(ta, tb, row);
        else if (opt.useData && haveData && !shapesEqual) row.note = "shapes differ: data not compared";
        else if (opt.useData && haveData) row.note = "element orders differ (row- vs column-major): data not compared";
    }

    void compareData(const TensorRecord& ta, const TensorRecord& tb, TensorComparison& row) {
        thread_local std::vector<float> va, vb;
        std::string error;
        if (!loadData(a, ta, va, error) || !loadData(b, tb, vb, error)) {
            row.note = "data not compared: " + error;
            return;
        }
        if (va.size() != vb.size()) {
            row.note = "element counts differ: data not compared";
            return;
        }
        bytes += ta.dataBytes + tb.dataBytes;
        computeDataMetrics(va.data(), vb.data(), va.size(), ta.ndim == 0, row.metrics);
        if (row.metrics.nanInfMismatch) row.note = "NaN/Inf positions differ";
    }
};

// Earliest diverged row: the first per (rank, iteration) in execution order, then the lowest
// iteration, then across ranks by causality in run A.
void findFirstDivergence(const DumpIndex& a, RunComparison& res) {
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> firstPer;   // (iteration, rank) -> row
    for (std::size_t r = 0; r < res.rows.size(); ++r) {
        if (!res.rows[r].diverged) continue;
        const OpRecord& o = a.ops[a.tensors[res.alignment.tensors[r].a].op];
        firstPer.try_emplace({o.iteration, o.rank}, r);
    }
    if (firstPer.empty()) return;
    const std::uint32_t iter = firstPer.begin()->first.first;
    std::vector<std::size_t> cand;
    for (const auto& [key, row] : firstPer)
        if (key.first == iter) cand.push_back(row);
    std::size_t best = cand.front();
    if (cand.size() == 1) {
        res.firstDivergence = std::int64_t(best);
        res.orderEvidence = "one rank diverges first in iteration " + std::to_string(iter);
        return;
    }
    AnalysisContext ctx(a);
    ctx.comm = findCommOps(a);
    std::vector<std::string> notes;
    ctx.stages = inferStageMap(a, ctx.comm, "", notes);
    ctx.match = matchCommunication(a, ctx.comm, ctx.stages);
    estimateClockOffsets(ctx, notes);
    OrderEvidence weakest = OrderEvidence::Causal;
    auto opOf = [&](std::size_t row) { return a.tensors[res.alignment.tensors[row].a].op; };
    for (std::size_t k = 1; k < cand.size(); ++k) {
        OrderEvidence ev;
        if (firstOf(ctx, opOf(cand[k]), opOf(best), ev)) best = cand[k];
        weakest = std::max(weakest, ev);
    }
    res.firstDivergence = std::int64_t(best);
    res.orderEvidence = std::to_string(cand.size()) + " ranks diverge in iteration " + std::to_string(iter) +
                        "; ordered by " +
                        (weakest == OrderEvidence::Causal  ? "Send/Receive causality"
                         : weakest == OrderEvidence::Clock ? "clock-corrected timestamps (weak evidence)"
                                                           : "the pipeline schedule (weak evidence)");
}

}  // namespace

bool parseThresholds(std::string_view spec, CompareThresholds& t, std::string& error) {
    std::size_t pos = 0;
    while (pos < spec.size()) {
        std::size_t end = spec.find(',', pos);
        if (end == std::string_view::npos) end = spec.size();
        const std::string_view item = spec.substr(pos, end - pos);
        pos = end + 1;
        if (item.empty()) continue;
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos) {
            error = "threshold \"" + std::string(item) + "\": expected KEY=VALUE";
            return false;
        }
        const std::string_view key = item.substr(0, eq), val = item.substr(eq + 1);
        bool ok = true;
        if (key == "cosine") ok = parseValue(key, val, -kInf, t.minCosine, error);
        else if (key == "abs_floor") ok = parseValue(key, val, 0, t.absFloor, error);
        else if (key == "max_abs") ok = parseValue(key, val, kInf, t.maxAbsErr, error);
        else if (key == "max_rel") ok = parseValue(key, val, kInf, t.maxRelErr, error);
        else if (key == "one_thousandth") ok = parseValue(key, val, -1, t.minOneThousandth, error);
        else if (key == "five_thousandth") ok = parseValue(key, val, -1, t.minFiveThousandth, error);
        else if (key == "stats_rel") ok = parseValue(key, val, kInf, t.statsRel, error);
        else if (key == "nan_inf") {
            if (val == "on" || val == "1") t.nanInf = true;
            else if (val == "off" || val == "0") t.nanInf = false;
            else { error = "threshold nan_inf: expected on or off"; return false; }
        } else {
            error = "unknown threshold \"" + std::string(key) + "\" (cosine, abs_floor, max_abs, max_rel, one_thousandth, "
                    "five_thousandth, stats_rel, nan_inf)";
            return false;
        }
        if (!ok) return false;
    }
    return true;
}

std::string thresholdSpec(const CompareThresholds& t) {
    const auto v = [](double x, bool off) { return off ? std::string("off") : fmtNum(x); };
    return "cosine=" + v(t.minCosine, t.minCosine == -kInf) + ",abs_floor=" + fmtNum(t.absFloor) +
           ",max_abs=" + v(t.maxAbsErr, t.maxAbsErr == kInf) + ",max_rel=" + v(t.maxRelErr, t.maxRelErr == kInf) +
           ",one_thousandth=" + v(t.minOneThousandth, t.minOneThousandth < 0) +
           ",five_thousandth=" + v(t.minFiveThousandth, t.minFiveThousandth < 0) +
           ",stats_rel=" + v(t.statsRel, t.statsRel == kInf) + ",nan_inf=" + (t.nanInf ? "on" : "off");
}

std::string describeThresholds(const CompareThresholds& t) {
    std::vector<std::string> parts;
    if (t.minCosine > -kInf) parts.push_back("cosine < " + fmtNum(t.minCosine) + " (with max_abs > " + fmtNum(t.absFloor) + ")");
    if (t.maxAbsErr < kInf) parts.push_back("max_abs > " + fmtNum(t.maxAbsErr));
    if (t.maxRelErr < kInf) parts.push_back("max_rel > " + fmtNum(t.maxRelErr));
    if (t.minOneThousandth >= 0) parts.push_back("one_thousandth < " + fmtNum(t.minOneThousandth));
    if (t.minFiveThousandth >= 0) parts.push_back("five_thousandth < " + fmtNum(t.minFiveThousandth));
    if (t.statsRel < kInf)
        parts.push_back("stats_rel > " + fmtNum(t.statsRel) + " (max/min/L2 relative to themselves, mean to the value range; "
                        "with abs diff > " + fmtNum(t.absFloor) + ")");
    if (t.nanInf) parts.push_back("NaN/Inf disagreement");
    std::string s;
    for (const std::string& p : parts) s += (s.empty() ? "" : ", ") + p;
    return s.empty() ? "none (every test off)" : s;
}

bool crossesThreshold(const TensorMetrics& m, const TensorStats& sa, const TensorStats& sb, const CompareThresholds& t,
                      std::string& reason) {
    if (t.nanInf && m.nanInfMismatch) {
        reason = "NaN/Inf disagreement";
        return true;
    }
    if (m.fromData) {
        if (m.cosine < t.minCosine && m.maxAbsErr > t.absFloor) reason = "cosine " + fmtNum(m.cosine) + " < " + fmtNum(t.minCosine);
        else if (m.maxAbsErr > t.maxAbsErr) reason = "max_abs " + fmtNum(m.maxAbsErr) + " > " + fmtNum(t.maxAbsErr);
        else if (m.maxRelErr > t.maxRelErr) reason = "max_rel " + fmtNum(m.maxRelErr) + " > " + fmtNum(t.maxRelErr);
        else if (m.oneThousandthRatio < t.minOneThousandth)
            reason = "one_thousandth " + fmtNum(m.oneThousandthRatio) + " < " + fmtNum(t.minOneThousandth);
        else if (m.fiveThousandthRatio < t.minFiveThousandth)
            reason = "five_thousandth " + fmtNum(m.fiveThousandthRatio) + " < " + fmtNum(t.minFiveThousandth);
        return !reason.empty();
    }
    if (t.statsRel >= kInf) return false;
    const double range = valueRange(sa, sb);
    const std::tuple<const char*, std::uint32_t, double, double, double> figures[] = {
        {"max", stat::Max, sa.max, sb.max, 0.0}, {"min", stat::Min, sa.min, sb.min, 0.0},
        {"mean", stat::Mean, sa.mean, sb.mean, range}, {"l2", stat::L2, sa.l2, sb.l2, 0.0}};
    for (const auto& [name, bit, va, vb, scale] : figures) {
        if (!sa.has(bit) || !sb.has(bit) || !statCrosses(va, vb, scale, t)) continue;
        reason = std::string(name) + " " + fmtNum(va) + " vs " + fmtNum(vb) + ": relative difference > " + fmtNum(t.statsRel);
        return true;
    }
    return false;
}

std::string ioSlotLabel(const TensorRecord& t) {
    return std::string(t.io == Io::Input ? "input." : "output.") + std::to_string(t.slot);
}

void applyThresholds(const DumpIndex& a, const DumpIndex& b, const CompareThresholds& t, RunComparison& c) {
    c.thresholds = t;
    c.diverged = 0;
    c.firstDivergence = -1;
    c.orderEvidence.clear();
    for (std::size_t r = 0; r < c.rows.size(); ++r) {
        TensorComparison& row = c.rows[r];
        const TensorPair& p = c.alignment.tensors[r];
        std::string why;
        row.diverged = crossesThreshold(row.metrics, a.stats(a.tensors[p.a]), b.stats(b.tensors[p.b]), t, why);
        row.reason = row.diverged ? std::move(why) : row.note;
        c.diverged += row.diverged;
    }
    findFirstDivergence(a, c);
}

RunComparison compareRuns(const DumpIndex& a, const DumpIndex& b, const CompareOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    RunComparison res;
    res.thresholds = options.thresholds;
    res.alignment = alignRuns(a, b, options.pins);
    res.rows.resize(res.alignment.tensors.size());
    Worker w{a, b, options};
    std::unique_ptr<tbb::global_control> limit;
    if (options.threads)
        limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, options.threads);
    std::atomic<bool> cancelled{false};
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, res.rows.size(), 64), [&](const tbb::blocked_range<std::size_t>& r) {
        if (options.stop.stop_requested()) {
            cancelled = true;
            return;
        }
        for (std::size_t i = r.begin(); i != r.end(); ++i) w.compare(res.alignment.tensors[i], res.rows[i]);
    });
    res.cancelled = cancelled;
    res.bytesCompared = w.bytes;
    for (const TensorComparison& row : res.rows) (row.metrics.fromData ? res.fromData : res.fromStats) += 1;
    if (!res.cancelled) applyThresholds(a, b, options.thresholds, res);
    res.warnings = res.alignment.warnings;
    if (!res.alignment.onlyOpsA.empty() || !res.alignment.onlyOpsB.empty())
        res.warnings.push_back(std::to_string(res.alignment.onlyOpsA.size()) + " op(s) only in run A, " +
                               std::to_string(res.alignment.onlyOpsB.size()) + " only in run B");
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

}  // namespace dl

#include "core/compare/run_comparison.h"

#include <tbb/global_control.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <tuple>

#include "core/analysis/analysis_context.h"
#include "core/analysis/causal_order.h"
#include "core/analysis/comm_matcher.h"
#include "core/analysis/replay_kernels.h"
#include "core/analysis/stage_map.h"
#include "core/compare/msprobe_sidecar.h"
#include "core/index/tensor_values.h"
#include "core/util/parallel_for.h"
#include "core/util/text.h"

namespace dl {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string fmtNum(double v) { return shortNumber(v); }

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

DType dtypeOf(const TensorRecord& t) { return t.origDtype != DType::Unknown ? t.origDtype : t.dtype; }

std::string shapeText(const std::vector<std::int64_t>& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(s[i]);
    }
    out += ']';
    return out;
}

std::string fmtG(double v, int digits = 4) {
    std::ostringstream s;
    s.precision(digits);
    s << v;
    return s.str();
}

// Every figure both runs know is equal, and they know the same figures.
bool statsEqual(const TensorStats& a, const TensorStats& b) {
    const std::uint32_t ka = a.known & ~stat::Histogram, kb = b.known & ~stat::Histogram;
    if (ka != kb || ka == 0) return false;
    auto eq = [&](std::uint32_t bit, double x, double y) {
        return !(ka & bit) || x == y || (std::isnan(x) && std::isnan(y));
    };
    auto eqn = [&](std::uint32_t bit, std::uint64_t x, std::uint64_t y) { return !(ka & bit) || x == y; };
    return eq(stat::Max, a.max, b.max) && eq(stat::Min, a.min, b.min) && eq(stat::Mean, a.mean, b.mean) &&
        eq(stat::L2, a.l2, b.l2) && eqn(stat::Count, a.count, b.count) && eqn(stat::NanCount, a.nanCount, b.nanCount) &&
        eqn(stat::PosInfCount, a.posInfCount, b.posInfCount) && eqn(stat::NegInfCount, a.negInfCount, b.negInfCount);
}

// Logical values: a device layout's padding is dropped (core/index/tensor_values.h).
bool loadData(const DumpIndex& idx, const TensorRecord& t, std::vector<float>& out, std::string& error) {
    TensorValues v;
    if (!loadTensorValues(idx, t, v, error)) return false;
    out = std::move(v.data);
    return true;
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
        // An unreadable file has no shape or values: its pair is unknown, not a shape divergence.
        const bool unreadA = (ta.flags & ReadError) && !a.stats(ta).known,
                   unreadB = (tb.flags & ReadError) && !b.stats(tb).known;
        if (unreadA || unreadB) {
            m.unreadable = true;
            row.note = std::string("not compared: run ") + (unreadA ? "A" : "B") + "'s tensor file could not be read";
            return;
        }
        // Logical shapes: a raw CANN tensor in FRACTAL_NZ matches its ND counterpart.
        const std::vector<std::int64_t> shapeA = logicalShape(a, ta), shapeB = logicalShape(b, tb);
        const bool shapesEqual = shapeA == shapeB;
        if (!shapesEqual) m.shapeMismatch = true;
        const bool haveData = (ta.flags & HasData) && (tb.flags & HasData) && a.side(ta).file && b.side(tb).file &&
            !(ta.flags & ReadError) && !(tb.flags & ReadError);
        const bool sameOrder = (ta.flags & FortranOrder) == (tb.flags & FortranOrder);
        if (opt.useData && haveData && shapesEqual && sameOrder)
            compareData(ta, tb, row);
        else if (!shapesEqual)
            row.note = "shapes differ: " + shapeText(shapeA) + " vs " + shapeText(shapeB);
        else if (opt.useData && haveData)
            row.note = "element orders differ (row- vs column-major): data not compared";
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
        bytes += a.side(ta).dataBytes + b.side(tb).dataBytes;
        computeDataMetrics(va.data(), vb.data(), va.size(), ta.ndim == 0, row.metrics);
        if (row.metrics.nanInfMismatch) row.note = "NaN/Inf positions differ";
    }
};

// Earliest row of a class: the first per (rank, iteration) in execution order, then the lowest
// iteration, then across ranks by causality in run A. The causal context is built once, on the
// first question that needs it.
class FirstFinder {
public:
    FirstFinder(const DumpIndex& a, const RunComparison& res) : m_a(a), m_res(res) {}

    template <class Pred>
    std::int64_t find(Pred pred, std::string* evidence) {
        std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> firstPer;  // (iteration, rank) -> row
        for (std::size_t r = 0; r < m_res.rows.size(); ++r) {
            if (!pred(m_res.rows[r])) continue;
            const OpRecord& o = m_a.ops[opOf(r)];
            firstPer.try_emplace({o.iteration, o.rank}, r);
        }
        if (firstPer.empty()) return -1;
        const std::uint32_t iter = firstPer.begin()->first.first;
        std::vector<std::size_t> cand;
        for (const auto& [key, row] : firstPer)
            if (key.first == iter) cand.push_back(row);
        std::size_t best = cand.front();
        if (cand.size() == 1) {
            if (evidence) *evidence = "one rank diverges first in iteration " + std::to_string(iter);
            return std::int64_t(best);
        }
        const AnalysisContext& ctx = context();
        OrderEvidence weakest = OrderEvidence::Causal;
        for (std::size_t k = 1; k < cand.size(); ++k) {
            OrderEvidence ev;
            if (firstOf(ctx, opOf(cand[k]), opOf(best), ev)) best = cand[k];
            weakest = std::max(weakest, ev);
        }
        if (evidence)
            *evidence = std::to_string(cand.size()) + " ranks diverge in iteration " + std::to_string(iter) +
                "; ordered by " +
                (weakest == OrderEvidence::Causal      ? "Send/Receive causality"
                     : weakest == OrderEvidence::Clock ? "clock-corrected timestamps (weak evidence)"
                                                       : "the pipeline schedule (weak evidence)");
        return std::int64_t(best);
    }

private:
    std::uint32_t opOf(std::size_t row) const { return m_a.tensors[m_res.alignment.tensors[row].a].op; }
    const AnalysisContext& context() {
        if (!m_ctx) {
            m_ctx = std::make_unique<AnalysisContext>(m_a);
            m_ctx->comm = findCommOps(m_a);
            std::vector<std::string> notes;
            m_ctx->stages = inferStageMap(m_a, m_ctx->comm, "", notes);
            m_ctx->match = matchCommunication(m_a, m_ctx->comm, m_ctx->stages);
            estimateClockOffsets(*m_ctx, notes);
        }
        return *m_ctx;
    }
    const DumpIndex& m_a;
    const RunComparison& m_res;
    std::unique_ptr<AnalysisContext> m_ctx;
};

// The coarsest floating dtype among the matched tensors of both runs.
DType runPrecision(const DumpIndex& a, const DumpIndex& b, const RunAlignment& al) {
    DType p = DType::Unknown;
    for (const TensorPair& tp : al.tensors)
        p = coarserFloat(p, coarserFloat(dtypeOf(a.tensors[tp.a]), dtypeOf(b.tensors[tp.b])));
    return p;
}

std::string where(const DumpIndex& a, const RunComparison& c, std::int64_t row) {
    const TensorRecord& t = a.tensors[c.alignment.tensors[std::size_t(row)].a];
    const OpRecord& o = a.ops[t.op];
    return a.strings.str(o.type) + " " + a.strings.str(o.name) + " " + a.tensorLabel(t) + " (rank " +
        std::to_string(o.rank) + ")";
}

// One line: how far the runs agree, and what happens at the first divergence.
std::string storyOf(const DumpIndex& a, const DumpIndex& b, const RunComparison& c) {
    const bool precisionRules = c.thresholds.ulps < kInf;
    const std::string agreeTo = precisionRules && c.precision != DType::Unknown
        ? "agree to " + std::string(dtypeName(c.precision)) + " precision"
        : "agree within the thresholds";
    if (c.rows.empty()) return "No tensor of run A could be matched with run B.";
    if (c.firstArgument >= 0) {
        const ArgumentDifference& d = c.argumentDiffs[std::size_t(c.firstArgument)];
        const OpRecord& o = a.ops[d.op];
        std::string s = "Runs diverge in iteration " + std::to_string(o.iteration) +
            " at a non-tensor argument: " + a.strings.str(o.type) + " " + a.strings.str(o.name) + " " + d.label +
            " is " + d.a + " in run A, " + d.b + " in run B";
        if (c.firstDivergence >= 0)
            s += "; the first tensor to diverge is " + where(a, c, c.firstDivergence) + " (" +
                c.rows[std::size_t(c.firstDivergence)].reason + ")";
        return s + ".";
    }
    if (c.firstDivergence < 0) {
        if (c.firstDifference < 0) return "Runs are identical in every compared tensor.";
        const OpRecord& o = a.ops[a.tensors[c.alignment.tensors[std::size_t(c.firstDifference)].a].op];
        return "Runs " + agreeTo + " in every compared tensor; values change from iteration " +
            std::to_string(o.iteration) + " on (first at " + where(a, c, c.firstDifference) + ").";
    }
    const std::size_t r = std::size_t(c.firstDivergence);
    const TensorPair& p = c.alignment.tensors[r];
    const TensorRecord &ta = a.tensors[p.a], &tb = b.tensors[p.b];
    const OpRecord& o = a.ops[ta.op];
    const bool differedBefore = c.firstDifference >= 0 && c.firstDifference != c.firstDivergence;
    // "identical until iteration 0" would claim an agreeing iteration that was never there: when
    // the divergence is in the first compared iteration, say so instead.
    std::uint32_t firstIteration = o.iteration;
    for (const TensorPair& q : c.alignment.tensors)
        firstIteration = std::min(firstIteration, a.ops[a.tensors[q.a].op].iteration);
    std::string s = o.iteration == firstIteration
        ? "Runs diverge in iteration " + std::to_string(o.iteration) + ", the first compared" +
            (differedBefore ? " (they " + agreeTo + " in the tensors before it)" : std::string()) + "; "
        : "Runs " + (differedBefore ? agreeTo : std::string("are identical")) + " until iteration " +
            std::to_string(o.iteration) + "; ";
    const std::string at = a.strings.str(o.type) + " " + a.strings.str(o.name) + " " + a.tensorLabel(ta);
    const TensorComparison& row = c.rows[r];
    switch (row.verdict) {
        case Verdict::NonFinite: {
            const AnomalyStatus xa = anomalyOf(a.stats(ta), dtypeOf(ta)), xb = anomalyOf(b.stats(tb), dtypeOf(tb));
            if (xa.any() && !xb.any())
                s += "run A overflows at " + at + " (" + anomalyText(xa) + "), run B stays finite.";
            else if (xb.any() && !xa.any())
                s += "run B overflows at " + at + " (" + anomalyText(xb) + "), run A stays finite.";
            else
                s += "NaN/Inf differ at " + at + " (" + row.reason + ").";
            break;
        }
        case Verdict::Shape:
            s += "the shapes differ at " + at + " (" + row.reason + ").";
            break;
        case Verdict::Md5:
            s += "the checksums differ at " + at + " (" + row.reason + ").";
            break;
        default:
            s += "they diverge at " + at + " (" + row.reason + ").";
            break;
    }
    return s;
}

// The earliest differing argument, when it comes before the first tensor divergence: an earlier
// iteration, or an earlier op of the same rank and iteration, or the same op when the diverging
// tensor is one of its outputs (an input tensor of the op came before the call).
std::int64_t firstArgumentDifference(const DumpIndex& a, const RunComparison& c) {
    std::int64_t best = -1;
    auto key = [&](std::uint32_t op) { return std::tuple(a.ops[op].iteration, a.ops[op].rank, a.ops[op].execPos); };
    for (std::size_t i = 0; i < c.argumentDiffs.size(); ++i)
        if (best < 0 || key(c.argumentDiffs[i].op) < key(c.argumentDiffs[std::size_t(best)].op)) best = std::int64_t(i);
    if (best < 0 || c.firstDivergence < 0) return best;
    const std::uint32_t op = c.argumentDiffs[std::size_t(best)].op;
    const TensorRecord& t = a.tensors[c.alignment.tensors[std::size_t(c.firstDivergence)].a];
    const OpRecord &x = a.ops[op], &y = a.ops[t.op];
    if (x.iteration != y.iteration) return x.iteration < y.iteration ? best : -1;
    if (x.rank != y.rank) return -1;  // other ranks: no order between them to claim
    // msprobe files a module's parameter grads where the module first ran; every backward entry
    // runs after every forward one of its step.
    const auto backward = [&](const OpRecord& o) {
        const std::string_view n = a.strings.view(o.name);
        return n.find(".backward") != std::string_view::npos || n.find("parameters_grad") != std::string_view::npos;
    };
    if (backward(y) && !backward(x)) return best;
    return x.execPos < y.execPos || (op == t.op && t.io == Io::Output) ? best : -1;
}

}  // namespace

bool crossesThreshold(const TensorMetrics& m, const TensorStats& sa, const TensorStats& sb, const CompareThresholds& t,
                      std::string& reason) {
    if (t.nanInf && m.nanInfMismatch) {
        reason = "NaN/Inf disagreement";
        return true;
    }
    if (m.fromData) {
        if (m.cosine < t.minCosine && m.maxAbsErr > t.absFloor)
            reason = "cosine " + fmtNum(m.cosine) + " < " + fmtNum(t.minCosine);
        else if (m.cosine < t.minCosineAlone)
            reason = "cosine " + fmtNum(m.cosine) + " < " + fmtNum(t.minCosineAlone);
        else if (m.maxAbsErr > t.maxAbsErr)
            reason = "max_abs " + fmtNum(m.maxAbsErr) + " > " + fmtNum(t.maxAbsErr);
        else if (m.maxRelErr > t.maxRelErr)
            reason = "max_rel " + fmtNum(m.maxRelErr) + " > " + fmtNum(t.maxRelErr);
        else if (m.oneThousandthRatio < t.minOneThousandth)
            reason = "one_thousandth " + fmtNum(m.oneThousandthRatio) + " < " + fmtNum(t.minOneThousandth);
        else if (m.fiveThousandthRatio < t.minFiveThousandth)
            reason = "five_thousandth " + fmtNum(m.fiveThousandthRatio) + " < " + fmtNum(t.minFiveThousandth);
        return !reason.empty();
    }
    if (t.statsRel >= kInf) return false;
    const double range = valueRange(sa, sb);
    const std::tuple<const char*, std::uint32_t, double, double, double> figures[] = {
        {"max", stat::Max, sa.max, sb.max, 0.0},
        {"min", stat::Min, sa.min, sb.min, 0.0},
        {"mean", stat::Mean, sa.mean, sb.mean, range},
        {"l2", stat::L2, sa.l2, sb.l2, 0.0}};
    for (const auto& [name, bit, va, vb, scale] : figures) {
        if (!sa.has(bit) || !sb.has(bit) || !statCrosses(va, vb, scale, t)) continue;
        reason = std::string(name) + " " + fmtNum(va) + " vs " + fmtNum(vb) + ": relative difference > " +
            fmtNum(t.statsRel);
        return true;
    }
    return false;
}

namespace {

// The rounding a reduction of n elements in dtype d may carry, relative to the sum of the
// magnitudes it adds: (n-1) u (recursive summation, Higham 4.2), capped at 1. Only fp16 and bf16:
// msprobe reduces those in their own dtype; wider types reduce at a precision the 2-ulp bound of
// the result covers.
double reductionRounding(DType d, std::uint64_t n) {
    if ((d != DType::Float16 && d != DType::BFloat16) || n < 2) return 0;
    return std::min(1.0, double(n - 1) * unitRoundoff(d));
}

// The precision bound on statistics: max, min and mean against the value range, L2 against the
// larger norm; Mean and L2 widened by the reduction rounding of each run (a sum of squares off by
// g relative moves its square root by up to 1 - sqrt(1 - g)). Unknown when no figure is known on
// both sides.
Verdict judgeStatsPrecision(const TensorStats& sa, const TensorStats& sb, DType p, double ulps, DType da, DType db,
                            std::uint64_t na, std::uint64_t nb, std::string& reason) {
    const double range = valueRange(sa, sb);
    const double l2 = std::max(std::fabs(sa.l2), std::fabs(sb.l2));
    const double ga = reductionRounding(da, na), gb = reductionRounding(db, nb);
    const double meanSlack = range * (ga + gb);
    const double l2Slack = l2 * ((1 - std::sqrt(1 - ga)) + (1 - std::sqrt(1 - gb)));
    const std::tuple<const char*, std::uint32_t, double, double, double, double> figures[] = {
        {"max", stat::Max, sa.max, sb.max, range, 0.0},
        {"min", stat::Min, sa.min, sb.min, range, 0.0},
        {"mean", stat::Mean, sa.mean, sb.mean, range, meanSlack},
        {"l2", stat::L2, sa.l2, sb.l2, l2, l2Slack}};
    bool any = false, reduced = false;
    double worst = 0;
    for (const auto& [name, bit, va, vb, scale, slack] : figures) {
        if (!sa.has(bit) || !sb.has(bit) || std::isnan(va) || std::isnan(vb)) continue;
        any = true;
        const double d = std::fabs(va - vb), ulp = ulpAt(scale, p);
        if (d == 0) continue;
        const double bound = ulps * ulp + slack;
        if (ulp == 0 || d > bound) {
            reason = std::string(name) + " " + fmtNum(va) + " vs " + fmtNum(vb) + ": " +
                (ulp == 0 ? std::string("differ (") + (p == DType::Unknown ? "non-floating dtype" : "zero scale") + ")"
                          : fmtG(d / ulp) + " ulps of " + std::string(dtypeName(p)) + " at " + fmtG(scale, 6) +
                         " (bound " + fmtNum(ulps) +
                         (slack > 0 ? " + the reduction's rounding, " + fmtG(slack / ulp, 4) + " ulps"
                                    : std::string()) +
                         ")");
            return Verdict::Diverged;
        }
        if (d > ulps * ulp) reduced = true;
        worst = std::max(worst, d / ulp);
    }
    if (!any) return Verdict::Unknown;
    reason = "statistics within " + fmtG(worst, 3) + " ulps of " + std::string(dtypeName(p)) + " at the value range";
    if (reduced) {
        const DType low = ga >= gb ? da : db;
        reason += " (a mean or L2 within the rounding of its reduction in " + std::string(dtypeName(low)) + " over " +
            std::to_string(ga >= gb ? na : nb) + " elements)";
    }
    return Verdict::Precision;
}

Verdict judgeDataPrecision(const TensorMetrics& m, const TensorStats& sa, const TensorStats& sb, DType p,
                           const CompareThresholds& t, std::string& reason) {
    const double scale = valueRange(sa, sb), ulp = ulpAt(scale, p);
    if (ulp > 0 && m.maxAbsErr <= t.ulps * ulp) {
        reason =
            "within " + fmtG(m.maxAbsErr / ulp, 3) + " ulps of " + std::string(dtypeName(p)) + " at " + fmtG(scale, 6);
        return Verdict::Precision;
    }
    // One element far off can sit in a large tensor whose values agree to the dtype's rounding as a
    // whole: cosine and relative L2 error within the bound (2^(1-p) is one ulp relative).
    const double norm = std::max(sa.has(stat::L2) ? sa.l2 : 0.0, sb.has(stat::L2) ? sb.l2 : 0.0);
    const double relL2 = norm > 0 ? m.eucDist / norm : kInf;
    const double relUlp = 2 * unitRoundoff(p);
    if (relUlp > 0 && !std::isnan(m.cosine) && 1 - m.cosine <= t.precisionCosine && relL2 <= t.ulps * relUlp) {
        reason = "cosine " + fmtNum(m.cosine) + ", relative L2 error " + fmtG(relL2 / relUlp, 3) + " ulps of " +
            std::string(dtypeName(p)) + " (max_abs " + fmtNum(m.maxAbsErr) + ")";
        return Verdict::Precision;
    }
    reason = ulp > 0 ? "max_abs " + fmtNum(m.maxAbsErr) + " is " + fmtG(m.maxAbsErr / ulp) + " ulps of " +
            std::string(dtypeName(p)) + " at " + fmtG(scale, 6) + " (bound " + fmtNum(t.ulps) + ")"
                     : "max_abs " + fmtNum(m.maxAbsErr) + ": values differ (" +
            (p == DType::Unknown ? "non-floating dtype" : "zero scale") + ")";
    return Verdict::Diverged;
}

}  // namespace

Verdict judgeTensor(const TensorMetrics& m, const TensorStats& sa, const TensorStats& sb, DType da, DType db,
                    DType precision, const CompareThresholds& t, const std::string& note, std::string& reason,
                    std::string_view md5A, std::string_view md5B, std::uint64_t elementsA, std::uint64_t elementsB) {
    reason.clear();
    if (m.unreadable) {
        reason = note;
        return Verdict::Unknown;
    }
    if (m.shapeMismatch) {
        reason = note.rfind("shapes differ", 0) == 0 ? note : "element counts differ";
        return Verdict::Shape;
    }
    if (da != DType::Unknown && db != DType::Unknown && isFloating(da) != isFloating(db)) {
        reason = "dtypes incompatible: " + std::string(dtypeName(da)) + " vs " + std::string(dtypeName(db));
        return Verdict::Shape;
    }
    if (t.nanInf) {
        const AnomalyStatus xa = anomalyOf(sa, da), xb = anomalyOf(sb, db);
        if (xa.known && xb.known && xa.any() != xb.any()) {
            const auto side = [](const AnomalyStatus& x, const TensorStats& s, DType d) {
                if (x.any()) return anomalyText(x);
                std::string f = "finite";
                if (s.has(stat::Max | stat::Min))
                    f += " (largest magnitude " + fmtG(std::max(std::fabs(s.max), std::fabs(s.min)), 6) + ", " +
                        std::string(dtypeName(d)) + ")";
                return f;
            };
            reason = "run A " + side(xa, sa, da) + ", run B " + side(xb, sb, db);
            return Verdict::NonFinite;
        }
        if (m.nanInfMismatch) {
            reason = note.empty() ? std::string("NaN/Inf counts differ") : note;
            return Verdict::NonFinite;
        }
    }
    // Non-floating pairs must be equal; floating pairs are judged at the comparison's precision.
    const DType p = isFloating(da) || isFloating(db) ? precision : DType::Unknown;
    const bool md5Known = !md5A.empty() && !md5B.empty();
    if (md5Known && md5A == md5B) {
        reason = "equal checksums";
        return Verdict::Identical;
    }
    if (!md5Known && (m.fromData ? m.maxAbsErr == 0 : statsEqual(sa, sb))) {
        reason = m.fromData ? "equal values" : "equal statistics";
        return Verdict::Identical;
    }
    const std::string md5Text =
        md5Known ? "checksums " + std::string(md5A) + " vs " + std::string(md5B) : std::string();
    if (md5Known && (m.fromData ? m.maxAbsErr == 0 : statsEqual(sa, sb))) {
        reason = md5Text + ", " + (m.fromData ? "equal values" : "equal statistics");
        return Verdict::Md5;
    }
    if (crossesThreshold(m, sa, sb, t, reason)) return Verdict::Diverged;
    const bool haveStats = (sa.known & sb.known & (stat::Max | stat::Min | stat::Mean | stat::L2)) != 0;
    if (!m.fromData && !haveStats) {
        reason = note.empty() ? std::string("nothing to compare") : note;
        return Verdict::Unknown;
    }
    Verdict v = Verdict::Agree;
    if (t.ulps >= kInf)
        reason = note.empty() ? std::string("within the thresholds") : note;
    else
        v = m.fromData ? judgeDataPrecision(m, sa, sb, p, t, reason)
                       : judgeStatsPrecision(sa, sb, p, t.ulps, da, db, elementsA, elementsB, reason);
    if (md5Known && v != Verdict::Diverged) {  // the statistics do not tell the difference apart
        reason = md5Text + " (" + reason + ")";
        return Verdict::Md5;
    }
    return v;
}

void applyThresholds(const DumpIndex& a, const DumpIndex& b, const CompareThresholds& t, RunComparison& c) {
    c.thresholds = t;
    c.precision = t.precision != DType::Unknown ? t.precision : runPrecision(a, b, c.alignment);
    c.diverged = 0;
    c.counts.fill(0);
    c.firstDivergence = c.firstDifference = c.firstNonFinite = -1;
    c.orderEvidence.clear();
    for (std::size_t r = 0; r < c.rows.size(); ++r) {
        TensorComparison& row = c.rows[r];
        const TensorPair& p = c.alignment.tensors[r];
        const TensorRecord &ta = a.tensors[p.a], &tb = b.tensors[p.b];
        const std::string_view ma = c.md5A.empty() ? std::string_view() : std::string_view(c.md5A[p.a]);
        const std::string_view mb = c.md5B.empty() ? std::string_view() : std::string_view(c.md5B[p.b]);
        row.verdict =
            judgeTensor(row.metrics, a.stats(ta), b.stats(tb), dtypeOf(ta), dtypeOf(tb), c.precision, t, row.note,
                        row.reason, ma, mb, numElements(logicalShape(a, ta)), numElements(logicalShape(b, tb)));
        row.diverged = isDivergence(row.verdict);
        c.diverged += row.diverged;
        ++c.counts[std::size_t(row.verdict)];
    }
    FirstFinder first(a, c);
    c.firstDivergence = first.find([](const TensorComparison& r) { return r.diverged; }, &c.orderEvidence);
    c.firstDifference = first.find(
        [](const TensorComparison& r) { return r.verdict != Verdict::Identical && r.verdict != Verdict::Unknown; },
        nullptr);
    c.firstNonFinite = first.find([](const TensorComparison& r) { return r.verdict == Verdict::NonFinite; }, nullptr);
    c.firstArgument = firstArgumentDifference(a, c);
    c.story = storyOf(a, b, c);
}

RunComparison compareRuns(const DumpIndex& a, const DumpIndex& b, const CompareOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    RunComparison res;
    res.thresholds = options.thresholds;
    res.alignment = alignRuns(a, b, options.pins, options.iterations);
    res.rows.resize(res.alignment.tensors.size());
    {
        // One parse of each dump.json for both its checksums and its arguments. The runs one after
        // the other: a parsed 100k-entry dump.json is ~120 MB, and two at once raised the peak RSS
        // by 60 % (docs/PERFORMANCE.md).
        MsprobeSidecar sidecars[2] = {readMsprobeSidecar(a, res.warnings), readMsprobeSidecar(b, res.warnings)};
        res.argumentDiffs = compareArguments(a, b, res.alignment, sidecars[0], sidecars[1]);
        res.md5A = std::move(sidecars[0].md5);
        res.md5B = std::move(sidecars[1].md5);
    }
    Worker w{a, b, options};
    std::unique_ptr<tbb::global_control> limit;
    if (options.threads)
        limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, options.threads);
    std::atomic<bool> cancelled{options.stop.stop_requested()};
    std::atomic<std::uint64_t> done{0};
    std::mutex progressMutex;
    if (!cancelled)
        parallelFor(tbb::blocked_range<std::size_t>(0, res.rows.size(), 64),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                        if (options.stop.stop_requested()) {
                            cancelled = true;
                            return;
                        }
                        for (std::size_t i = r.begin(); i != r.end(); ++i)
                            w.compare(res.alignment.tensors[i], res.rows[i]);
                        const std::uint64_t d = done += r.size();
                        if (options.progress) {
                            std::lock_guard lock(progressMutex);
                            options.progress(d, res.rows.size());
                        }
                    });
    res.cancelled = cancelled;
    if (res.cancelled) res.rows.assign(res.rows.size(), TensorComparison{});  // no half-compared rows
    res.bytesCompared = res.cancelled ? 0 : w.bytes.load();
    if (!res.cancelled)
        for (const TensorComparison& row : res.rows) (row.metrics.fromData ? res.fromData : res.fromStats) += 1;
    if (!res.cancelled) applyThresholds(a, b, options.thresholds, res);
    res.warnings.insert(res.warnings.begin(), res.alignment.warnings.begin(), res.alignment.warnings.end());
    // What the indexes could not read: a comparison that silently skipped it would read as agreement.
    for (const auto& [run, idx] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
        std::size_t n = 0;
        const IndexWarning* first = nullptr;
        for (const IndexWarning& w : idx->warnings)
            if (w.severity == WarningSeverity::Unreadable && n++ == 0) first = &w;
        if (first)
            res.warnings.push_back("run " + std::string(run) + ": " + std::to_string(n) +
                                   " file(s) could not be read, not compared (first: " + first->path + ": " +
                                   first->reason + ")");
    }
    if (!res.alignment.onlyOpsA.empty() || !res.alignment.onlyOpsB.empty())
        res.warnings.push_back(std::to_string(res.alignment.onlyOpsA.size()) + " op(s) only in run A, " +
                               std::to_string(res.alignment.onlyOpsB.size()) + " only in run B");
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

}  // namespace dl

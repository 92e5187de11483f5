// The analysis' one pass over all tensors (classifyAll): each op's state, the counts, the near-limit
// candidates, and the replays that prove a carried 65504 saturated. Apart from the verdict steps
// because it is the only part that runs over every tensor, on all cores.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <string_view>

#include "core/analysis/name_memo.h"
#include "core/analysis/op_replay.h"
#include "core/analysis/overflow_steps.h"
#include "core/analysis/tensor_anomaly.h"
#include "core/util/parallel_for.h"

namespace dl::overflow_detail {

namespace {

// An op fed a value at 65504 whose output holds 65504 either copied it or overflowed again
// (65504 + 30 saturates). Stats cannot tell; a replay on the dumped inputs can: a true result
// of 65520 or more is an fp16 overflow. Bounded: the first few suspects only.
void proveCarriedSaturation(AnalysisContext& ctx, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& suspects,
                            AnalysisResult& res) {
    constexpr std::size_t kMaxReplays = 16;
    std::size_t tried = 0;
    std::uint32_t lastOp = kNoIndex;
    for (const auto& [op, tensor] : suspects) {
        if (op == lastOp || tried >= kMaxReplays) continue;
        const OpRecord& o = ctx.index.ops[op];
        if (replayKernelName(ctx.index.strings.view(o.type)).empty()) continue;
        bool data = true;
        for (std::uint32_t k = 0; k < o.tensorCount; ++k) {
            const TensorRecord& t = ctx.index.tensors[o.firstTensor + k];
            if (t.io == Io::Input && !(t.flags & HasData)) data = false;
        }
        if (!data) continue;
        lastOp = op;
        ++tried;
        ReplayOptions ro;
        ro.saturatingFp16 = true;
        const ReplayResult r = replayFromIndex(ctx.index, op, tensor, ro);
        if (!r.available || r.results.size() < 3 || r.results[2].maxAbsUnrounded < 65520.0) continue;
        OpFindings& st = ctx.ops[op];
        if (!st.anomalous()) ++res.anomalousOps;
        ++res.anomalousTensors;
        // Counted as near the limit while it looked carried; proven saturated, it is not.
        if (const auto it = std::lower_bound(res.nearLimitTensors.begin(), res.nearLimitTensors.end(), tensor);
            it != res.nearLimitTensors.end() && *it == tensor) {
            res.nearLimitTensors.erase(it);
            --res.nearLimitTotal;
            std::erase_if(res.nearLimit, [&, tensor = tensor](const NearLimitEntry& e) { return e.tensor == tensor; });
        }
        st.outputBad = true;
        if (st.kind < AnomalyKind::Saturated) {
            st.kind = AnomalyKind::Saturated;
            st.badTensor = tensor;
        }
        res.evidence.push_back(ctx.index.strings.str(o.name) + ": a value at 65504 went in and the fp32 replay gives " +
                               std::to_string(r.results[2].maxAbsUnrounded) +
                               ", so its 65504 is a saturated overflow, "
                               "not a copied value");
    }
}

// What one block of ops found, apart from the op states (written in place): the blocks are merged
// in op order, so counts, lists and warnings are those of one pass in order.
struct ClassifyPart {
    std::uint64_t examined = 0, readable = 0, anomalousTensors = 0, anomalousOps = 0;
    std::vector<NearLimitEntry> nearLimit;                          // in tensor order
    std::vector<std::pair<std::uint32_t, std::uint32_t>> suspects;  // (op, output) at 65504 fed by 65504
    std::vector<std::string> warnings;
};

// Ops [first, last): their states into ctx.ops, the rest into `part`.
void classifyOps(AnalysisContext& ctx, const AnalysisOptions& opt, SharedNameFlag& castType, std::uint32_t first,
                 std::uint32_t last, ClassifyPart& part) {
    const DumpIndex& idx = ctx.index;
    const auto isCastType = [](std::string_view type) { return replayKernelName(type) == "Cast"; };
    std::vector<TensorAnomaly> anomalies;
    for (std::uint32_t i = first; i < last; ++i) {
        const OpRecord& o = idx.ops[i];
        OpFindings& st = ctx.ops[i];
        if (o.firstTensor + std::uint64_t(o.tensorCount) > idx.tensors.size()) {
            part.warnings.push_back("op " + idx.strings.str(o.name) + " points past the tensor table; skipped");
            continue;
        }
        const bool isCast = castType.get(o.type, isCastType);
        bool castsToFp16 = false;
        for (std::uint32_t k = 0; k < o.tensorCount && isCast; ++k) {
            const TensorRecord& t = idx.tensors[o.firstTensor + k];
            castsToFp16 |= t.io == Io::Output && isFp16Like(t);
        }
        // A single value at exactly 65504 is an overflow only where the op produced it: not when an
        // input already held it (a copied legitimate value), nor in ops that only move data.
        anomalies.clear();
        bool inputAtLimit = false;
        for (std::uint32_t k = 0; k < o.tensorCount; ++k) {
            const TensorRecord& t = idx.tensors[o.firstTensor + k];
            anomalies.push_back(classifyTensor(idx, t));
            const TensorAnomaly& a = anomalies.back();
            if (t.io == Io::Input && ((a.bad() && !a.weak) || a.fp16MaxShare >= 1.0)) inputAtLimit = true;
        }
        for (std::uint32_t k = 0; k < o.tensorCount; ++k) {
            const std::uint32_t ti = o.firstTensor + k;
            const TensorRecord& t = idx.tensors[ti];
            const TensorAnomaly& a = anomalies[k];
            ++part.examined;
            // The known bits without unpacking the figures again (classifyTensor did once).
            if (!(t.flags & ReadError) &&
                ((t.flags & (HasData | HasCsvStats)) ||
                 (t.packedStats.wide ? idx.wideStats[t.packedStats.count].known : t.packedStats.known) != 0))
                ++part.readable;
            if (t.io == Io::Input) st.inputsDumped = true;
            const bool carried = a.weak && (t.io == Io::Input || inputAtLimit || st.comm != CommKind::None);
            if (carried && t.io == Io::Output && inputAtLimit && st.comm == CommKind::None)
                part.suspects.push_back({i, ti});
            if (a.bad() && !carried) {
                ++part.anomalousTensors;
                if (t.io == Io::Input) {
                    st.inputBad = true;
                    if (a.kind > st.inputKind) {
                        st.inputKind = a.kind;
                        st.badInput = ti;
                    }
                } else {
                    st.outputBad = true;
                    if (a.kind > st.kind) {
                        st.kind = a.kind;
                        st.badTensor = ti;
                        st.weak = a.weak;
                    }
                }
                continue;
            }
            const bool cast = t.io == Io::Input && castsToFp16 && !isFp16Like(t);
            if (a.fp16MaxShare >= opt.nearLimitThreshold && (isFp16Like(t) || cast))
                part.nearLimit.push_back({i, ti, a.maxAbs, a.fp16MaxShare, cast});
        }
        if (o.overflow >= 0 && std::size_t(o.overflow) < idx.overflows.size() &&
            opdebugReportsOverflow(idx.overflows[std::size_t(o.overflow)])) {
            st.opdebug = true;
            if (st.kind == AnomalyKind::None) st.kind = AnomalyKind::Opdebug;
        }
        if (st.anomalous()) ++part.anomalousOps;
    }
}
}  // namespace

// One pass over all tensors: op states, counts and near-limit candidates. False when stopped.
// Blocks of kWorkStride ops run on all cores; the stop is looked at before each block and the
// progress reported after it (one call at a time, none once stopped).
bool classifyAll(AnalysisContext& ctx, const AnalysisOptions& opt, AnalysisResult& res) {
    const DumpIndex& idx = ctx.index;
    ctx.ops.assign(idx.ops.size(), OpFindings{});
    for (const CommOp& c : ctx.comm) ctx.ops[c.op].comm = c.kind;
    SharedNameFlag castType(idx.strings);  // replayKernelName builds a string: once per type
    const std::uint32_t n = std::uint32_t(idx.ops.size());
    const std::uint32_t blocks = std::uint32_t((std::uint64_t(n) + kWorkStride - 1) / kWorkStride);
    std::vector<ClassifyPart> parts(blocks);
    std::mutex progressLock;
    std::uint64_t done = 0;
    std::atomic<bool> stopped{false};
    parallelFor(std::uint32_t(0), blocks, [&](std::uint32_t b) {
        if (stopped.load(std::memory_order_relaxed)) return;
        if (b && opt.stop.stop_requested()) {
            stopped = true;
            return;
        }
        const std::uint32_t first = b * std::uint32_t(kWorkStride);
        const std::uint32_t last = std::uint32_t(std::min<std::uint64_t>(n, first + kWorkStride));
        classifyOps(ctx, opt, castType, first, last, parts[b]);
        if (!opt.progress) return;
        const std::lock_guard lock(progressLock);
        done += last - first;
        if (done < n && !opt.stop.stop_requested()) opt.progress(done, n);
    });
    if (stopped) return false;
    for (ClassifyPart& p : parts) {
        res.tensorsExamined += p.examined;
        res.readableTensors += p.readable;
        res.anomalousTensors += p.anomalousTensors;
        res.anomalousOps += p.anomalousOps;
        for (const NearLimitEntry& e : p.nearLimit) res.nearLimitTensors.push_back(e.tensor);
        res.nearLimitTotal += p.nearLimit.size();
        res.nearLimit.insert(res.nearLimit.end(), p.nearLimit.begin(), p.nearLimit.end());
        for (std::string& w : p.warnings) res.warnings.push_back(std::move(w));
    }
    std::vector<std::pair<std::uint32_t, std::uint32_t>> suspects;
    for (const ClassifyPart& p : parts) suspects.insert(suspects.end(), p.suspects.begin(), p.suspects.end());
    parts = {};
    if (opt.progress) opt.progress(idx.ops.size(), idx.ops.size());
    if (opt.stop.stop_requested()) return false;
    proveCarriedSaturation(ctx, suspects, res);
    const std::size_t cap = std::min(opt.nearLimitMax, res.nearLimit.size());
    std::partial_sort(res.nearLimit.begin(), res.nearLimit.begin() + long(cap), res.nearLimit.end(),
                      [](const NearLimitEntry& a, const NearLimitEntry& b) { return a.fp16MaxShare > b.fp16MaxShare; });
    res.nearLimit.resize(cap);
    return true;
}

}  // namespace dl::overflow_detail

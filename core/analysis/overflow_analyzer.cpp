#include "core/analysis/overflow_analyzer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string_view>

#include "core/analysis/analysis_context.h"
#include "core/analysis/causal_order.h"
#include "core/analysis/chain_builder.h"
#include "core/analysis/name_memo.h"
#include "core/analysis/op_replay.h"
#include "core/analysis/rank_dataflow.h"
#include "core/analysis/separate_runs.h"
#include "core/analysis/stage_map.h"
#include "core/analysis/tensor_anomaly.h"
#include "core/index/tensor_location.h"
#include "core/util/half.h"
#include "core/util/parallel_for.h"

namespace dl {

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

// The whole file's bytes, or empty when it cannot be read (then nothing is matched).
std::string fileBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return in ? std::string(std::istreambuf_iterator<char>(in), {}) : std::string();
}

// MindSpore's CPU backend runs some fp16 ops in float32 between Casts it inserts itself, and its
// dump labels the float32 op's output with the graph's fp16 type: the file holds the first half of
// the float32 buffer read as fp16 (seen in 2.0.0, 2.7.0 and 2.10.0). The inserted Cast's input is
// written from the same buffer the same way, so its replay cannot reproduce the inf the Cast
// output shows. The op that made the value is the one, earlier in the same rank and iteration,
// whose dumped output has exactly the Cast input's bytes.
std::optional<std::uint32_t> castValueMaker(const AnalysisContext& ctx, std::uint32_t castOp) {
    const DumpIndex& idx = ctx.index;
    const OpRecord& c = idx.ops[castOp];
    const TensorRecord* in = nullptr;
    for (std::uint32_t k = 0; k < c.tensorCount; ++k) {
        const TensorRecord& t = idx.tensors[c.firstTensor + k];
        if (t.io == Io::Input && t.slot == 0 && (t.flags & HasData)) in = &t;
    }
    std::string why;
    if (!in || !tensorDataReachable(idx, *in, why)) return std::nullopt;
    const std::string want = fileBytes(tensorDataPath(idx, *in));
    if (want.empty()) return std::nullopt;
    const OverflowPoint at = ctx.point(castOp);
    // Producers run shortly before their consumer: a bounded look back keeps this cheap.
    for (std::uint32_t j = castOp, looked = 0; j-- > 0 && looked < 256; ++looked) {
        const OverflowPoint pj = ctx.point(j);
        if (pj.rank != at.rank || pj.iteration != at.iteration) continue;
        const OpRecord& o = idx.ops[j];
        for (std::uint32_t k = 0; k < o.tensorCount; ++k) {
            const TensorRecord& t = idx.tensors[o.firstTensor + k];
            if (t.io != Io::Output || !(t.flags & HasData) || !tensorDataReachable(idx, t, why)) continue;
            if (fileBytes(tensorDataPath(idx, t)) == want) return j;
        }
    }
    return std::nullopt;
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

void buildRanges(AnalysisContext& ctx) {
    const auto& ops = ctx.index.ops;
    for (std::uint32_t i = 0; i < ops.size();) {
        std::uint32_t j = i;
        while (j < ops.size() && ops[j].rank == ops[i].rank && ops[j].iteration == ops[i].iteration) ++j;
        auto [it, fresh] = ctx.range.try_emplace({ops[i].rank, ops[i].iteration}, i, j);
        if (!fresh) it->second = {std::min(it->second.first, i), std::max(it->second.second, j)};  // unsorted index
        i = j;
    }
}

void iterationStatuses(const AnalysisContext& ctx, AnalysisResult& res) {
    std::map<std::uint32_t, IterationStatus> by;
    for (const auto& [key, r] : ctx.range) {
        IterationStatus& s = by[key.second];
        s.iteration = key.second;
        bool rankBad = false;
        for (std::uint32_t i = r.first; i < r.second; ++i) {
            if (!ctx.ops[i].anomalous()) continue;
            ++s.anomalousOps;
            rankBad = true;
        }
        if (rankBad) {
            s.overflow = true;
            s.ranks.push_back(key.first);
        }
    }
    for (auto& [it, s] : by) res.iterations.push_back(s);
}

// Persistence after the first bad iteration. In an overflow-only dump a missing iteration
// number between dumped ones was clean.
void judgePersistence(const DumpIndex& idx, AnalysisResult& res) {
    if (!res.firstBadIteration) return;
    // The indexer writes "tensor, overflow only" (op_debug_mode 1-3 dump only overflowing ops).
    const bool overflowOnly = idx.meta.dumpMode.find("overflow") != std::string::npos ||
        (idx.meta.opDebugMode > 0 && idx.meta.opDebugMode != 4);
    std::vector<std::pair<std::uint32_t, bool>> later;
    std::uint32_t prev = *res.firstBadIteration;
    for (const IterationStatus& s : res.iterations) {
        if (s.iteration <= *res.firstBadIteration) continue;
        if (overflowOnly)
            for (std::uint32_t g = prev + 1; g < s.iteration; ++g) later.push_back({g, false});
        later.push_back({s.iteration, s.overflow});
        prev = s.iteration;
    }
    if (later.empty()) {
        res.persistence = Persistence::SingleIteration;
        return;
    }
    const auto firstClean = std::find_if(later.begin(), later.end(), [](auto p) { return !p.second; });
    if (firstClean == later.end())
        res.persistence = Persistence::Persistent;
    else if (std::none_of(firstClean, later.end(), [](auto p) { return p.second; }))
        res.persistence = Persistence::Transient;
    else
        res.persistence = Persistence::Intermittent;
}

// Origin rule: an output (or an Opdebug record) out of range while every input is in range.
// Receives never originate; a collective only when no member's input was bad.
bool isOriginCandidate(const AnalysisContext& ctx, std::uint32_t i, bool& blind) {
    const OpFindings& st = ctx.ops[i];
    blind = false;
    if (!st.anomalous() || st.inputBad || st.comm == CommKind::Receive) return false;
    if (isCollective(st.comm) && ctx.match.group[i] >= 0)
        for (std::uint32_t m : ctx.match.groups[std::size_t(ctx.match.group[i])].ops)
            if (ctx.ops[m].inputBad) return false;
    blind = !st.inputsDumped;
    return true;
}

std::uint32_t pickOrigin(const AnalysisContext& ctx, std::uint32_t iter, AnalysisResult& res) {
    std::vector<std::uint32_t> perRank;  // first candidate of each rank
    std::size_t candidates = 0;
    for (const auto& [key, r] : ctx.range) {
        if (key.second != iter) continue;
        bool seenBad = false;
        for (std::uint32_t i = r.first; i < r.second; ++i) {
            bool blind = false;
            if (isOriginCandidate(ctx, i, blind) && !(blind && seenBad)) {
                ++candidates;
                perRank.push_back(i);
                break;
            }
            seenBad |= ctx.ops[i].anomalous();
        }
    }
    std::uint32_t best = kNoIndex;
    OrderEvidence weakest = OrderEvidence::Causal;
    for (std::uint32_t c : perRank) {
        OrderEvidence ev;
        if (best == kNoIndex) {
            best = c;
            continue;
        }
        if (firstOf(ctx, c, best, ev)) best = c;
        weakest = std::max(weakest, ev);
    }
    if (best == kNoIndex) {
        // Nothing with clean inputs: the anomaly entered through data the dump does not hold.
        for (const auto& [key, r] : ctx.range) {
            if (key.second != iter) continue;
            for (std::uint32_t i = r.first; i < r.second; ++i) {
                if (!ctx.ops[i].anomalous()) continue;
                OrderEvidence ev;
                if (best == kNoIndex || firstOf(ctx, i, best, ev)) best = i;
                break;
            }
        }
        if (best != kNoIndex)
            res.warnings.push_back(
                "no op in iteration " + std::to_string(iter) +
                " has in-range inputs and an out-of-range "
                "output: the anomaly came from data not in the dump (an undumped rank, a Receive whose "
                "Send is missing, or weights from an earlier step); showing the earliest anomaly");
        return best;
    }
    res.evidence.push_back(std::to_string(perRank.size()) + " rank(s) hold an origin candidate in iteration " +
                           std::to_string(iter));
    if (perRank.size() > 1) {
        if (weakest == OrderEvidence::Causal)
            res.evidence.push_back("order across ranks decided by Send/Receive causality");
        else if (weakest == OrderEvidence::Clock)
            res.warnings.push_back(
                "order across ranks partly decided by timestamps corrected with the estimated clock "
                "offsets: no Send/Receive path links the candidates, evidence is thin");
        else
            res.warnings.push_back(
                "order across ranks decided by the pipeline schedule (forward from the first stage, "
                "backward from the last) without timestamps: evidence is thin");
    }
    if (ctx.ops[best].opdebug && !ctx.ops[best].outputBad)
        res.evidence.push_back("origin known from an Opdebug record only (no tensor shows the overflow)");
    bool blind = false;
    isOriginCandidate(ctx, best, blind);
    if (blind)
        res.warnings.push_back("the origin's inputs were not dumped: chosen as the first anomaly in execution order");
    (void)candidates;
    return best;
}

// The index's warnings travel with the verdict; with nothing readable there is no verdict.
void judgeReadability(const DumpIndex& idx, AnalysisResult& res) {
    std::set<std::string_view> unreadable;
    for (const IndexWarning& w : idx.warnings) {
        res.fileWarnings.push_back({w.path, w.reason});
        // Set where the warning was written: a note on content read in full is no lost file.
        const bool lost = !w.path.empty() && w.severity == WarningSeverity::Unreadable;
        res.fileWarningUnreadable.push_back(lost);
        if (lost) unreadable.insert(w.path);
    }
    res.unreadableFiles = unreadable.size();
    const bool opdebugRecords = !idx.overflows.empty();
    res.noData = res.readableTensors == 0 && !opdebugRecords;
}

// Times on the reference clock are evidence only where a message links both ranks' clocks to it.
void describeAlignedTimes(AnalysisResult& res) {
    for (const ChainStep& s : res.chain) {
        if (s.causedBy < 0 || !res.chainOrderedByClock) continue;
        const ChainStep& p = res.chain[std::size_t(s.causedBy)];
        if (s.clockAligned && p.clockAligned && s.alignedUs < p.alignedUs) {
            res.warnings.push_back("the clock-aligned time of rank " + std::to_string(s.at.rank) + "'s step is " +
                                   std::to_string(p.alignedUs - s.alignedUs) +
                                   " us before the step it came from: "
                                   "the clock offset estimate is uncertain");
            break;
        }
    }
}

void describeChain(AnalysisResult& res) {
    std::map<ChainVia, std::size_t> vias;
    std::vector<std::string> clockOnly;
    for (const ChainStep& s : res.chain) {
        ++vias[s.via];
        if (s.via == ChainVia::ClockOnly)
            clockOnly.push_back("rank " + std::to_string(s.at.rank) + " (iteration " + std::to_string(s.at.iteration) +
                                ")");
    }
    if (res.chain.size() > 1) {
        std::string e = "chain in causal order (each step after the step it came from):";
        for (const auto& [via, n] : vias)
            if (via != ChainVia::None) e += " " + std::to_string(n) + " " + chainViaName(via) + ";";
        e += res.chainOrderedByFlow ? " steps of ranks no message links ordered by the pipeline's data flow (stage map)"
            : res.chainOrderedByClock ? " steps not linked by a message ordered by clock-aligned time"
                                      : " no timestamps: steps not linked by a message ordered by execution order";
        res.evidence.push_back(e);
    }
    if (!clockOnly.empty()) {
        std::string which;
        for (const std::string& c : clockOnly) which += " " + c + ",";
        which.pop_back();
        const std::string e = "no Send/Receive, collective or weight-update link explains the anomaly of" + which + ";";
        if (res.chainOrderedByFlow) {
            // No message relates these ranks' clocks, so time across them is no evidence; the
            // stage map says where the damage goes: the forward from the stage whose weights went
            // bad up to the last stage, then the backward down to stage 0.
            res.evidence.push_back(e + " placed by the pipeline's data flow from the stage map (" + res.stages.source +
                                   "); raw clocks only break ties inside one stage");
            res.warnings.push_back("the chain's order of" + which + " is inferred from the pipeline stages (" +
                                   res.stages.source +
                                   "), not observed: no Send/Receive or collective in the dump links "
                                   "these ranks, and their raw clocks are not comparable across machines");
        } else {
            res.evidence.push_back(e +
                                   (!res.chainOrderedByClock ? " placed by execution order only"
                                        : res.clocksAligned  ? " placed by clock-aligned time only"
                                                             : " placed by raw timestamps only"));
            // Nothing in the dump relates the ranks' clocks: unsynchronised clocks may put an effect
            // before its cause, so this part of the order is not evidence.
            if (res.chainOrderedByClock && !res.clocksAligned)
                res.warnings.push_back(
                    "the chain's order of" + which +
                    " comes from raw timestamps of unsynchronised rank clocks (no Send/Receive or collective "
                    "in the dump to align them): it may not be the order the damage travelled");
        }
    }
    describeAlignedTimes(res);
}

void describeStages(const StageMap& m, AnalysisResult& res) {
    if (m.stageCount == 0) return;
    std::string s = "pipeline stages from " + m.source + ": " + std::to_string(m.stageCount) + " stage(s)" +
        (m.confident ? "" : " (a guess)");
    if (!m.tpGroups.empty())
        s += "; " + std::to_string(m.tpGroups.size()) + " tensor-parallel group(s) of " +
            std::to_string(m.tpGroups.front().size()) + " (collectives within a stage)";
    if (m.replicas.size() > 1) s += "; " + std::to_string(m.replicas.size()) + " data-parallel pipelines";
    res.evidence.push_back(s);
}

}  // namespace

AnalysisResult analyze(const DumpIndex& index, const AnalysisOptions& opt) {
    const auto cancelled = [&] {
        AnalysisResult r;
        r.cancelled = true;
        r.nearLimitThreshold = opt.nearLimitThreshold;
        return r;
    };
    AnalysisResult res;
    res.nearLimitThreshold = opt.nearLimitThreshold;
    AnalysisContext ctx(index);
    ctx.comm = findCommOps(index);
    // The tensors' classification and the stage map with the Send/Receive matching need the comm
    // ops but not each other: both at once (each also runs on all cores inside). The stage map's
    // warnings follow the classification's, as when one ran after the other.
    bool classified = false;
    std::vector<std::string> stageWarnings;
    parallelFor(0, 2, [&](int task) {
        if (task == 0) {
            classified = classifyAll(ctx, opt, res);
            if (classified) buildRanges(ctx);
            return;
        }
        ctx.stages = inferStageMap(index, ctx.comm, opt.stages, stageWarnings);
        if (opt.stop.stop_requested()) return;  // a stop does not wait for the whole match
        ctx.match = matchCommunication(index, ctx.comm, ctx.stages);
    });
    if (!classified) return cancelled();
    res.separateRuns = separateRuns(index);
    if (!res.separateRuns.empty()) res.warnings.push_back(separateRunsWarning(res.separateRuns));
    for (std::string& w : stageWarnings) res.warnings.push_back(std::move(w));
    describeParallelism(index, ctx.match, ctx.stages);
    res.stages = ctx.stages;
    describeStages(ctx.stages, res);
    if (std::string order = orderSourceEvidence(index.ranks); !order.empty()) res.evidence.push_back(std::move(order));
    res.commPairs = ctx.match.pairs.size();
    res.unmatchedReceives = ctx.match.unmatchedReceives.size();
    res.ambiguousPairs = ctx.match.ambiguous;
    res.pairsStatisticsDiffer = ctx.match.statisticsDiffer;
    res.pairs.reserve(ctx.match.pairs.size());
    for (const CommPair& p : ctx.match.pairs) {
        const char* ev = pairEvidenceName(p.evidence);
        ++res.pairsByEvidence[ev];
        res.pairs.push_back({p.send, p.recv, ev});
    }
    if (ctx.match.ambiguous)
        res.warnings.push_back(
            std::to_string(ctx.match.ambiguous) +
            " Receive(s) could have been fed by more than one Send "
            "(neither statistics, channel order nor the stage map decide): each paired with the first "
            "possible Send and marked ambiguous (counts.ambiguous_pairs)");
    if (ctx.match.statisticsDiffer)
        res.warnings.push_back(
            std::to_string(ctx.match.statisticsDiffer) +
            " Send/Receive pair(s) tied by channel order carry "
            "different statistics at their two ends (counts.pairs_statistics_differ): a row is missing "
            "or misread, or the pairing is off there");
    if (opt.stop.stop_requested()) return cancelled();
    estimateClockOffsets(ctx, res.evidence);
    res.clockOffsetUs = ctx.clockOffsetUs;
    res.clockUncertaintyUs = ctx.clockUncertaintyUs;
    res.clocksAligned = ctx.clocksAligned;
    iterationStatuses(ctx, res);
    for (const IterationStatus& s : res.iterations)
        if (s.overflow && !res.firstBadIteration) res.firstBadIteration = s.iteration;
    judgePersistence(index, res);

    std::optional<std::uint32_t> target = res.firstBadIteration;
    if (opt.iteration) {
        target = *opt.iteration;
        auto it =
            std::find_if(res.iterations.begin(), res.iterations.end(), [&](auto& s) { return s.iteration == *target; });
        if (it == res.iterations.end())
            res.warnings.push_back("iteration " + std::to_string(*target) + " is not in the dump");
        else if (!it->overflow)
            target.reset();
    }
    judgeReadability(index, res);
    if (!target) {
        if (res.noData)
            res.evidence.push_back("nothing readable: " + std::to_string(res.tensorsExamined) +
                                   " tensor(s) listed, none with "
                                   "statistics or data, no Opdebug record; " +
                                   std::to_string(res.unreadableFiles) + " file(s) could not be read");
        else
            res.evidence.push_back(std::to_string(res.readableTensors) +
                                   " readable tensors checked: no Inf/NaN, no op produced a "
                                   "value pinned at +/-65504, no Opdebug overflow record");
        return res;
    }
    // Set here (returned above otherwise).
    const std::uint32_t analysed = target.value_or(0);
    res.evidence.push_back("first overflowing iteration: " + std::to_string(*res.firstBadIteration) +
                           (opt.iteration ? "; analysing iteration " + std::to_string(analysed) + " as asked" : ""));
    const std::uint32_t origin = pickOrigin(ctx, analysed, res);
    if (origin == kNoIndex) return res;
    res.overflow = true;
    OverflowPoint p = ctx.point(origin);
    p.peerRanks = tensorParallelPeers(ctx, origin);
    res.firstOverflow = p;
    res.chainOrderedByClock = chainOrderedByClock(ctx);
    res.chainOrderedByFlow = chainOrderedByFlow(ctx);
    res.chain = buildChain(ctx, p, res.chainOrderedByClock);
    {
        std::map<std::uint32_t, const char*> evidenceOfRecv;
        for (const CommPair& cp : ctx.match.pairs) evidenceOfRecv[cp.recv] = pairEvidenceName(cp.evidence);
        for (ChainStep& s : res.chain)
            if (s.via == ChainVia::SendReceive)
                if (auto e = evidenceOfRecv.find(s.at.op); e != evidenceOfRecv.end()) s.pairEvidence = e->second;
    }
    if (opt.readGraphIr) {
        std::optional<RankDataflow> own;
        explainByDataflow(index, opt.dataflow ? *opt.dataflow : own.emplace(index), res);
    }
    describeChain(res);
    if (opt.stop.stop_requested()) return cancelled();
    if (opt.replay) {
        ReplayOptions ro;
        ro.saturatingFp16 = p.kind == AnomalyKind::Saturated;
        res.replay = replayFromIndex(index, origin, p.tensor, ro);
    }
    const bool confirmed = res.replay && res.replay->available && res.replay->reproducesOverflow;
    const std::string originType = index.strings.str(index.ops[origin].type);
    if (replayKernelName(originType) == "Cast" && res.replay && res.replay->available) {
        // Two ways a Cast is the first inf without being the cause: its dumped input cannot have made
        // the inf (MindSpore CPU's mislabelled float32 buffer), or its wider input was already past
        // 65504 (the Cast only rounds). Either way the op to change is the one that made the input.
        double inMax = 0;
        const OpRecord& c = index.ops[origin];
        for (std::uint32_t k = 0; k < c.tensorCount; ++k) {
            const TensorRecord& t = index.tensors[c.firstTensor + k];
            if (t.io == Io::Input) {
                const TensorAnomaly a = classifyTensor(index, t);
                if (std::isfinite(a.maxAbs)) inMax = std::max(inMax, a.maxAbs);
            }
        }
        const bool inputPast = inMax > kFp16Max;
        if (!confirmed || inputPast) {
            res.valueMadeBy = castValueMaker(ctx, origin);
            if (res.valueMadeBy) {
                const OpRecord& m = index.ops[*res.valueMadeBy];
                const std::string maker = index.strings.str(m.type) + " " + index.strings.str(m.name);
                res.evidence.push_back(
                    inputPast ? "the Cast's input, the dumped output of " + maker +
                            ", is already past 65504 (max |x| " + std::to_string(inMax) +
                            "): the Cast only rounds it to fp16, so " + maker + " made the value"
                              : "the Cast's dumped input is byte for byte the dumped output of " + maker +
                            ", and replaying the Cast on it gives no inf: that file is not the value the Cast read "
                            "(MindSpore CPU ran " +
                            index.strings.str(m.type) +
                            " in float32 between Casts it inserted and wrote its output labelled fp16), so " + maker +
                            " made the value");
                res.replay->recommendation = "keep the output of " + maker +
                    " out of fp16: it is computed in a wider type "
                    "and only the Cast after it rounds it to fp16, where it overflows; run " +
                    index.strings.str(m.type) +
                    " and its consumers in float32 or bfloat16, or "
                    "bound its input (the Cast itself is not the cause)";
                res.replay->recommendationFromReplay = false;
            } else if (inputPast) {
                res.replay->recommendation = "the Cast's input is already past 65504 (max |x| " +
                    std::to_string(inMax) +
                    ") before it is rounded to fp16: change the op that produced that input "
                    "(not found among the dumped outputs), not the Cast";
                res.replay->recommendationFromReplay = false;
            }
        }
    }
    if (ctx.ops[origin].weak && !ctx.ops[origin].opdebug)
        res.warnings.push_back(
            std::string("the origin shows a single value at exactly 65504, which can be a legitimate "
                        "value; ") +
            (confirmed ? "the fp16 replay confirms the overflow" : "nothing else confirms the overflow"));
    return res;
}

}  // namespace dl

// The analysis' verdict steps: each iteration's status, the persistence after the first bad one,
// the origin of the analysed iteration, what the index's warnings say of readability, and the op
// that made the value a Cast origin only rounded.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string_view>

#include "core/analysis/causal_order.h"
#include "core/analysis/overflow_steps.h"
#include "core/index/tensor_location.h"

namespace dl::overflow_detail {

namespace {

// The whole file's bytes, or empty when it cannot be read (then nothing is matched).
std::string fileBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return in ? std::string(std::istreambuf_iterator<char>(in), {}) : std::string();
}
}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace dl::overflow_detail

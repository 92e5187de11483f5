#include "core/analysis/tensor_anomaly.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/util/half.h"

namespace dl {

const char* anomalyKindName(AnomalyKind k) {
    switch (k) {
        case AnomalyKind::None:
            return "none";
        case AnomalyKind::Saturated:
            return "saturated";
        case AnomalyKind::Nan:
            return "nan";
        case AnomalyKind::Inf:
            return "inf";
        case AnomalyKind::Opdebug:
            return "opdebug";
    }
    return "none";
}

const char* chainRoleName(ChainRole r) {
    switch (r) {
        case ChainRole::Origin:
            return "origin";
        case ChainRole::Propagated:
            return "propagated";
        case ChainRole::Send:
            return "send";
        case ChainRole::Receive:
            return "receive";
    }
    return "propagated";
}

const char* chainViaName(ChainVia v) {
    switch (v) {
        case ChainVia::None:
            return "origin";
        case ChainVia::SameRank:
            return "same_rank";
        case ChainVia::SendReceive:
            return "send_receive";
        case ChainVia::Collective:
            return "collective";
        case ChainVia::WeightUpdate:
            return "weight_update";
        case ChainVia::ClockOnly:
            return "clock_only";
        case ChainVia::Dataflow:
            return "dataflow";
    }
    return "clock_only";
}

const char* persistenceName(Persistence p) {
    switch (p) {
        case Persistence::Unknown:
            return "unknown";
        case Persistence::SingleIteration:
            return "single_iteration";
        case Persistence::Persistent:
            return "persistent";
        case Persistence::Transient:
            return "transient";
        case Persistence::Intermittent:
            return "intermittent";
    }
    return "unknown";
}

bool isFp16Like(const TensorRecord& t) { return t.dtype == DType::Float16 || t.origDtype == DType::Float16; }

std::string tensorLabel(const TensorRecord& t) {
    return (t.io == Io::Input ? "input." : "output.") + std::to_string(t.slot);
}

std::string tensorLabel(const DumpIndex& index, const TensorRecord& t) { return index.tensorLabel(t); }

namespace {

// The figures the classification reads, taken from the record as DumpIndex::stats(t) would give
// them but without building a whole TensorStats: that unpack, out of line and mostly unused here,
// was a fifth of the analysis at 10M tensors.
struct Figures {
    double min, max, maxAbs;
    std::uint64_t count, nanCount, posInfCount, negInfCount, satCount;
    std::uint32_t known;
    bool has(std::uint32_t bits) const { return (known & bits) == bits; }
    std::uint64_t infCount() const { return posInfCount + negInfCount; }
};

Figures figuresOf(const DumpIndex& index, const TensorRecord& t) {
    const PackedStats& p = t.packedStats;
    if (p.wide) {
        const TensorStats& s = index.wideStats[p.count];
        return {s.min, s.max, s.maxAbs, s.count, s.nanCount, s.posInfCount, s.negInfCount, s.satCount, s.known};
    }
    // PackedStats::unpack: maxAbs is derived, the kernel-only counts live in the tensor's side.
    Figures f{p.min,
              p.max,
              std::numeric_limits<double>::quiet_NaN(),
              p.count,
              p.nanCount,
              p.posInfCount,
              p.negInfCount,
              index.side(t).counts.satCount,
              p.known};
    if (p.known & stat::MaxAbs) f.maxAbs = std::max(-p.min, p.max);
    return f;
}

double finiteMaxAbs(const Figures& s) {
    if (s.has(stat::MaxAbs) && std::isfinite(s.maxAbs)) return s.maxAbs;
    double m = std::numeric_limits<double>::quiet_NaN();
    // statistic.csv rows carry only min/max; both are over finite values after normalisation.
    if (s.has(stat::Max) && std::isfinite(s.max)) m = std::fabs(s.max);
    if (s.has(stat::Min) && std::isfinite(s.min)) m = std::isnan(m) ? std::fabs(s.min) : std::max(m, std::fabs(s.min));
    return m;
}

// Inf/NaN from the counts; falls back to non-finite min/max (writers that did not normalise)
// and to the histogram's special bins.
void classifyNonFinite(const DumpIndex& index, const TensorRecord& t, const Figures& s, TensorAnomaly& a) {
    std::uint64_t inf = 0, nan = 0;
    bool counted = false;
    if (s.known & (stat::PosInfCount | stat::NegInfCount)) {
        inf = s.infCount();
        counted = true;
    }
    if (s.known & stat::NanCount) {
        nan = s.nanCount;
        counted = true;
    }
    if (!counted) {
        if ((s.has(stat::Max) && std::isinf(s.max)) || (s.has(stat::Min) && std::isinf(s.min))) inf = 1;
        // A known Max/Min that is NaN means the writer propagated a NaN into it.
        if ((s.has(stat::Max) && std::isnan(s.max)) || (s.has(stat::Min) && std::isnan(s.min))) nan = 1;
        if ((t.flags & HasHistogram) && inf == 0 && nan == 0) {
            Log2Histogram h;
            if (index.histogram(t, h)) {
                inf = h.posInf + h.negInf;
                nan = h.nan;
            }
        }
    }
    if (inf > 0) {
        a.kind = AnomalyKind::Inf;
        a.count = inf + nan;
    } else if (nan > 0) {
        a.kind = AnomalyKind::Nan;
        a.count = nan;
    }
}

// Values of exactly +/-65504. With element counts this is a count; with min/max only, an fp16
// max of exactly 65504 is strong evidence because fp16 overflow in saturation mode lands there.
void classifySaturation(const DumpIndex& index, const TensorRecord& t, const Figures& s, TensorAnomaly& a) {
    if (!isFloating(t.dtype) && !isFloating(t.origDtype)) return;
    const bool atLimit = a.maxAbs == double(kFp16Max);
    if (s.has(stat::SatCount)) {
        // satCount counts |x| >= 65504; with maxAbs == 65504 they all sit exactly at the limit.
        // An fp16-typed tensor beyond 65504 cannot be real fp16 data either.
        const bool pinned = atLimit || (isFp16Like(t) && a.maxAbs > double(kFp16Max)) || std::isnan(a.maxAbs);
        if (s.satCount > 0 && pinned) {
            a.kind = AnomalyKind::Saturated;
            a.count = s.satCount;
            a.weak = s.satCount == 1 && s.count > 1;
        }
        return;
    }
    if (!atLimit) return;
    a.kind = AnomalyKind::Saturated;
    // Histogram bin 2^15 bounds how many values sit at the limit.
    Log2Histogram h;
    if ((t.flags & HasHistogram) && index.histogram(t, h)) {
        a.count = h.exp[Log2Histogram::binOf(15)];
        a.weak = a.count == 1 && s.count > 1;
    }
}

}  // namespace

TensorAnomaly classifyTensor(const DumpIndex& index, const TensorRecord& t) {
    TensorAnomaly a;
    const Figures s = figuresOf(index, t);
    a.maxAbs = finiteMaxAbs(s);
    if (std::isfinite(a.maxAbs)) a.fp16MaxShare = a.maxAbs / double(kFp16Max);
    if (t.dtype == DType::Bool) return a;
    classifyNonFinite(index, t, s, a);
    if (a.kind == AnomalyKind::None) classifySaturation(index, t, s, a);
    return a;
}

bool opdebugReportsOverflow(const OverflowRecord& r) {
    return r.aicoreStatus != 0 || r.dhaAtomicStatus != 0 || r.l2AtomicStatus != 0;
}

std::string describeOpdebug(const OverflowRecord& r) {
    struct Bit {
        std::uint64_t mask;
        const char* text;
    };
    static constexpr Bit kBits[] = {
        {0x8, "signed integer minimum negation overflow"},
        {0x10, "integer add/sub/mul/mac overflow"},
        {0x20, "floating-point overflow"},
        {0x80, "negative float converted to unsigned"},
        {0x100, "fp32->fp16 or int32->fp16 conversion overflow"},
        {0x400, "cube accumulation overflow"},
    };
    std::string out;
    auto add = [&out](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
    std::uint64_t rest = r.aicoreStatus;
    for (const Bit& b : kBits) {
        if (r.aicoreStatus & b.mask) {
            add(b.text);
            rest &= ~b.mask;
        }
    }
    char buf[64];
    if (rest) {
        std::snprintf(buf, sizeof buf, "AI Core status 0x%llx", static_cast<unsigned long long>(rest));
        add(buf);
    }
    if (r.dhaAtomicStatus) add("atomic add overflow (DHA)");
    if (r.l2AtomicStatus) add("atomic add overflow (L2)");
    return out;
}

}  // namespace dl

#include "core/analysis/analysis_context.h"

#include "core/analysis/tensor_anomaly.h"

namespace dl {

std::int64_t opTimeUs(const DumpIndex& index, std::uint32_t op) {
    const OpRecord& o = index.ops[op];
    if (o.startUs) return o.startUs;
    if (o.endUs) return o.endUs;
    if (o.overflow >= 0 && std::size_t(o.overflow) < index.overflows.size())
        return index.overflows[std::size_t(o.overflow)].timestampUs;
    return 0;
}

std::int64_t AnalysisContext::rawTime(std::uint32_t op) const { return opTimeUs(index, op); }

std::int64_t AnalysisContext::correctedTime(std::uint32_t op) const {
    const std::int64_t t = rawTime(op);
    auto it = clockOffsetUs.find(index.ops[op].rank);
    return t == 0 || it == clockOffsetUs.end() ? t : t - it->second;
}

bool AnalysisContext::carriesBad(std::uint32_t s) const {
    const std::int32_t p = match.partner[s];
    return ops[s].inputBad || ops[s].outputBad || (p >= 0 && ops[std::size_t(p)].outputBad);
}

OverflowPoint AnalysisContext::point(std::uint32_t op) const {
    OverflowPoint p;
    const OpRecord& o = index.ops[op];
    const OpFindings& st = ops[op];
    p.op = op;
    p.tensor = st.badTensor;
    p.kind = st.kind;
    p.rank = o.rank;
    p.iteration = o.iteration;
    p.stage = stages.stageOf(o.rank);
    p.timestampUs = st.badTensor != kNoIndex && index.tensors[st.badTensor].timestampUs
        ? index.tensors[st.badTensor].timestampUs
        : rawTime(op);
    auto it = clockOffsetUs.find(o.rank);
    p.correctedUs = p.timestampUs && it != clockOffsetUs.end() ? p.timestampUs - it->second : p.timestampUs;
    if (o.overflow >= 0 && std::size_t(o.overflow) < index.overflows.size())
        p.opdebugStatus = describeOpdebug(index.overflows[std::size_t(o.overflow)]);
    return p;
}

}  // namespace dl

#include "core/query/op_state.h"

#include <algorithm>
#include <limits>

#include <tbb/blocked_range.h>

#include "core/analysis/tensor_anomaly.h"
#include "core/util/parallel_for.h"

namespace dl {

const char* opStateName(OpState s) {
    switch (s) {
        case OpState::Normal:
            return "normal";
        case OpState::NearLimit:
            return "near limit";
        case OpState::Saturated:
            return "saturated";
        case OpState::InfNan:
            return "inf/nan";
        case OpState::Origin:
            return "origin";
    }
    return "?";
}

static OpState stateOf(const DumpIndex& index, const TensorRecord& t, double threshold) {
    const TensorAnomaly a = classifyTensor(index, t);
    switch (a.kind) {
        case AnomalyKind::Inf:
        case AnomalyKind::Nan:
            return OpState::InfNan;
        case AnomalyKind::Saturated:
        case AnomalyKind::Opdebug:
            return OpState::Saturated;
        case AnomalyKind::None:
            break;
    }
    return a.fp16MaxShare >= threshold ? OpState::NearLimit : OpState::Normal;
}

OpStates computeOpStates(const DumpIndex& index, const AnalysisResult* analysis, double nearLimitThreshold) {
    OpStates s;
    s.tensor.resize(index.tensors.size(), OpState::Normal);
    s.op.resize(index.ops.size(), OpState::Normal);
    // Near the limit is the analysis's call when there is one (fp16 tensors and fp32 inputs cast
    // to fp16; a value at 65504 copied from an input is near the limit, not saturated), so that the
    // table's state and its filter count the tensors the verdict banner counts.
    const double threshold = analysis ? std::numeric_limits<double>::infinity() : nearLimitThreshold;
    // Independent per tensor: on all cores (10M tensors are 10M classifications).
    parallelFor(tbb::blocked_range<std::size_t>(0, index.tensors.size(), 1 << 14),
                [&](const tbb::blocked_range<std::size_t>& r) {
                    for (std::size_t i = r.begin(); i < r.end(); ++i)
                        s.tensor[i] = stateOf(index, index.tensors[i], threshold);
                });
    if (analysis) {
        for (std::uint32_t t : analysis->nearLimitTensors)
            if (t < s.tensor.size() && s.tensor[t] != OpState::InfNan) s.tensor[t] = OpState::NearLimit;
    }
    for (std::size_t i = 0; i < index.tensors.size(); ++i) {
        const TensorRecord& t = index.tensors[i];
        if (t.op < s.op.size()) s.op[t.op] = std::max(s.op[t.op], s.tensor[i]);
    }
    // An Opdebug record without any bad tensor still marks the op as overflowing.
    for (std::size_t i = 0; i < index.ops.size(); ++i) {
        const OpRecord& o = index.ops[i];
        if (o.overflow >= 0 && static_cast<std::size_t>(o.overflow) < index.overflows.size() &&
            opdebugReportsOverflow(index.overflows[o.overflow]))
            s.op[i] = std::max(s.op[i], OpState::Saturated);
    }
    if (analysis && analysis->firstOverflow && analysis->firstOverflow->op < s.op.size())
        s.op[analysis->firstOverflow->op] = OpState::Origin;
    for (OpState st : s.op) ++s.counts[static_cast<int>(st)];
    return s;
}

}  // namespace dl

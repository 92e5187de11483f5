#include "core/analysis/first_overflow_inputs.h"

#include <algorithm>
#include <set>

#include "core/analysis/analysis_context.h"
#include "core/analysis/comm_matcher.h"
#include "core/analysis/stage_map.h"
#include "core/analysis/tensor_anomaly.h"

namespace dl {

bool holdsAnomaly(const DumpIndex& idx) {
    if (!idx.overflows.empty()) return true;
    return std::any_of(idx.tensors.begin(), idx.tensors.end(),
                       [&](const TensorRecord& t) { return classifyTensor(idx, t).bad(); });
}

CleanIterationInputs cleanIterationInputs(const DumpIndex& index) {
    CleanIterationInputs out;
    std::vector<char> keep(index.ops.size(), 0);
    for (const CommOp& c : findCommOps(index)) keep[c.op] = 1;
    out.comm = std::find(keep.begin(), keep.end(), 1) != keep.end();
    std::set<std::uint32_t> ranked, lossRanked;
    bool untimed = false;
    for (std::uint32_t i = 0; i < index.ops.size(); ++i) {
        const OpRecord& o = index.ops[i];
        if (ranked.insert(o.rank).second) keep[i] = 1;
        if (!untimed && opTimeUs(index, i) == 0) {
            untimed = true;
            keep[i] = 1;
        }
        if (!lossRanked.count(o.rank) && isLossOrHeadOp(index, o)) {
            lossRanked.insert(o.rank);
            keep[i] = 1;
        }
    }
    out.lossOrHead = !lossRanked.empty();
    out.untimed = untimed;
    for (std::uint32_t i = 0; i < keep.size(); ++i)
        if (keep[i]) out.ops.push_back(i);
    return out;
}

}  // namespace dl

#include "core/analysis/statistic_overflow.h"

#include <algorithm>
#include <cmath>

#include "core/stats/statistic_overflow_bits.h"
#include "core/util/text.h"

namespace dl {

std::vector<std::uint32_t> findStatisticOverflows(const DumpIndex& idx) {
    std::vector<std::uint32_t> out;
    for (std::uint32_t t = 0; t < idx.tensors.size(); ++t)
        if (idx.stats(idx.tensors[t]).known & (stat::MeanOverflow | stat::L2Overflow)) out.push_back(t);
    return out;
}

std::string statisticOverflowNote(const DumpIndex& idx, const std::vector<std::uint32_t>& tensors) {
    if (tensors.empty()) return {};
    const TensorRecord& t = idx.tensors[tensors.front()];
    const TensorStats s = idx.stats(t);
    const OpRecord& o = idx.ops[t.op];
    const DType d = t.origDtype != DType::Unknown ? t.origDtype : t.dtype;
    std::string which = (s.known & stat::MeanOverflow) ? "Mean" : "";
    if (s.known & stat::L2Overflow) which += which.empty() ? "L2 norm" : " and L2 norm";
    return std::to_string(tensors.size()) +
        " tensor(s) hold finite values but a statistic that overflowed in their own " +
        "dtype (the writer reduced them in it; the values did not overflow): first " + idx.strings.str(o.type) + " " +
        idx.strings.str(o.name) + " " + idx.tensorLabel(t) + " (" + std::string(dtypeName(d)) + ", " + which +
        " inf, largest |x| " + shortNumber(std::max(std::fabs(s.max), std::fabs(s.min))) + ")";
}

}  // namespace dl

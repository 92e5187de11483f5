#include "core/compare/argument_diffs.h"

#include <cmath>

namespace dl {

namespace {

std::string valueText(const MsprobeArg& x) { return x.stats[0].text; }

}  // namespace

std::vector<ArgumentDifference> compareArguments(const DumpIndex& a, const DumpIndex& b, const RunAlignment& al,
                                                 const MsprobeSidecar& sa, const MsprobeSidecar& sb) {
    std::vector<ArgumentDifference> out;
    const auto& argsA = sa.arguments;
    const auto& argsB = sb.arguments;
    if (argsA.empty() || argsB.empty()) return out;
    for (const OpPair& p : al.ops) {
        const OpRecord &oa = a.ops[p.a], &ob = b.ops[p.b];
        const auto ia = argsA.find(MsprobeSidecar::EntryKey{oa.rank, oa.iteration, a.strings.str(oa.name)});
        const auto ib = argsB.find(MsprobeSidecar::EntryKey{ob.rank, ob.iteration, b.strings.str(ob.name)});
        if (ia == argsA.end() || ib == argsB.end()) continue;
        for (const MsprobeArg& x : ia->second)
            for (const MsprobeArg& y : ib->second) {
                if (x.label != y.label) continue;
                const double u = x.stats[0].number, v = y.stats[0].number;
                const bool equal = x.stats[0].numeric() && y.stats[0].numeric()
                    ? u == v || (std::isnan(u) && std::isnan(v))
                    : x.dtype == y.dtype && valueText(x) == valueText(y);
                if (!equal) out.push_back({p.a, x.label, valueText(x), valueText(y)});
                break;
            }
    }
    return out;
}

}  // namespace dl

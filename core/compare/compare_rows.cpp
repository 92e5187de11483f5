#include "core/compare/compare_rows.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>

#include "core/util/text.h"

namespace dl {

namespace {

bool opMatches(const DumpIndex& idx, const OpRecord& o, std::string_view text) {
    return containsNoCase(idx.strings.str(o.name), text) || containsNoCase(idx.strings.str(o.type), text) ||
        (o.scope && containsNoCase(idx.strings.str(o.scope), text));
}

double worst(std::initializer_list<double> values) {
    double w = std::nan("");
    for (double v : values)
        if (!std::isnan(v)) w = std::isnan(w) ? v : std::max(w, v);
    return w;
}

}  // namespace

double compareSortValue(const TensorComparison& row, CompareSortKey key) {
    const TensorMetrics& m = row.metrics;
    switch (key) {
        case CompareSortKey::Order:
            return 0;
        case CompareSortKey::Cosine:
            return m.cosine;
        case CompareSortKey::MaxAbsErr:
            return m.maxAbsErr;
        case CompareSortKey::MaxRelErr:
            return m.maxRelErr;
        case CompareSortKey::StatsRelDiff:
            return worst({m.maxRelDiff, m.minRelDiff, m.meanRelDiff, m.l2RelDiff});
    }
    return 0;
}

std::vector<std::uint32_t> selectCompareRows(const RunComparison& c, const DumpIndex& a, const DumpIndex& b,
                                             const CompareRowFilter& f, CompareSortKey key, bool descending) {
    std::vector<std::uint32_t> out;
    out.reserve(c.rows.size());
    for (std::uint32_t r = 0; r < c.rows.size() && r < c.alignment.tensors.size(); ++r) {
        if (f.divergedOnly && !c.rows[r].diverged) continue;
        if (!(f.classes & (1u << unsigned(c.rows[r].verdict)))) continue;
        const TensorPair& p = c.alignment.tensors[r];
        const OpRecord& oa = a.ops[a.tensors[p.a].op];
        if (f.rank && oa.rank != *f.rank) continue;
        if (f.iteration && oa.iteration != *f.iteration) continue;
        if (!f.text.empty() && !opMatches(a, oa, f.text) && !opMatches(b, b.ops[b.tensors[p.b].op], f.text)) continue;
        out.push_back(r);
    }
    if (key == CompareSortKey::Order) {
        if (descending) std::reverse(out.begin(), out.end());
        return out;
    }
    std::vector<double> v(c.rows.size());
    for (std::uint32_t r : out) v[r] = compareSortValue(c.rows[r], key);
    std::stable_sort(out.begin(), out.end(), [&](std::uint32_t x, std::uint32_t y) {
        const bool nx = std::isnan(v[x]), ny = std::isnan(v[y]);
        if (nx || ny) return !nx && ny;  // N/A last
        return descending ? v[x] > v[y] : v[x] < v[y];
    });
    return out;
}

}  // namespace dl

#pragma once
// Which comparison rows the aligned table shows, and in what order: filtered and sorted here so
// the table model stays a thin view over row indices (a million rows stay responsive).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/compare/run_comparison.h"

namespace dl {

enum class CompareSortKey : std::uint8_t {
    Order,   // run A's execution order (the alignment's order)
    Cosine,  // lowest cosine first when ascending
    MaxAbsErr,
    MaxRelErr,
    StatsRelDiff,  // largest relative difference of max/min/mean/L2
};

struct CompareRowFilter {
    bool divergedOnly = false;
    std::uint32_t classes = ~0u;                   // bit (1 << Verdict) per class shown
    std::string text;                              // case-insensitive, in either run's op name, type or scope
    std::optional<std::uint32_t> rank, iteration;  // run A's
};

// Row indices into c.rows. Rows whose sort key is N/A go last in either direction.
std::vector<std::uint32_t> selectCompareRows(const RunComparison& c, const DumpIndex& a, const DumpIndex& b,
                                             const CompareRowFilter& filter, CompareSortKey key, bool descending);

// The sort key's value for one row (NaN when N/A).
double compareSortValue(const TensorComparison& row, CompareSortKey key);

}  // namespace dl

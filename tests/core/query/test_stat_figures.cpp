// The figures the table shows (min, max, max|x|, mean with infinities counted, NaN skipped) and the
// table's numeric sort (all-NaN and Inf first when descending, unknown last in either direction).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/query/op_filter.h"
#include "core/query/stat_figures.h"
#include "core/stats/stats_accumulator.h"

using namespace dl;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TensorStats statsOf(const std::vector<double>& v) {
    StatsAccumulator acc;
    acc.add(v.data(), v.size(), DType::Float64);
    return acc.stats();
}

// numpy's nanmax / nanmin / nanmean over the values, written out: NaN skipped, infinities kept,
// NaN when nothing but NaN is left.
struct Reference {
    double min = kNaN, max = kNaN, maxAbs = kNaN, mean = kNaN;
};
Reference reference(const std::vector<double>& v) {
    Reference r;
    double sum = 0;
    std::size_t n = 0;
    for (double x : v) {
        if (std::isnan(x)) continue;
        r.min = n ? std::min(r.min, x) : x;
        r.max = n ? std::max(r.max, x) : x;
        r.maxAbs = n ? std::max(r.maxAbs, std::fabs(x)) : std::fabs(x);
        sum += x;
        ++n;
    }
    if (n) r.mean = sum / double(n);
    return r;
}

void expectSame(std::optional<double> got, double want, const char* what) {
    ASSERT_TRUE(got.has_value()) << what;
    if (std::isnan(want))
        EXPECT_TRUE(std::isnan(*got)) << what << ": " << *got;
    else if (std::isinf(want))
        EXPECT_EQ(*got, want) << what;
    else
        EXPECT_NEAR(*got, want, 1e-9 * std::max(1.0, std::fabs(want))) << what;
}

}  // namespace

TEST(StatFigures, InfinitiesCountNaNIsSkippedAllNaNIsNaN) {
    const std::vector<std::vector<double>> cases = {
        {1, -2430, 7},        // finite only
        {1, 2430, kInf, -3},  // +Inf: max and max|x| are inf, not 2430
        {1, -kInf, 5},        // -Inf: min -inf, max|x| inf, max finite
        {kInf, -kInf, 2},     // both: mean nan (inf - inf)
        {kNaN, 4, -9, kNaN},  // NaN skipped
        {kNaN, kNaN, kNaN},   // all NaN
        {kNaN, kInf},         // NaN and +Inf only
        {-kInf, -kInf},       // every element -inf: max is -inf
    };
    for (const auto& v : cases) {
        const TensorStats s = statsOf(v);
        const Reference r = reference(v);
        expectSame(statFigure(s, StatFigure::Min), r.min, "min");
        expectSame(statFigure(s, StatFigure::Max), r.max, "max");
        expectSame(statFigure(s, StatFigure::MaxAbs), r.maxAbs, "max|x|");
        expectSame(statFigure(s, StatFigure::Mean), r.mean, "mean");
    }
}

TEST(StatFigures, UnknownWhenTheDumpDoesNotTell) {
    TensorStats none;  // nothing known
    EXPECT_FALSE(statFigure(none, StatFigure::MaxAbs).has_value());
    TensorStats csv;  // statistic.csv with Max/Min only: no max|x| column
    csv.max = 3;
    csv.min = -1;
    csv.known = stat::Max | stat::Min;
    EXPECT_FALSE(statFigure(csv, StatFigure::MaxAbs).has_value());
    expectSame(statFigure(csv, StatFigure::Max), 3, "max");
    // The same CSV saying the tensor held +Inf (positive inf count): max|x| is known to be inf.
    csv.posInfCount = 2;
    csv.known |= stat::PosInfCount;
    expectSame(statFigure(csv, StatFigure::MaxAbs), kInf, "max|x| from the inf count");
    expectSame(statFigure(csv, StatFigure::Max), kInf, "max from the inf count");
}

TEST(StatFigures, TableSortPutsNaNAndInfFirstWhenDescendingAndUnknownLast) {
    // One op per tensor; max|x| values: 2430 with +Inf, 10, all NaN, unknown, 65504, 1.
    const std::vector<std::vector<double>> values = {{2430, kInf}, {10, -3}, {kNaN, kNaN}, {}, {65504}, {1}};
    DumpIndex ix;
    for (std::size_t k = 0; k < values.size(); ++k) {
        OpRecord o;
        o.type = ix.strings.intern("Add");
        o.name = ix.strings.intern("Add-op" + std::to_string(k));
        o.firstTensor = static_cast<std::uint32_t>(k);
        o.tensorCount = 1;
        TensorRecord t;
        t.op = static_cast<std::uint32_t>(k);
        t.io = Io::Output;
        t.dtype = DType::Float32;
        ix.setStats(t, values[k].empty() ? TensorStats{} : statsOf(values[k]));
        ix.tensors.push_back(t);
        ix.ops.push_back(o);
    }
    const OpStates st = computeOpStates(ix, nullptr);
    const QueryContext ctx{ix, st, nullptr};
    std::vector<std::uint32_t> rows;
    std::string err;
    ASSERT_TRUE(filterRows(ctx, {}, rows, err));
    // Expected order from the reference figures: all-NaN first, then by max|x| descending (+Inf
    // above every finite value), the unknown one last.
    std::vector<std::uint32_t> want;
    std::vector<std::pair<double, std::uint32_t>> ranked;
    for (std::uint32_t k = 0; k < values.size(); ++k) {
        if (values[k].empty()) continue;
        const double m = reference(values[k]).maxAbs;
        if (std::isnan(m))
            want.push_back(k);
        else
            ranked.push_back({m, k});
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](auto x, auto y) { return x.first > y.first; });
    for (const auto& r : ranked) want.push_back(r.second);
    want.push_back(3);  // unknown last
    sortRows(ctx, rows, OpColumn::MaxAbs, true);
    EXPECT_EQ(rows, want);
    ASSERT_EQ(rows.front(), 2u);  // the all-NaN tensor first
    EXPECT_EQ(rows[1], 0u);       // then the one holding +Inf (finite max 2430)

    // Ascending: the reverse of the known ones, unknown still last.
    sortRows(ctx, rows, OpColumn::MaxAbs, false);
    std::vector<std::uint32_t> up(want.begin(), want.end() - 1);
    std::reverse(up.begin(), up.end());
    up.push_back(3);
    EXPECT_EQ(rows, up);
}

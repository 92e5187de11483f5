// The table's filters and sorts (core/query/op_filter) against a plain per-row reference written
// here: the predicate evaluated tensor by tensor, and the sort as one comparator over the raw
// records (the form the code had before it precomputed keys per row and tested each string once).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "core/query/op_filter.h"
#include "core/query/stat_figures.h"
#include "core/util/op_name.h"
#include "core/util/text.h"
#include "tests/core/analysis_test_builder.h"

using namespace dl;
using namespace dltest;

namespace {

// 4 ranks x 6 iterations of 40 ops; names repeat across iterations (fewer strings than ops), or
// every op gets its own name (more strings than ops): the two ways matchOps can go.
DumpIndex makeIndex(bool uniqueNames) {
    std::mt19937 rng(7);
    const std::vector<std::string> types = {"MatMul", "Add", "SqrtGrad", "Send", "Cast", "RmsNorm"};
    const std::vector<DType> dtypes = {DType::Float16, DType::Float32, DType::BFloat16};
    IndexBuilder b;
    for (std::uint32_t rank = 0; rank < 4; ++rank)
        for (std::uint32_t it = 0; it < 6; ++it)
            for (int k = 0; k < 40; ++k) {
                const std::string& type = types[std::size_t(k) % types.size()];
                const std::string scope =
                    (k % 2 ? "Gradients/Default/network-Net/layer" : "Default/network-Net/layer") +
                    std::to_string(k % 7) + "/" + type + "-op" + std::to_string(k);
                const std::string name = uniqueNames ? scope + "." + std::to_string(rank) + "." + std::to_string(it)
                                                     : (k % 3 ? scope : type + "-op" + std::to_string(k));
                std::vector<T> ts;
                const int n = 1 + int(rng() % 3);
                for (int s = 0; s < n; ++s) {
                    TensorStats st;
                    switch (rng() % 6) {
                        case 0:
                            st = dataStats(double(rng() % 70000), rng() % 2, 0, 0);
                            break;
                        case 1:
                            st = dataStats(65504, 0, 0, 1 + rng() % 3);
                            break;
                        case 2:
                            st = csvStats(-double(rng() % 100), double(rng() % 100));
                            break;
                        case 3:
                            st = TensorStats{};
                            break;  // nothing known
                        case 4:
                            st = dataStats(double(rng() % 40000) / 7.0, 0, rng() % 2);
                            break;
                        default:
                            st = dataStats(double(rng() % 100));
                            break;
                    }
                    T t = s + 1 < n ? in(std::uint16_t(s), st, dtypes[rng() % 3]) : out(0, st, dtypes[rng() % 3]);
                    t.shape.clear();
                    for (std::size_t d = 0, nd = rng() % 4; d < nd; ++d) t.shape.push_back(1 + std::int64_t(rng() % 4));
                    ts.push_back(t);
                }
                b.op(rank, it, type, name, ts, 1000 + k, k % 5 ? scope : "");
            }
    return b.idx;
}

OpStates makeStates(const DumpIndex& idx) {
    OpStates s = computeOpStates(idx, nullptr);
    s.op[idx.ops.size() / 2] = OpState::Origin;
    return s;
}

// The filter, tensor by tensor.
std::vector<std::uint32_t> referenceFilter(const QueryContext& ctx, const OpFilter& f) {
    const DumpIndex& ix = ctx.index;
    std::optional<std::regex> re;
    if (f.regex)
        re.emplace(f.text, std::regex::ECMAScript | (f.caseSensitive ? std::regex::flag_type{} : std::regex::icase));
    auto hit = [&](std::string_view s) {
        if (s.empty()) return false;
        if (re) return std::regex_search(s.begin(), s.end(), *re);
        return f.caseSensitive ? s.find(f.text) != std::string_view::npos : containsNoCase(s, f.text);
    };
    std::vector<std::uint32_t> rows;
    for (std::uint32_t t = 0; t < ix.tensors.size(); ++t) {
        const OpRecord& o = ix.ops[ix.tensors[t].op];
        if (!f.text.empty() && !hit(ix.strings.view(o.name)) && !hit(ix.strings.view(o.scope)) &&
            !hit(ix.strings.view(o.type)))
            continue;
        if (!f.type.empty() && ix.strings.view(o.type) != f.type) continue;
        if (f.rank && o.rank != *f.rank) continue;
        if (f.iteration && o.iteration != *f.iteration) continue;
        if (f.stage && ctx.stageOfOp(ix.tensors[t].op) != *f.stage) continue;
        const OpState own = ctx.states.tensor[t];
        const OpState shown = ctx.states.op[ix.tensors[t].op] == OpState::Origin ? OpState::Origin : own;
        if (f.stateMask & (opStateBit(shown) | (own != OpState::Normal ? opStateBit(own) : 0u))) rows.push_back(t);
    }
    return rows;
}

// The sort as one comparator on the records: the column's order, unknown figures last in either
// direction, ties by tensor index.
void referenceSort(const QueryContext& ctx, std::vector<std::uint32_t>& rows, OpColumn column, bool descending) {
    const DumpIndex& ix = ctx.index;
    auto op = [&](std::uint32_t t) -> const OpRecord& { return ix.ops[ix.tensors[t].op]; };
    auto three = [](const auto& x, const auto& y) { return x < y ? -1 : (y < x ? 1 : 0); };
    auto cmp = [&](std::uint32_t a, std::uint32_t b) -> int {
        const TensorRecord &ta = ix.tensors[a], &tb = ix.tensors[b];
        switch (column) {
            case OpColumn::Rank:
                return three(op(a).rank, op(b).rank);
            case OpColumn::Stage:
                return three(ctx.stageOfOp(ta.op), ctx.stageOfOp(tb.op));
            case OpColumn::Iteration:
                return three(op(a).iteration, op(b).iteration);
            case OpColumn::Order:
                return three(ta.op, tb.op);
            case OpColumn::Op: {
                const std::string_view na = ix.strings.view(op(a).name), nb = ix.strings.view(op(b).name);
                const int c = three(splitOpName(na).shortName, splitOpName(nb).shortName);
                return c ? c : three(na, nb);
            }
            case OpColumn::Type:
                return three(ix.strings.view(op(a).type), ix.strings.view(op(b).type));
            case OpColumn::Tensor:
                return three(std::pair(int(ta.io), ta.slot), std::pair(int(tb.io), tb.slot));
            case OpColumn::DType:
                return three(int(ta.dtype), int(tb.dtype));
            case OpColumn::Shape:
                return three(ix.shape(ta), ix.shape(tb));
            case OpColumn::State:
                return three(shownState(ctx, a), shownState(ctx, b));
            default: {
                const auto x = columnFigure(ix.stats(ta), column), y = columnFigure(ix.stats(tb), column);
                if (!x || !y) return bool(x) == bool(y) ? 0 : (!x ? 2 : -2);
                return compareFigures(*x, *y);
            }
        }
    };
    std::sort(rows.begin(), rows.end(), [&](std::uint32_t a, std::uint32_t b) {
        int c = cmp(a, b);
        if (c == 2 || c == -2) return c < 0;
        if (descending) c = -c;
        return c != 0 ? c < 0 : a < b;
    });
}

class OpFilterTest : public ::testing::TestWithParam<bool> {};

}  // namespace

TEST_P(OpFilterTest, FiltersMatchTheRowByRowReference) {
    const DumpIndex ix = makeIndex(GetParam());
    ASSERT_EQ(ix.strings.size() < ix.ops.size(), !GetParam());  // both matchOps paths are exercised
    const OpStates st = makeStates(ix);
    StageMap stages;
    for (std::uint32_t r = 0; r < 4; ++r) stages.stageOfRank[r] = int(r / 2);
    stages.stageCount = 2;
    const QueryContext ctx{ix, st, &stages};
    std::vector<OpFilter> filters(12);
    filters[1].text = "sqrtgrad";
    filters[2].text = "SqrtGrad";
    filters[2].caseSensitive = true;
    filters[3].text = "sqrtgrad";
    filters[3].caseSensitive = true;  // no hit: the names say SqrtGrad
    filters[4].text = "^gradients/.*layer[35]/";
    filters[4].regex = true;
    filters[5].text = "-op1[0-9]$";
    filters[5].regex = true;
    filters[5].caseSensitive = true;
    filters[6].type = "Cast";
    filters[7].rank = 2;
    filters[8].stage = 1;
    filters[8].iteration = 3;
    filters[9].stateMask = opStateBit(OpState::InfNan) | opStateBit(OpState::Origin);
    filters[10].stateMask = opStateBit(OpState::Saturated);
    filters[10].text = "layer";
    filters[11].text = "MatMul";
    filters[11].type = "MatMul";
    filters[11].rank = 1;
    for (std::size_t k = 0; k < filters.size(); ++k) {
        std::vector<std::uint32_t> rows;
        std::string error;
        ASSERT_TRUE(filterRows(ctx, filters[k], rows, error)) << error;
        const std::vector<std::uint32_t> want = referenceFilter(ctx, filters[k]);
        EXPECT_EQ(rows, want) << "filter " << k;
        if (k != 3) {
            EXPECT_FALSE(want.empty()) << "filter " << k << " tests nothing";
        }
    }
}

// Op 0's tensors copied to the end and the op pointed at the copies: the runs no longer follow
// each other (filterRows then scans every tensor), and the orphaned originals still name op 0.
TEST(OpFilter, TensorsOutsideTheOpRunsAreFilteredByTheirOpField) {
    DumpIndex ix = makeIndex(false);
    OpRecord& first = ix.ops[0];
    const std::uint32_t moved = std::uint32_t(ix.tensors.size());
    for (std::uint32_t k = 0; k < first.tensorCount; ++k) ix.tensors.push_back(ix.tensors[first.firstTensor + k]);
    first.firstTensor = moved;
    const OpStates st = makeStates(ix);
    const QueryContext ctx{ix, st, nullptr};
    for (const std::string text : {"", "layer", "MatMul-op0"}) {
        OpFilter f;
        f.text = text;
        std::vector<std::uint32_t> rows;
        std::string error;
        ASSERT_TRUE(filterRows(ctx, f, rows, error)) << error;
        EXPECT_EQ(rows, referenceFilter(ctx, f)) << text;
    }
}

// Each numeric column's figure, on statistics where they all differ: the reference sort takes its
// figures from columnFigure too, so a column reading another's statistic would show only here.
TEST(OpFilter, ColumnFigureIsTheColumnsOwnStatistic) {
    TensorStats s{.min = -7,
                  .max = 5,
                  .mean = 1.5,
                  .maxAbs = 7,
                  .nanCount = 2,
                  .satCount = 9,
                  .known = stat::Min | stat::Max | stat::MaxAbs | stat::Mean | stat::NanCount | stat::SatCount};
    const StatFigure figures[] = {StatFigure::Min, StatFigure::Max, StatFigure::MaxAbs, StatFigure::Mean};
    const OpColumn columns[] = {OpColumn::Min, OpColumn::Max, OpColumn::MaxAbs, OpColumn::Mean};
    for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(columnFigure(s, columns[k]), statFigure(s, figures[k])) << opColumnName(columns[k]);
        for (int j = 0; j < k; ++j) EXPECT_NE(statFigure(s, figures[j]), statFigure(s, figures[k]));
    }
    s.posInfCount = 3;
    s.known |= stat::PosInfCount;
    EXPECT_EQ(columnFigure(s, OpColumn::NanInf), 5.0);
    EXPECT_EQ(columnFigure(s, OpColumn::Saturated), 9.0);
    EXPECT_EQ(columnFigure(s, OpColumn::Rank), 0.0);
}

TEST_P(OpFilterTest, EverySortMatchesTheComparatorReference) {
    const DumpIndex ix = makeIndex(GetParam());
    const OpStates st = makeStates(ix);
    StageMap stages;
    for (std::uint32_t r = 0; r < 4; ++r) stages.stageOfRank[r] = r == 3 ? -1 : int(r / 2);
    const QueryContext ctx{ix, st, &stages};
    std::vector<std::uint32_t> all;
    std::string error;
    ASSERT_TRUE(filterRows(ctx, {}, all, error));
    ASSERT_EQ(all.size(), ix.tensors.size());
    std::mt19937 rng(3);
    std::vector<std::uint32_t> shuffled = all;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    for (int c = 0; c < int(OpColumn::Count); ++c)
        for (bool descending : {false, true})
            for (const auto* start : {&all, &shuffled}) {
                std::vector<std::uint32_t> got = *start, want = *start;
                sortRows(ctx, got, OpColumn(c), descending);
                referenceSort(ctx, want, OpColumn(c), descending);
                EXPECT_EQ(got, want) << opColumnName(OpColumn(c)) << (descending ? " descending" : " ascending");
            }
}

INSTANTIATE_TEST_SUITE_P(Names, OpFilterTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "UniquePerOp" : "RepeatedAcrossIterations"; });

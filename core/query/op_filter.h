#pragma once
// Filtering and sorting of the op/tensor table, done here (not in the item model) so that millions
// of rows stay fast: the result is a vector of tensor indices the model shows as rows.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"
#include "core/query/op_state.h"

namespace dl {

// Table columns; the table model shows them in this order.
enum class OpColumn : int {
    Rank = 0,
    Stage,
    Iteration,
    Order,
    Op,
    Type,
    Tensor,
    DType,
    Shape,
    Min,
    Max,
    MaxAbs,
    Mean,
    NanInf,
    Saturated,
    State,
    Count
};
const char* opColumnName(OpColumn c);

struct OpFilter {
    std::string text;    // matched against op name, scope and type
    bool regex = false;  // `text` is an ECMAScript regular expression
    bool caseSensitive = false;
    std::string type;  // exact op type; empty: any
    std::optional<std::uint32_t> rank;
    std::optional<int> stage;
    std::optional<std::uint32_t> iteration;
    std::uint32_t stateMask = kAllOpStates;  // opStateBit(...) of the TENSOR states to keep
};

struct QueryContext {
    const DumpIndex& index;
    const OpStates& states;
    const StageMap* stages = nullptr;  // null: stage unknown (-1)
    int stageOfOp(std::uint32_t op) const { return stages ? stages->stageOf(index.ops[op].rank) : -1; }
};

// A tensor's state as the table shows it: its own, or "origin" for every tensor of the origin op.
OpState shownState(const QueryContext& ctx, std::uint32_t tensor);

// Tensor indices passing `filter`, in index order. False (with `error`) for an invalid regex.
bool filterRows(const QueryContext& ctx, const OpFilter& filter, std::vector<std::uint32_t>& rows, std::string& error);

// The figure a numeric column (Min to Saturated) shows and sorts by: nullopt when unknown, 0 for a
// column that holds no figure.
std::optional<double> columnFigure(const TensorStats& s, OpColumn c);

// Sorts rows (tensor indices) by a column; ties keep index order so sorting is deterministic.
void sortRows(const QueryContext& ctx, std::vector<std::uint32_t>& rows, OpColumn column, bool descending);

// Distinct op types, sorted, for the type filter.
std::vector<std::string> opTypes(const DumpIndex& index);

}  // namespace dl

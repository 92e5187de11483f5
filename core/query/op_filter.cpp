#include "core/query/op_filter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <string_view>

#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include "core/query/stat_figures.h"
#include "core/util/op_name.h"
#include "core/util/text.h"

namespace dl {

const char* opColumnName(OpColumn c) {
    static const char* names[] = {"Rank", "Stage", "Iter", "#", "Op", "Type", "Tensor", "DType", "Shape",
                                  "Min", "Max", "Max |x|", "Mean", "NaN/Inf", "Saturated", "State"};
    const int i = static_cast<int>(c);
    return i >= 0 && i < static_cast<int>(OpColumn::Count) ? names[i] : "?";
}

namespace {

// Per-op text match, computed once per op (not per tensor) and in parallel.
bool matchOps(const DumpIndex& index, const OpFilter& f, std::vector<char>& match, std::string& error) {
    match.assign(index.ops.size(), 1);
    if (f.text.empty()) return true;
    std::optional<std::regex> re;
    if (f.regex) {
        try {
            auto flags = std::regex::ECMAScript | std::regex::optimize;
            if (!f.caseSensitive) flags |= std::regex::icase;
            re.emplace(f.text, flags);
        } catch (const std::regex_error& e) {
            error = "invalid regular expression '" + f.text + "': " + e.what();
            return false;
        }
    }
    auto hit = [&](std::string_view s) {
        if (s.empty()) return false;
        if (re) return std::regex_search(s.begin(), s.end(), *re);
        return f.caseSensitive ? s.find(f.text) != std::string_view::npos : containsNoCase(s, f.text);
    };
    tbb::parallel_for(std::size_t(0), index.ops.size(), [&](std::size_t i) {
        const OpRecord& o = index.ops[i];
        const StringPool& sp = index.strings;
        match[i] = hit(sp.view(o.name)) || hit(sp.view(o.scope)) || hit(sp.view(o.type));
    });
    return true;
}

// The figure a numeric column shows (nullopt: unknown).
std::optional<double> numberOf(const TensorStats& s, OpColumn c) {
    switch (c) {
        case OpColumn::Min: return statFigure(s, StatFigure::Min);
        case OpColumn::Max: return statFigure(s, StatFigure::Max);
        case OpColumn::MaxAbs: return statFigure(s, StatFigure::MaxAbs);
        case OpColumn::Mean: return statFigure(s, StatFigure::Mean);
        case OpColumn::NanInf: return static_cast<double>(s.nanCount + s.infCount());
        case OpColumn::Saturated: return static_cast<double>(s.satCount);
        default: return 0.0;
    }
}

}  // namespace

OpState shownState(const QueryContext& ctx, std::uint32_t t) {
    const OpState st = t < ctx.states.tensor.size() ? ctx.states.tensor[t] : OpState::Normal;
    const std::uint32_t op = t < ctx.index.tensors.size() ? ctx.index.tensors[t].op : kNoIndex;
    // The origin is an op state; its tensors count as "origin" for the state filter and sort.
    return op < ctx.states.op.size() && ctx.states.op[op] == OpState::Origin ? OpState::Origin : st;
}

bool filterRows(const QueryContext& ctx, const OpFilter& f, std::vector<std::uint32_t>& rows, std::string& error) {
    const DumpIndex& index = ctx.index;
    std::vector<char> opOk;
    if (!matchOps(index, f, opOk, error)) return false;
    const StrId typeId = f.type.empty() ? 0 : index.strings.find(f.type);
    for (std::size_t i = 0; i < index.ops.size(); ++i) {
        if (!opOk[i]) continue;
        const OpRecord& o = index.ops[i];
        if (!f.type.empty() && o.type != typeId) opOk[i] = 0;
        else if (f.rank && o.rank != *f.rank) opOk[i] = 0;
        else if (f.iteration && o.iteration != *f.iteration) opOk[i] = 0;
        else if (f.stage && ctx.stageOfOp(static_cast<std::uint32_t>(i)) != *f.stage) opOk[i] = 0;
    }
    rows.clear();
    for (std::size_t t = 0; t < index.tensors.size(); ++t) {
        const std::uint32_t op = index.tensors[t].op;
        if (op >= opOk.size() || !opOk[op]) continue;
        // A tensor of the origin op shows "origin", and still counts under its own state when that
        // is not normal (its near-limit input is one of the banner's near-limit tensors).
        const auto ti = static_cast<std::uint32_t>(t);
        const OpState own = t < ctx.states.tensor.size() ? ctx.states.tensor[t] : OpState::Normal;
        if (f.stateMask & (opStateBit(shownState(ctx, ti)) | (own != OpState::Normal ? opStateBit(own) : 0u))) rows.push_back(ti);
    }
    return true;
}

void sortRows(const QueryContext& ctx, std::vector<std::uint32_t>& rows, OpColumn column, bool descending) {
    const DumpIndex& ix = ctx.index;
    auto op = [&](std::uint32_t t) -> const OpRecord& { return ix.ops[ix.tensors[t].op]; };
    // Three-way key comparison per column; the row index breaks ties.
    auto cmp = [&](std::uint32_t a, std::uint32_t b) -> int {
        const TensorRecord& ta = ix.tensors[a];
        const TensorRecord& tb = ix.tensors[b];
        auto three = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
        switch (column) {
            case OpColumn::Rank: return three(op(a).rank, op(b).rank);
            case OpColumn::Stage: return three(ctx.stageOfOp(ta.op), ctx.stageOfOp(tb.op));
            case OpColumn::Iteration: return three(op(a).iteration, op(b).iteration);
            case OpColumn::Order: return three(ta.op, tb.op);
            case OpColumn::Op: {
                // By the short name the column shows; the scope breaks ties.
                const int c = three(splitOpName(ix.strings.view(op(a).name)).shortName, splitOpName(ix.strings.view(op(b).name)).shortName);
                return c ? c : three(ix.strings.view(op(a).name), ix.strings.view(op(b).name));
            }
            case OpColumn::Type: return three(ix.strings.view(op(a).type), ix.strings.view(op(b).type));
            case OpColumn::Tensor: return three(std::pair(int(ta.io), ta.slot), std::pair(int(tb.io), tb.slot));
            case OpColumn::DType: return three(int(ta.dtype), int(tb.dtype));
            case OpColumn::Shape: return three(ix.shape(ta), ix.shape(tb));
            case OpColumn::State: return three(shownState(ctx, a), shownState(ctx, b));
            default: {
                // Unknown figures sort last in either direction; NaN (all NaN) ranks above +Inf.
                const auto x = numberOf(ix.stats(ta), column), y = numberOf(ix.stats(tb), column);
                if (!x || !y) return bool(x) == bool(y) ? 0 : (!x ? 2 : -2);
                return compareFigures(*x, *y);
            }
        }
    };
    tbb::parallel_sort(rows.begin(), rows.end(), [&](std::uint32_t a, std::uint32_t b) {
        int c = cmp(a, b);
        if (c == 2 || c == -2) return c < 0;   // unknown last regardless of direction
        if (descending) c = -c;
        return c != 0 ? c < 0 : a < b;
    });
}

std::vector<std::string> opTypes(const DumpIndex& index) {
    std::vector<StrId> ids;
    ids.reserve(index.ops.size());
    for (const OpRecord& o : index.ops) ids.push_back(o.type);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::vector<std::string> out;
    for (StrId id : ids)
        if (id != 0) out.emplace_back(index.strings.str(id));
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace dl

#include "core/query/op_filter.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cmath>
#include <regex>
#include <span>
#include <string_view>

#include "core/model/no_index.h"
#include "core/query/stat_figures.h"
#include "core/util/op_name.h"
#include "core/util/parallel_for.h"
#include "core/util/text.h"

namespace dl {

const char* opColumnName(OpColumn c) {
    static const char* names[] = {"Rank",  "Stage", "Iter", "#",       "Op",   "Type",    "Tensor",    "DType",
                                  "Shape", "Min",   "Max",  "Max |x|", "Mean", "NaN/Inf", "Saturated", "State"};
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
    const StringPool& sp = index.strings;
    if (sp.size() < index.ops.size()) {
        // Names repeat in every iteration: test each string once (10M rows: ~10^4 strings against
        // 3x10^6 ops), then look the answers up per op.
        std::vector<char> strHit(sp.size(), 0);
        parallelFor(std::size_t(1), sp.size(), [&](std::size_t id) { strHit[id] = hit(sp.view(StrId(id))); });
        parallelFor(std::size_t(0), index.ops.size(), [&](std::size_t i) {
            const OpRecord& o = index.ops[i];
            const auto at = [&](StrId id) { return id < strHit.size() && strHit[id]; };
            match[i] = at(o.name) || at(o.scope) || at(o.type);
        });
        return true;
    }
    parallelFor(std::size_t(0), index.ops.size(), [&](std::size_t i) {
        const OpRecord& o = index.ops[i];
        match[i] = hit(sp.view(o.name)) || hit(sp.view(o.scope)) || hit(sp.view(o.type));
    });
    return true;
}

}  // namespace

std::optional<double> columnFigure(const TensorStats& s, OpColumn c) {
    switch (c) {
        case OpColumn::Min:
            return statFigure(s, StatFigure::Min);
        case OpColumn::Max:
            return statFigure(s, StatFigure::Max);
        case OpColumn::MaxAbs:
            return statFigure(s, StatFigure::MaxAbs);
        case OpColumn::Mean:
            return statFigure(s, StatFigure::Mean);
        case OpColumn::NanInf:
            return static_cast<double>(s.nanCount + s.infCount());
        case OpColumn::Saturated:
            return static_cast<double>(s.satCount);
        default:
            return 0.0;
    }
}

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
    // A finalized index lays each op's tensors out as one run, op after op: then only the runs of
    // the kept ops are visited (a tensor record is 144 bytes; reading 10M of them for their op
    // field was most of a filter). Anything else falls back to a pass over every tensor.
    std::atomic<bool> runs{
        index.ops.empty() ||
        (index.ops.front().firstTensor == 0 &&
         std::uint64_t(index.ops.back().firstTensor) + index.ops.back().tensorCount == index.tensors.size())};
    parallelFor(tbb::blocked_range<std::size_t>(0, index.ops.size()), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t i = r.begin(); i < r.end(); ++i) {
            const OpRecord& o = index.ops[i];
            if (i && o.firstTensor != std::uint64_t(index.ops[i - 1].firstTensor) + index.ops[i - 1].tensorCount)
                runs = false;
            if (!opOk[i]) continue;
            if ((!f.type.empty() && o.type != typeId) || (f.rank && o.rank != *f.rank) ||
                (f.iteration && o.iteration != *f.iteration) ||
                (f.stage && ctx.stageOfOp(static_cast<std::uint32_t>(i)) != *f.stage))
                opOk[i] = 0;
        }
    });
    // A tensor of the origin op shows "origin", and still counts under its own state when that is
    // not normal (its near-limit input is one of the banner's near-limit tensors).
    const auto keep = [&](std::size_t t, std::uint32_t op) {
        const OpState own = t < ctx.states.tensor.size() ? ctx.states.tensor[t] : OpState::Normal;
        const OpState shown = op < ctx.states.op.size() && ctx.states.op[op] == OpState::Origin ? OpState::Origin : own;
        return (f.stateMask & (opStateBit(shown) | (own != OpState::Normal ? opStateBit(own) : 0u))) != 0;
    };
    // Blocks on all cores, each block's rows in index order, joined in block order.
    constexpr std::size_t kBlock = 1 << 14;
    const std::size_t count = runs ? index.ops.size() : index.tensors.size();
    std::vector<std::vector<std::uint32_t>> parts((count + kBlock - 1) / kBlock);
    parallelFor(std::size_t(0), parts.size(), [&](std::size_t b) {
        std::vector<std::uint32_t>& part = parts[b];
        const std::size_t end = std::min(count, (b + 1) * kBlock);
        for (std::size_t k = b * kBlock; k < end; ++k) {
            if (runs) {
                if (!opOk[k]) continue;
                const OpRecord& o = index.ops[k];
                for (std::size_t t = o.firstTensor; t < std::size_t(o.firstTensor) + o.tensorCount; ++t)
                    if (keep(t, std::uint32_t(k))) part.push_back(static_cast<std::uint32_t>(t));
            } else {
                const std::uint32_t op = index.tensors[k].op;
                if (op < opOk.size() && opOk[op] && keep(k, op)) part.push_back(static_cast<std::uint32_t>(k));
            }
        }
    });
    rows.clear();
    std::size_t total = 0;
    for (const auto& p : parts) total += p.size();
    rows.reserve(total);
    for (const auto& p : parts) rows.insert(rows.end(), p.begin(), p.end());
    return true;
}

namespace {

// Rank of each string id used by `ids` in the order `less` gives (equal strings share a rank), so a
// sort compares integers instead of strings. Indexed by StrId.
template <class Less>
std::vector<std::uint32_t> stringRanks(const StringPool& sp, std::vector<StrId> ids, Less less) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::sort(ids.begin(), ids.end(), less);
    std::vector<std::uint32_t> rank(sp.size() + 1, 0);
    std::uint32_t r = 0;
    for (std::size_t k = 0; k < ids.size(); ++k) {
        if (k && less(ids[k - 1], ids[k])) ++r;
        rank[ids[k]] = r;
    }
    return rank;
}

}  // namespace

void sortRows(const QueryContext& ctx, std::vector<std::uint32_t>& rows, OpColumn column, bool descending) {
    const DumpIndex& ix = ctx.index;
    const StringPool& sp = ix.strings;
    auto op = [&](std::uint32_t t) -> const OpRecord& { return ix.ops[ix.tensors[t].op]; };
    // Every key is computed once per row, not per comparison: a 10M-row sort makes ~5x10^8
    // comparisons, and unpacking statistics or splitting names in each took minutes.
    switch (column) {
        case OpColumn::Rank:
        case OpColumn::Stage:
        case OpColumn::Iteration:
        case OpColumn::Order:
        case OpColumn::Op:
        case OpColumn::Type:
        case OpColumn::Tensor:
        case OpColumn::DType:
        case OpColumn::State: {
            std::vector<std::uint32_t> rank;
            if (column == OpColumn::Op || column == OpColumn::Type) {
                std::vector<StrId> ids(rows.size());
                for (std::size_t k = 0; k < rows.size(); ++k)
                    ids[k] = column == OpColumn::Op ? op(rows[k]).name : op(rows[k]).type;
                if (column == OpColumn::Op)
                    // By the short name the column shows; the scoped name breaks ties.
                    rank = stringRanks(sp, std::move(ids), [&](StrId a, StrId b) {
                        const std::string_view sa = splitOpName(sp.view(a)).shortName,
                                               sb = splitOpName(sp.view(b)).shortName;
                        return sa != sb ? sa < sb : sp.view(a) < sp.view(b);
                    });
                else
                    rank = stringRanks(sp, std::move(ids), [&](StrId a, StrId b) { return sp.view(a) < sp.view(b); });
            }
            std::vector<std::pair<std::int64_t, std::uint32_t>> keyed(rows.size());
            parallelFor(std::size_t(0), rows.size(), [&](std::size_t k) {
                const std::uint32_t t = rows[k];
                const TensorRecord& tr = ix.tensors[t];
                std::int64_t key = 0;
                switch (column) {
                    case OpColumn::Rank:
                        key = op(t).rank;
                        break;
                    case OpColumn::Stage:
                        key = ctx.stageOfOp(tr.op);
                        break;
                    case OpColumn::Iteration:
                        key = op(t).iteration;
                        break;
                    case OpColumn::Order:
                        key = tr.op;
                        break;
                    case OpColumn::Op:
                        key = rank[op(t).name];
                        break;
                    case OpColumn::Type:
                        key = rank[op(t).type];
                        break;
                    case OpColumn::Tensor:
                        key = std::int64_t(tr.io) << 16 | tr.slot;
                        break;
                    case OpColumn::DType:
                        key = int(tr.dtype);
                        break;
                    default:
                        key = int(shownState(ctx, t));
                        break;
                }
                keyed[k] = {descending ? -key : key, t};
            });
            // (key, row): ties keep index order. Rows from filterRows by rank, iteration or order
            // ascending are in order already (the table re-sorts after every filter).
            if (!std::is_sorted(keyed.begin(), keyed.end())) parallelSort(keyed.begin(), keyed.end());
            for (std::size_t k = 0; k < rows.size(); ++k) rows[k] = keyed[k].second;
            return;
        }
        case OpColumn::Shape: {
            // Lexicographic over the dims in place (DumpIndex::shape() allocates a vector).
            auto dims = [&](std::uint32_t t) {
                const TensorRecord& tr = ix.tensors[t];
                return std::span<const std::int64_t>(ix.dims.data() + tr.shapeOffset, tr.ndim);
            };
            auto less = [](std::span<const std::int64_t> x, std::span<const std::int64_t> y) {
                return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end());
            };
            parallelSort(rows.begin(), rows.end(), [&](std::uint32_t a, std::uint32_t b) {
                const auto da = dims(a), db = dims(b);
                if (descending ? less(db, da) : less(da, db)) return true;
                if (descending ? less(da, db) : less(db, da)) return false;
                return a < b;
            });
            return;
        }
        default:
            break;
    }
    // Figures, as integers in compareFigures' order: NaN (all NaN) above +Inf, -0 equal to +0;
    // descending flips the known ones; unknown figures sort last in either direction.
    constexpr std::uint64_t kUnknown = ~std::uint64_t(0), kNan = kUnknown - 1;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed(rows.size());
    parallelFor(std::size_t(0), rows.size(), [&](std::size_t k) {
        const auto x = columnFigure(ix.stats(ix.tensors[rows[k]]), column);
        std::uint64_t key = kUnknown;
        if (x) {
            if (std::isnan(*x)) {
                key = kNan;
            } else {
                const std::uint64_t bits = std::bit_cast<std::uint64_t>(*x == 0 ? 0.0 : *x);
                key = bits >> 63 ? ~bits : bits | (std::uint64_t(1) << 63);
            }
            if (descending) key = ~key;  // never kUnknown: no known figure has key 0
        }
        keyed[k] = {key, rows[k]};
    });
    if (!std::is_sorted(keyed.begin(), keyed.end())) parallelSort(keyed.begin(), keyed.end());  // ties: index order
    for (std::size_t k = 0; k < rows.size(); ++k) rows[k] = keyed[k].second;
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

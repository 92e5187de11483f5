#include "core/model/dump_index.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <string_view>
#include <tuple>

namespace dl {

const TensorSide DumpIndex::kNoSide{};

std::uint64_t DumpIndex::totalDataBytes() const {
    if (sides.empty()) return 0;  // statistics only: no tensor has data (a pass over 10M records saved)
    std::uint64_t n = 0;
    for (const auto& t : tensors) n += side(t).dataBytes;
    return n;
}

DumpIndex::Memory DumpIndex::memory() const {
    Memory m;
    m.arrays = ops.size() * sizeof(OpRecord) + tensors.size() * sizeof(TensorRecord) +
        sides.size() * sizeof(TensorSide) + dims.size() * sizeof(std::int64_t) + histBytes.size() +
        overflows.size() * sizeof(OverflowRecord) + wideStats.size() * sizeof(TensorStats);
    m.strings = strings.bytes();
    return m;
}

std::vector<std::uint32_t> DumpIndex::iterations() const {
    std::vector<std::uint32_t> its;
    for (const auto& op : ops)
        if (its.empty() || its.back() != op.iteration) its.push_back(op.iteration);
    std::sort(its.begin(), its.end());
    its.erase(std::unique(its.begin(), its.end()), its.end());
    return its;
}

std::string orderSourceEvidence(const std::vector<RankInfo>& ranks) {
    std::map<std::string, std::vector<std::uint32_t>> bySource;
    for (const RankInfo& r : ranks)
        if (r.orderSource == "execution_order" || r.orderSource == "graph_ir" || r.orderSource == "file_name")
            bySource[r.orderSource].push_back(r.rank);
    if (bySource.empty()) return {};
    std::string s = "op order without timestamps:";
    bool first = true;
    for (const auto& [source, list] : bySource) {
        s += first ? " " : "; ";
        first = false;
        s += list.size() == 1 ? "rank " : "ranks ";
        for (std::size_t i = 0; i < list.size() && i < 8; ++i) s += (i ? "," : "") + std::to_string(list[i]);
        if (list.size() > 8) s += ",...";
        s += source == "execution_order" ? " from execution_order files"
            : source == "graph_ir"
            ? " from the graph IR (graphs/*.ir)"
            : " by file name (no execution_order or graph IR: the op named may not be the first that ran)";
    }
    return s;
}

void DumpIndex::setStats(TensorRecord& t, const TensorStats& s) {
    if (!(s.negCount | s.posCount | s.satCount | s.subnormalCount)) {
        if (t.side) sides[t.side - 1].counts = PackedCounts();
        if (t.packedStats.pack(s)) return;
    } else if (t.packedStats.pack(s, &editSide(t).counts)) {
        return;
    }
    if (t.side) sides[t.side - 1].counts = PackedCounts();
    t.packedStats = PackedStats();
    t.packedStats.wide = 1;
    t.packedStats.count = std::uint32_t(wideStats.size());
    wideStats.push_back(s);
}

bool DumpIndex::histogram(const TensorRecord& t, Log2Histogram& out) const {
    if (!(t.flags & HasHistogram)) return false;
    std::size_t pos = side(t).histOffset;
    return out.decode(histBytes.data(), histBytes.size(), pos);
}

std::string DumpIndex::tensorLabel(const TensorRecord& t) const {
    const std::string positional = (t.io == Io::Input ? "input." : "output.") + std::to_string(t.slot);
    if (t.op >= ops.size() || ops[t.op].tensorNames == 0 || ops[t.op].tensorNames >= strings.size()) return positional;
    std::string_view names = strings.view(ops[t.op].tensorNames);
    const auto split = names.find('\x1e');
    if (split == std::string_view::npos) return positional;
    names = t.io == Io::Input ? names.substr(0, split) : names.substr(split + 1);
    for (std::uint32_t i = 0; i < t.slot; ++i) {  // the slot-th name
        const auto sep = names.find('\x1f');
        if (sep == std::string_view::npos) return positional;
        names.remove_prefix(sep + 1);
    }
    return std::string(names.substr(0, names.find('\x1f')));
}

namespace {

// Every string id an op holds, through `to` (merge and subset move ops between string pools).
template <class F>
void remapStrings(OpRecord& op, const F& to) {
    for (StrId* id : {&op.type, &op.name, &op.scope, &op.net, &op.stack, &op.parent, &op.tensorNames}) *id = to(*id);
}

}  // namespace

void DumpIndex::merge(DumpIndex&& other) {
    // No records yet (nothing refers to our strings): take `other` whole instead of re-interning
    // every string and copying every record, keeping what describes the folders we saw.
    const bool noRecords = ops.empty() && tensors.empty() && sides.empty() && overflows.empty() && dims.empty() &&
        histBytes.empty() && wideStats.empty();
    if (!noRecords) return merge(static_cast<const DumpIndex&>(other));
    std::string keepRoot = std::move(root);
    std::vector<IndexWarning> keepWarnings = std::move(warnings);
    std::vector<RankInfo> keepRanks = std::move(ranks);
    RunMetadata keepMeta = std::move(meta);
    *this = std::move(other);
    root = std::move(keepRoot);
    // As merge(const&): MindSpore's metadata wins, then an msprobe shard's (dumpMode only).
    if (!keepMeta.frameworkVersion.empty() || (meta.frameworkVersion.empty() && !keepMeta.dumpMode.empty()))
        meta = std::move(keepMeta);
    warnings.insert(warnings.begin(), keepWarnings.begin(), keepWarnings.end());
    for (RankInfo& r : keepRanks) {
        auto same = [&](const RankInfo& x) { return x.rank == r.rank && x.folder == r.folder; };
        if (std::none_of(ranks.begin(), ranks.end(), same)) ranks.push_back(std::move(r));
    }
}

void DumpIndex::merge(const DumpIndex& other) {
    // Grown geometrically: a caller merging many small parts (the watch, a folder at a time) would
    // otherwise copy everything merged so far at each call. One that knows the total reserves it.
    const auto room = [](auto& v, std::size_t more) {
        if (v.size() + more > v.capacity()) v.reserve(std::max(v.size() + more, 2 * v.capacity()));
    };
    room(ops, other.ops.size());
    room(tensors, other.tensors.size());
    room(sides, other.sides.size());
    std::vector<StrId> remap(other.strings.size());
    for (StrId i = 0; i < other.strings.size(); ++i) remap[i] = strings.intern(other.strings.view(i));
    const auto opBase = std::uint32_t(ops.size());
    const auto tensorBase = std::uint32_t(tensors.size());
    const auto dimBase = std::uint32_t(dims.size());
    const auto histBase = std::uint32_t(histBytes.size());
    const auto overflowBase = std::int32_t(overflows.size());
    const auto wideBase = std::uint32_t(wideStats.size());
    const auto sideBase = std::uint32_t(sides.size());
    for (OpRecord op : other.ops) {
        remapStrings(op, [&](StrId id) { return remap[id]; });
        op.firstTensor += tensorBase;
        if (op.overflow >= 0) op.overflow += overflowBase;
        ops.push_back(op);
    }
    for (TensorRecord t : other.tensors) {
        t.op += opBase;
        t.format = remap[t.format];
        t.shapeOffset += dimBase;
        if (t.side) t.side += sideBase;
        if (t.packedStats.wide) t.packedStats.count += wideBase;
        tensors.push_back(t);
    }
    for (TensorSide s : other.sides) {
        s.file = remap[s.file];
        s.histOffset += histBase;
        sides.push_back(s);
    }
    for (OverflowRecord r : other.overflows) {
        r.file = remap[r.file];
        overflows.push_back(r);
    }
    dims.insert(dims.end(), other.dims.begin(), other.dims.end());
    wideStats.insert(wideStats.end(), other.wideStats.begin(), other.wideStats.end());
    histBytes.insert(histBytes.end(), other.histBytes.begin(), other.histBytes.end());
    warnings.insert(warnings.end(), other.warnings.begin(), other.warnings.end());
    for (const auto& r : other.ranks) {
        auto same = [&](const RankInfo& x) { return x.rank == r.rank && x.folder == r.folder; };
        if (std::none_of(ranks.begin(), ranks.end(), same)) ranks.push_back(r);
    }
    // MindSpore's metadata wins; an msprobe shard's (dumpMode only) is kept against an empty one.
    if (meta.frameworkVersion.empty() && (!other.meta.frameworkVersion.empty() || meta.dumpMode.empty()))
        meta = other.meta;
}

DumpIndex DumpIndex::subset(const std::vector<std::uint32_t>& keep) const {
    DumpIndex out;
    out.root = root;
    out.ranks = ranks;
    out.meta = meta;
    constexpr StrId kUnset = 0xffffffffu;
    std::vector<StrId> remap(strings.size(), kUnset);
    const auto str = [&](StrId id) {
        if (id == 0 || id >= remap.size()) return StrId(0);
        if (remap[id] == kUnset) remap[id] = out.strings.intern(strings.view(id));
        return remap[id];
    };
    out.ops.reserve(keep.size());
    for (const std::uint32_t i : keep) {
        OpRecord op = ops[i];
        remapStrings(op, str);
        if (op.overflow >= 0 && std::size_t(op.overflow) < overflows.size()) {
            OverflowRecord r = overflows[std::size_t(op.overflow)];
            r.file = str(r.file);
            op.overflow = std::int32_t(out.overflows.size());
            out.overflows.push_back(r);
        } else {
            op.overflow = -1;
        }
        const auto opIndex = std::uint32_t(out.ops.size());
        const std::uint32_t first = op.firstTensor;
        op.firstTensor = std::uint32_t(out.tensors.size());
        for (std::uint32_t k = 0; k < op.tensorCount; ++k) {
            TensorRecord t = tensors[first + k];
            t.op = opIndex;
            t.format = str(t.format);
            const std::size_t run = std::size_t(t.ndim) + ((t.flags & DeviceFormat) ? side(t).origNdim : 0);
            const auto dimsAt = std::uint32_t(out.dims.size());
            out.dims.insert(out.dims.end(), dims.begin() + t.shapeOffset, dims.begin() + t.shapeOffset + run);
            t.shapeOffset = dimsAt;
            if (t.packedStats.wide) {
                t.packedStats.count = std::uint32_t(out.wideStats.size());
                out.wideStats.push_back(wideStats[tensors[first + k].packedStats.count]);
            }
            if (t.side) {
                TensorSide s = sides[t.side - 1];
                s.file = str(s.file);
                if (t.flags & HasHistogram) {
                    std::size_t end = s.histOffset;
                    Log2Histogram h;
                    if (h.decode(histBytes.data(), histBytes.size(), end)) {
                        const auto at = std::uint32_t(out.histBytes.size());
                        out.histBytes.insert(out.histBytes.end(), histBytes.begin() + s.histOffset,
                                             histBytes.begin() + long(end));
                        s.histOffset = at;
                    } else {
                        t.flags &= std::uint16_t(~HasHistogram);  // unreadable here as there, not another's
                        s.histOffset = 0;
                    }
                }
                out.sides.push_back(s);
                t.side = std::uint32_t(out.sides.size());
            }
            out.tensors.push_back(t);
        }
        out.ops.push_back(op);
    }
    return out;
}

void DumpIndex::shareShapes() {
    // A shape's dims run: ndim, then the original shape of a device-layout tensor.
    auto runOf = [&](const TensorRecord& t) {
        return std::size_t(t.ndim) + ((t.flags & DeviceFormat) ? side(t).origNdim : 0);
    };
    auto text = [](const std::int64_t* p, std::size_t n) {
        return std::string_view(reinterpret_cast<const char*>(p), n * sizeof(std::int64_t));
    };
    std::vector<std::int64_t> shared;
    std::vector<std::uint32_t> table(64, 0xffffffffu);  // open addressing: offset into `shared`
    std::vector<std::uint32_t> runs;                    // length of the run at each table entry
    runs.resize(table.size());
    std::size_t used = 0;
    auto grow = [&] {
        std::vector<std::uint32_t> t2(table.size() * 2, 0xffffffffu), r2(t2.size());
        for (std::size_t i = 0; i < table.size(); ++i) {
            if (table[i] == 0xffffffffu) continue;
            std::size_t j = std::hash<std::string_view>{}(text(shared.data() + table[i], runs[i])) & (t2.size() - 1);
            while (t2[j] != 0xffffffffu) j = (j + 1) & (t2.size() - 1);
            t2[j] = table[i];
            r2[j] = runs[i];
        }
        table.swap(t2);
        runs.swap(r2);
    };
    for (TensorRecord& t : tensors) {
        const std::size_t n = runOf(t);
        if (n == 0) {
            t.shapeOffset = 0;
            continue;
        }
        const std::string_view key = text(dims.data() + t.shapeOffset, n);
        const std::size_t mask = table.size() - 1;
        std::size_t i = std::hash<std::string_view>{}(key)&mask;
        for (; table[i] != 0xffffffffu; i = (i + 1) & mask)
            if (runs[i] == n && text(shared.data() + table[i], n) == key) break;
        if (table[i] == 0xffffffffu) {
            table[i] = std::uint32_t(shared.size());
            runs[i] = std::uint32_t(n);
            shared.insert(shared.end(), dims.begin() + t.shapeOffset, dims.begin() + t.shapeOffset + n);
            if (++used * 2 > table.size()) {
                t.shapeOffset = std::uint32_t(shared.size() - n);
                grow();
                continue;
            }
        }
        t.shapeOffset = table[i];
    }
    shared.shrink_to_fit();
    dims = std::move(shared);
}

void DumpIndex::release() {
    DumpIndex gone = std::move(*this);  // move construction takes the buffers; `gone` frees them
    *this = DumpIndex();
}

void DumpIndex::finalize() {
    if (!tensors.empty() && dims.size() >= tensors.size()) shareShapes();
    auto opKey = [](const OpRecord& o) {
        return std::tuple(o.rank, o.iteration, o.graph, o.execPos, o.startUs, o.taskId);
    };
    const auto tensorKey = [](const TensorRecord& a, const TensorRecord& b) {
        return std::tuple(a.io, a.slot) < std::tuple(b.io, b.slot);
    };
    // Already in order (one shard, written in execution order): sort each op's tensors in place
    // rather than copying every record into new arrays.
    bool packed = true;  // each op's tensors follow the previous op's
    for (std::size_t i = 0, next = 0; i < ops.size() && packed; next += ops[i].tensorCount, ++i)
        packed = ops[i].firstTensor == next;
    if (packed && std::is_sorted(ops.begin(), ops.end(), [&](const OpRecord& a, const OpRecord& b) {
            return opKey(a) < opKey(b);
        })) {
        for (const OpRecord& op : ops) {
            const auto first = tensors.begin() + op.firstTensor, last = first + op.tensorCount;
            if (!std::is_sorted(first, last, tensorKey)) std::stable_sort(first, last, tensorKey);
        }
        std::sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
        return;
    }
    std::vector<std::uint32_t> order(ops.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return opKey(ops[a]) < opKey(ops[b]); });
    decltype(ops) sortedOps;
    sortedOps.reserve(ops.size());
    decltype(tensors) sortedTensors;
    sortedTensors.reserve(tensors.size());
    for (std::uint32_t oldIdx : order) {
        OpRecord op = ops[oldIdx];
        const auto newIdx = std::uint32_t(sortedOps.size());
        const auto first = std::uint32_t(sortedTensors.size());
        for (std::uint32_t k = 0; k < op.tensorCount; ++k) {
            TensorRecord t = tensors[op.firstTensor + k];
            t.op = newIdx;
            sortedTensors.push_back(t);
        }
        std::stable_sort(sortedTensors.begin() + first, sortedTensors.end(), tensorKey);
        op.firstTensor = first;
        sortedOps.push_back(op);
    }
    ops = std::move(sortedOps);
    tensors = std::move(sortedTensors);
    std::sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
}

}  // namespace dl

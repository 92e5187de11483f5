#pragma once
// Hand-built DumpIndex objects for the analysis tests: ops are appended in index order
// (rank, iteration, graph, execPos), each with its tensor run.
#include <cstdint>
#include <string>
#include <vector>

#include "core/io/npy_writer.h"
#include "core/model/dump_index.h"
#include "core/util/half.h"

namespace dltest {

// Full statistics as the kernel computes them from data.
inline dl::TensorStats dataStats(double maxAbs, std::uint64_t inf = 0, std::uint64_t nan = 0, std::uint64_t sat = 0,
                                 std::uint64_t count = 100) {
    dl::TensorStats s;
    s.min = -maxAbs;
    s.max = maxAbs;
    s.maxAbs = maxAbs;
    s.mean = 0;
    s.l2 = maxAbs;
    s.count = count;
    s.posInfCount = inf;
    s.nanCount = nan;
    s.satCount = sat;
    s.known = dl::stat::AllFromData & ~dl::stat::Histogram;
    return s;
}

// statistic.csv row: min/max only.
inline dl::TensorStats csvStats(double min, double max) {
    dl::TensorStats s;
    s.min = min;
    s.max = max;
    s.known = dl::stat::Min | dl::stat::Max;
    return s;
}

struct T {
    dl::Io io = dl::Io::Output;
    std::uint16_t slot = 0;
    dl::DType dtype = dl::DType::Float16;
    std::vector<std::int64_t> shape{10, 10};
    dl::TensorStats stats = dataStats(1.0);
    std::string file;  // relative to root; "" stats-only
};
// A [4, 8] fp16 tensor of the given role and statistics (slot 0).
inline T tensor(dl::Io io, dl::TensorStats s = dataStats(2.0)) {
    T t;
    t.io = io;
    t.shape = {4, 8};
    t.stats = s;
    return t;
}
inline T in(std::uint16_t slot, dl::TensorStats s, dl::DType d = dl::DType::Float16) {
    return {dl::Io::Input, slot, d, {10, 10}, s, ""};
}
inline T out(std::uint16_t slot, dl::TensorStats s, dl::DType d = dl::DType::Float16) {
    return {dl::Io::Output, slot, d, {10, 10}, s, ""};
}

struct IndexBuilder {
    dl::DumpIndex idx;
    std::uint32_t execPos = 0;

    std::uint32_t op(std::uint32_t rank, std::uint32_t iter, const std::string& type, const std::string& name,
                     const std::vector<T>& tensors, std::int64_t ts = 0, const std::string& scope = "") {
        dl::OpRecord o;
        o.type = idx.strings.intern(type);
        o.name = idx.strings.intern(name);
        o.scope = scope.empty() ? 0 : idx.strings.intern(scope);
        o.rank = rank;
        o.iteration = iter;
        o.execPos = execPos++;
        o.startUs = o.endUs = ts;
        o.firstTensor = std::uint32_t(idx.tensors.size());
        o.tensorCount = std::uint32_t(tensors.size());
        const auto opIndex = std::uint32_t(idx.ops.size());
        for (const T& t : tensors) {
            dl::TensorRecord r;
            r.op = opIndex;
            r.io = t.io;
            r.slot = t.slot;
            r.dtype = t.dtype;
            r.ndim = std::uint8_t(t.shape.size());
            r.shapeOffset = std::uint32_t(idx.dims.size());
            idx.dims.insert(idx.dims.end(), t.shape.begin(), t.shape.end());
            idx.setStats(r, t.stats);
            r.timestampUs = ts;
            if (!t.file.empty()) {
                idx.editSide(r).file = idx.strings.intern(t.file);
                r.flags |= dl::HasData;
                idx.editSide(r).dataBytes = 1;
            }
            idx.tensors.push_back(r);
        }
        idx.ops.push_back(o);
        bool known = false;
        for (const auto& rk : idx.ranks) known |= rk.rank == rank;
        if (!known) idx.ranks.push_back({rank, "rank_" + std::to_string(rank), dl::DumpFormat::MindSporeNpy, "", ""});
        return opIndex;
    }

    void opdebug(std::uint32_t op, std::uint64_t aicore, std::int64_t ts = 0) {
        dl::OverflowRecord r;
        r.aicoreStatus = aicore;
        r.timestampUs = ts;
        idx.ops[op].overflow = std::int32_t(idx.overflows.size());
        idx.overflows.push_back(r);
    }
};

// Writes values as an fp16/fp32 .npy under dir/name; returns the name (relative path).
inline std::string writeNpy(const std::string& dir, const std::string& name, dl::DType d,
                            const std::vector<std::int64_t>& shape, const std::vector<float>& values) {
    std::string bytes, error;
    if (!dl::encodeFloats(values, d, bytes, error) || !dl::writeNpyFile(dir + "/" + name, d, shape, bytes, error))
        throw std::runtime_error(error);
    return name;
}

}  // namespace dltest

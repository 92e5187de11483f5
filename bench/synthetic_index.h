#pragma once
// A synthetic index of MatMul ops (one input, one output each) for benchmarks that need a large
// index without writing a dump: cache reopening, merging, analysis, rendering.
#include <string>

#include "core/model/dump_index.h"

namespace dl {

// `tensors` tensors on `ranks` ranks; `firstRank` offsets the rank numbers (for shards).
inline DumpIndex syntheticIndex(std::size_t tensors, std::uint32_t ranks = 8, std::uint32_t firstRank = 0) {
    DumpIndex idx;
    idx.root = "/synthetic";
    Log2Histogram h;
    for (int e = -10; e < 12; ++e) h.exp[std::size_t(Log2Histogram::binOf(e))] = 1000u + std::uint64_t(e * e);
    std::vector<std::uint8_t> hist;
    h.encode(hist);
    for (std::size_t i = 0; i < tensors; i += 2) {
        OpRecord op;
        op.type = idx.strings.intern("MatMul");
        op.name = idx.strings.intern("MatMul-op" + std::to_string(i / 2));
        op.rank = firstRank + std::uint32_t((i / 2) % ranks);
        op.execPos = std::uint32_t(i / 2);
        op.startUs = 1700000000000000 + std::int64_t(i);
        op.endUs = op.startUs + 1;
        op.firstTensor = std::uint32_t(i);
        op.tensorCount = 2;
        idx.ops.push_back(op);
        for (int k = 0; k < 2; ++k) {
            TensorRecord t;
            t.op = std::uint32_t(idx.ops.size() - 1);
            t.io = k ? Io::Output : Io::Input;
            t.dtype = t.origDtype = DType::Float16;
            idx.editSide(t).file = idx.strings.intern(
                "rank_" + std::to_string(op.rank) + "/Net/0/0/MatMul.MatMul-op" + std::to_string(i / 2) + ".1.2.17" +
                (k ? ".output.0.DefaultFormat.npy" : ".input.0.DefaultFormat.npy"));
            t.shapeOffset = std::uint32_t(idx.dims.size());
            t.ndim = 2;
            idx.dims.push_back(64);
            idx.dims.push_back(64);
            idx.editSide(t).histOffset = std::uint32_t(idx.histBytes.size());
            idx.histBytes.insert(idx.histBytes.end(), hist.begin(), hist.end());
            t.flags = HasData | HasHistogram;
            TensorStats s;
            s.max = double(i % 60000);
            s.min = -s.max / 2;
            s.maxAbs = s.max;
            s.known = stat::AllFromData;
            idx.setStats(t, s);
            idx.tensors.push_back(t);
        }
    }
    for (std::uint32_t r = 0; r < ranks; ++r)
        idx.ranks.push_back({firstRank + r, "rank_" + std::to_string(firstRank + r)});
    return idx;
}

}  // namespace dl

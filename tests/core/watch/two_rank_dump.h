#pragma once
// A small two-rank MindSpore dump whose first overflow sits on the rank that lands last:
// rank_0 overflows in iteration 2, rank_1 already in iteration 1 (Mul-op2's output holds an Inf
// there; every other tensor is finite). Four iterations of Add-op1 -> Mul-op2 per rank.
#include <limits>
#include <string>
#include <vector>

#include "core/io/npy_writer.h"

namespace dltest {

struct DumpFile {
    std::string rel, bytes;
};

inline std::string fp16Npy(const std::vector<float>& values) {
    std::string payload, error;
    dl::encodeFloats(values, dl::DType::Float16, payload, error);
    return dl::makeNpyHeader("<f2", {std::int64_t(values.size())}) + payload;
}

// The files of one rank in the order its job writes them.
inline std::vector<DumpFile> rankFiles(int rank, int badIteration) {
    std::vector<DumpFile> out;
    const float inf = std::numeric_limits<float>::infinity();
    long long ts = 1700000000000000LL + 1000000LL * rank;
    const auto name = [&](int it, const char* type, const char* op, const char* io) {
        return "rank_" + std::to_string(rank) + "/Net/0/" + std::to_string(it) + "/" + type + "." + op + ".0.0." +
            std::to_string(ts++) + "." + io + ".0.DefaultFormat.npy";
    };
    for (int it = 0; it < 4; ++it) {
        out.push_back({name(it, "Add", "Add-op1", "input"), fp16Npy({1, 2, 3, 4})});
        out.push_back({name(it, "Add", "Add-op1", "output"), fp16Npy({2, 4, 6, 8})});
        out.push_back({name(it, "Mul", "Mul-op2", "input"), fp16Npy({2, 4, 6, 8})});
        out.push_back({name(it, "Mul", "Mul-op2", "output"), fp16Npy({4, it == badIteration ? inf : 16, 36, 64})});
    }
    return out;
}

inline constexpr int kEarlyRankBadIteration = 2, kLateRankBadIteration = 1;

}  // namespace dltest

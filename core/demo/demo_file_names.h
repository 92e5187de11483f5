#pragma once
// What MindSpore writes on disk for a simulated tensor, shared by the demo writers.
#include <string>

#include "core/util/dtype.h"

namespace dl::demo {

// 2.3+ file names: the full scoped name with '/', '\\', '.', ' ' replaced by '_'.
inline std::string fileKernelName(const std::string& fullName) {
    std::string s = fullName;
    for (auto& c : s)
        if (c == '/' || c == '\\' || c == '.' || c == ' ') c = '_';
    return s;
}

// MindSpore writes bf16 tensors as float32 payloads (docs/formats.md).
inline DType storedType(DType t) { return t == DType::BFloat16 ? DType::Float32 : t; }

}  // namespace dl::demo

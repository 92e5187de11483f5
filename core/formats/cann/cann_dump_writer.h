#pragma once
// Writes raw CANN dump files (docs/formats.md 2) for tests, benchmarks and fuzz corpora, with the
// exact DumpData field numbers (OpInput size/original_shape/sub_format = 5/6/7, OpOutput 6/7/8).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/dump_format.h"

namespace dl {

struct CannTensorSpec {
    Io io = Io::Output;
    std::uint32_t dataType = 1;        // OutputDataType enum (1 DT_FLOAT, 2 DT_FLOAT16, 27 DT_BF16 ...)
    std::uint32_t format = 2;          // OutputFormat enum (2 ND, 3 NC1HWC0, 4 FRACTAL_Z, 29 FRACTAL_NZ)
    std::vector<std::uint64_t> shape;  // device shape
    std::vector<std::uint64_t> originalShape;
    std::string payload;         // raw element bytes
    bool packedDims = true;      // proto3 packed Shape.dim (false: one varint field per dim)
    std::string originalOpName;  // outputs only
};

// The whole file: u64 header length, DumpData, then input, output and buffer payloads.
std::string buildCannDumpFile(const std::vector<CannTensorSpec>& tensors, std::string_view opName,
                              std::uint64_t dumpTime = 0, const std::vector<std::string>& buffers = {});

}  // namespace dl

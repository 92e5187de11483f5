#pragma once
// Writing .npy files exactly as MindSpore's GenerateNpyHeader does (docs/formats.md 1.5): v1.0 header,
// dict `{'descr': '<f2', 'fortran_order': False, 'shape': (2,3,), }`, space padding to a multiple
// of 64 bytes, C order, little endian. Used by the demo writer and by tests that need fixtures.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/dtype.h"

namespace dl {

// MindSpore's descr for a stored element type ("<f2", "|b1", "<i4", ...). `bf16Descr` is what
// the writer era uses for bfloat16 ("<h2" 2.2, "<T2" 2.3, "<E2" 2.4+). Empty for Unknown/Int4/UInt1.
std::string npyDescr(DType dtype, std::string_view bf16Descr = "<E2");

// The full header bytes (magic, version, length, dict, padding, '\n'); its size is a multiple of 64.
std::string makeNpyHeader(std::string_view descr, const std::vector<std::int64_t>& shape);

// Converts float values to the little-endian bytes of `dtype` (values are rounded the way the
// hardware stores them: fp16/bf16 round to nearest even, ints truncate toward zero).
bool encodeFloats(const std::vector<float>& values, DType dtype, std::string& bytes, std::string& error);

// Writes header + payload. `payload` must hold exactly prod(shape) * dtypeSize(dtype) bytes.
bool writeNpyFile(const std::string& path, DType dtype, const std::vector<std::int64_t>& shape,
                  std::string_view payload, std::string& error, std::string_view bf16Descr = "<E2");

}  // namespace dl

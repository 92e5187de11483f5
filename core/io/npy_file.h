#pragma once
// Reading .npy files: v1/v2/v3 headers, every dtype a dump holds (bf16 under all its descrs),
// either byte order, Fortran order, scalars and empty tensors.
#include <cstdint>
#include <string>
#include <vector>

#include "core/util/dtype.h"

namespace dl {

struct NpyHeader {
    std::string descr;  // as written: "<f2", "|b1", "<E2", "bfloat16", ...
    DType dtype = DType::Unknown;
    bool fortranOrder = false;
    bool bigEndian = false;
    std::vector<std::int64_t> shape;  // () for scalars
    std::uint64_t dataOffset = 0;     // first payload byte
    std::uint64_t elementCount = 1;
    std::uint64_t dataBytes = 0;  // elementCount * dtypeSize(dtype)
};

// Parses the header at the start of `data`. `size` is how many bytes are available; the header
// is validated against it (a header claiming more than is there fails with a reason).
// `fileSize` is the full file size, used to check the payload is complete.
// `dtypeHint` (from the file name, dump.json ...) resolves ambiguous 2-byte void descrs to bf16.
bool parseNpyHeader(const std::uint8_t* data, std::size_t size, std::uint64_t fileSize, NpyHeader& out,
                    std::string& error, DType dtypeHint = DType::Unknown);
bool readNpyHeader(const std::string& path, NpyHeader& out, std::string& error, DType dtypeHint = DType::Unknown);

// Loads a tensor payload (npy or any raw file region) converted to float, in logical C order
// (Fortran-ordered arrays are transposed). For replay and comparison, not for statistics.
bool loadTensorAsFloat(const std::string& path, std::uint64_t dataOffset, std::uint64_t elementCount, DType dtype,
                       bool bigEndian, std::vector<float>& out, std::string& error);
bool loadNpyAsFloat(const std::string& path, std::vector<float>& out, NpyHeader& header, std::string& error,
                    DType dtypeHint = DType::Unknown);

}  // namespace dl

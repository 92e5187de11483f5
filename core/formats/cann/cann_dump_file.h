#pragma once
// Raw CANN dump files ("big dump data", docs/formats.md 2): u64 header length, protobuf DumpData,
// then the input, output, buffer and workspace payloads back to back. One file = one op execution.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/dump_format.h"
#include "core/util/dtype.h"

namespace dl {

struct CannTensor {
    Io io = Io::Output;
    std::uint16_t slot = 0;
    std::uint32_t dataTypeEnum = 0;           // OutputDataType value as written
    DType dtype = DType::Unknown;             // Unknown for types without statistics (string, complex q-types)
    bool packed = false;                      // DT_INT4 (2 per byte) / DT_UINT1 (8 per byte) / DT_INT2 / DT_UINT2
    std::uint32_t formatEnum = 0;             // OutputFormat value
    std::string format;                       // "NC1HWC0", "FRACTAL_NZ", "ND", ... ("FORMAT_<n>" when unknown)
    std::vector<std::int64_t> shape;          // device (stored) shape; -1 for a dim written as >= 2^63
    std::vector<std::int64_t> originalShape;  // host/logical shape; empty when absent or dynamic
    std::int32_t subFormat = 0;
    std::string originalOpName;  // OpOutput.original_op.name (fused graphs)
    std::uint64_t size = 0;      // payload bytes
    std::uint64_t offset = 0;    // first payload byte in the file
};

struct CannBlock {  // OpBuffer / Workspace: kept for display only
    std::uint32_t type = 0;
    std::uint64_t size = 0;
    std::uint64_t offset = 0;
};

struct CannDumpHeader {
    std::string version;
    std::uint64_t dumpTime = 0;
    std::string opName;
    std::vector<CannTensor> inputs, outputs;
    std::vector<CannBlock> buffers, workspaces;
    std::uint64_t headerLen = 0;
    std::uint64_t payloadEnd = 0;  // 8 + headerLen + all payload sizes
};

// `data` must hold at least the 8-byte length and the header (`size` bytes available); payload
// bytes need not be present. Checks that the payloads fit `fileSize`; bytes after them are
// tolerated (payloadEnd < fileSize) and left to the caller to report.
bool parseCannDumpHeader(const std::uint8_t* data, std::size_t size, std::uint64_t fileSize, CannDumpHeader& out,
                         std::string& error);
// Reads just the header from a file (two small reads).
bool readCannDumpHeader(const std::string& path, CannDumpHeader& out, std::string& error);

// Enum names and element types of docs/formats.md 2.2.
std::string cannFormatName(std::uint32_t value);
// `packed` is set for sub-byte types. Unknown for types that hold no numbers DumpLens can summarise.
DType cannDataType(std::uint32_t value, bool& packed);
std::string_view cannDataTypeName(std::uint32_t value);  // "DT_FLOAT16", ... "" when unknown

// Quick test used by the format detection: an 8-byte length that fits the file and a header that
// parses as DumpData with at least one tensor or an op name.
bool looksLikeCannDump(const std::uint8_t* data, std::size_t size, std::uint64_t fileSize);

}  // namespace dl

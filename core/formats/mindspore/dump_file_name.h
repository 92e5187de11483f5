#pragma once
// Parses the name of one file found in a dump folder (MindSpore, CANN, A+M, msaccucmp, Opdebug,
// <=1.2 .bin) into its fields. Pure function over the name; no file system access.
// Grammar and version history: docs/formats.md sections 1.3, 1.4, 1.12, 2.3, 2.4, 5.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/dump_format.h"
#include "core/util/dtype.h"

namespace dl {

enum class DumpFileKind : std::uint8_t {
    Unknown = 0,   // not a dump file name; `reason` says why
    MindSporeNpy,  // {type}.{name}.{task}.{stream}.{ts}.{io}.{slot}.{format}[.{dtype}].npy (1.3+, A+M, msprobe L2)
    ConvertedNpy,  // msaccucmp: {raw name}.{io}.{slot}[.{d0}x{d1}...].npy (shape instead of format)
    NamedRaw,      // the MindSporeNpy grammar without ".npy": raw bytes (msprobe L2 bin / bf16 / int4)
    CannRaw,       // {type}.{name}.{task}.{stream}.{ts} (4 fields, no stream, in <=1.2)
    OpdebugRaw,    // Opdebug.Node_OpDebug.{task}.{stream}.{ts}
    OpdebugJson,   // Opdebug.Node_OpDebug.{task}.{stream}.{ts}.output.{slot}.json
    OpdebugNpy,    // Opdebug...{io}.{slot}...npy written by msaccucmp (content unverified)
    MindSporeBin,  // <=1.2 sync: {name}_{input|output}_{i}_shape_{dims}_{DType}_{format}.bin
    Mapped,        // all-digit name: the real name is in mapping.csv of the same folder
};

std::string_view dumpFileKindName(DumpFileKind k);

struct DumpFileName {
    DumpFileKind kind = DumpFileKind::Unknown;
    std::string opType;  // "Conv2D"; "Parameter" for <=1.2 .bin parameters (no -opN suffix)
    std::string opName;  // as written in the name ("Conv2D-op12", "conv1.weight", scoped 2.3+ form)
    std::uint32_t taskId = 0;
    std::uint32_t streamId = 0;
    std::int64_t timestampUs = 0;
    bool hasIds = false;           // task/stream/timestamp were in the name (not for .bin)
    bool hasStream = false;        // false for 4-field <=1.2 CANN names
    bool typeNameSwapped = false;  // aclnn {op_name}.{op_type}... detected and undone
    bool hasIo = false;            // io/slot are meaningful (tensor files, Opdebug json)
    Io io = Io::Output;
    std::uint16_t slot = 0;
    std::string format;               // "DefaultFormat", "ND", "FRACTAL_NZ"; empty when absent
    DType dtype = DType::Unknown;     // from the dtype field (2.4+, msprobe) or the .bin DType
    std::string dtypeRaw;             // the dtype text exactly as written ("float16", "BF16", "kNumberTypeFloat32", "")
    bool hasShape = false;            // the name encodes a shape (.bin, msaccucmp)
    std::vector<std::int64_t> shape;  // .bin "shape_0" is reported as a scalar: {}
    std::string mappedKey;            // Mapped: the digits to look up in mapping.csv
    std::string reason;               // why kind is Unknown
};

// Never throws. Returns false (kind Unknown, reason set) when the name is not a dump file.
bool parseDumpFileName(std::string_view fileName, DumpFileName& out);

// <=1.2 .bin names encode the scope with "--": "Default--net--Conv2D-op1" -> "Default/net/Conv2D-op1".
std::string binNameToScope(std::string_view binOpName);

}  // namespace dl

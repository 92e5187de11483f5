#pragma once
// Ascend overflow records (Opdebug.Node_OpDebug.*): the JSON written by MindSpore A+M, msprobe or
// CANN msaccucmp, and the raw CANN file whose payload is the 1048-byte block table of docs/formats.md 1.12.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dl {

struct OpdebugBlock {
    bool present = false;  // the block was in the JSON (always true for a decoded payload)
    std::uint64_t modelId = 0;
    std::uint64_t streamId = 0;
    std::uint64_t taskId = 0;
    std::uint64_t taskType = 0;
    std::uint64_t pcStart = 0;
    std::uint64_t paraBase = 0;
    std::uint64_t status = 0;
};

struct OpdebugRecord {
    OpdebugBlock dhaAtomic;        // "DHA Atomic Add"
    OpdebugBlock l2Atomic;         // "L2 Atomic Add"
    OpdebugBlock aiCore;           // "AI Core"
    std::uint64_t kernelCode = 0;  // AI Core only
    std::uint64_t blockIdx = 0;    // "block_idx" (MindSpore/msprobe) or "block_id" (msaccucmp)
};

// JSON from any of the three writers: keys in any order, hex strings in either case ("0x1A" /
// "0x1a"), numbers as JSON integers or decimal strings; extra keys ignored. Missing blocks stay
// absent; a document with none of the three blocks fails.
bool parseOpdebugJson(std::string_view text, OpdebugRecord& out, std::string& error);

// The 1048-byte (or longer) payload: 6 x u64 info per block at 0/128/256, statuses at 512/768,
// AI Core kernel_code/block_idx/status at 1024. Little-endian.
bool decodeOpdebugPayload(const std::uint8_t* data, std::size_t size, OpdebugRecord& out, std::string& error);

// A whole raw Opdebug file: u64 header length, protobuf DumpData header, then the payload. The
// header is walked to skip any input data before output[0]; a header it cannot walk makes it
// fall back to the bytes right after the header.
bool decodeOpdebugFile(const std::uint8_t* data, std::size_t size, OpdebugRecord& out, std::string& error);
bool readOpdebugFile(const std::string& path, OpdebugRecord& out, std::string& error);  // .json or raw

enum class OverflowBlock : std::uint8_t { None = 0, AiCore, DhaAtomic, L2Atomic };
std::string_view overflowBlockName(OverflowBlock b);  // "AI Core", "DHA Atomic Add", ...

// Which block reports the overflow and the ids to match against the op dump files'
// {task_id}.{stream_id} in the same iteration folder (docs/formats.md 1.12: prefer these over the
// Opdebug file name's ids). AI Core wins when its status is non-zero, else the first Atomic block
// with a non-zero status; None when every status is 0.
struct OverflowCulprit {
    OverflowBlock block = OverflowBlock::None;
    std::uint32_t taskId = 0;
    std::uint32_t streamId = 0;
    std::uint32_t modelId = 0;
    std::uint64_t status = 0;
};
OverflowCulprit overflowCulprit(const OpdebugRecord& r);

// Human words for the status bits of a block, one entry per set bit (unknown bits as "bit 0x..").
std::vector<std::string> describeAiCoreStatus(std::uint64_t status);
std::vector<std::string> describeAtomicStatus(std::uint64_t status);
// One line for the culprit: "AI Core task 57 stream 563: floating-point overflow (0x20)".
std::string describeOverflow(const OpdebugRecord& r);

namespace opdebug {
constexpr std::uint64_t kSignedIntMinNegation = 0x8;
constexpr std::uint64_t kIntegerOverflow = 0x10;
constexpr std::uint64_t kFloatOverflow = 0x20;
constexpr std::uint64_t kNegativeFloatToUnsigned = 0x80;
constexpr std::uint64_t kFp32ToFp16Overflow = 0x100;
constexpr std::uint64_t kCubeAccumulationOverflow = 0x400;
constexpr std::size_t kPayloadSize = 1048;
}  // namespace opdebug

}  // namespace dl

#include "core/formats/cann/opdebug_record.h"

#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/io/json_number.h"

namespace dl {
namespace {

using nlohmann::json;

bool readBlock(const json& doc, const char* name, OpdebugBlock& b, std::string& error) {
    auto it = doc.find(name);
    if (it == doc.end()) return true;
    if (!it->is_object()) {
        error = fmt::format("\"{}\" is not an object", name);
        return false;
    }
    struct Field {
        const char* key;
        std::uint64_t* dst;
    };
    const Field fields[] = {{"model_id", &b.modelId},   {"stream_id", &b.streamId}, {"task_id", &b.taskId},
                            {"task_type", &b.taskType}, {"pc_start", &b.pcStart},   {"para_base", &b.paraBase},
                            {"status", &b.status}};
    for (const Field& f : fields) {
        auto v = it->find(f.key);
        if (v == it->end()) continue;  // msaccucmp variants omit some keys
        if (!jsonUnsigned(*v, *f.dst, true)) {
            error = fmt::format("\"{}\".{} is not an unsigned number", name, f.key);
            return false;
        }
    }
    b.present = true;
    return true;
}

std::uint64_t le64(const std::uint8_t* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

void readInfo(const std::uint8_t* p, OpdebugBlock& b) {
    b.present = true;
    b.modelId = le64(p);
    b.streamId = le64(p + 8);
    b.taskId = le64(p + 16);
    b.taskType = le64(p + 24);
    b.pcStart = le64(p + 32);
    b.paraBase = le64(p + 40);
}

// Minimal protobuf walk of DumpData: sums input[].size (field 4 -> 5) so output[0] is found.
struct ProtoReader {
    const std::uint8_t* p;
    const std::uint8_t* end;
    bool varint(std::uint64_t& v) {
        v = 0;
        for (int shift = 0; shift < 64 && p < end; shift += 7) {
            std::uint8_t b = *p++;
            v |= std::uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) return true;
        }
        return false;
    }
    bool skip(std::uint32_t wire) {
        std::uint64_t n = 0;
        switch (wire) {
            case 0:
                return varint(n);
            case 1:
                if (end - p < 8) return false;
                p += 8;
                return true;
            case 5:
                if (end - p < 4) return false;
                p += 4;
                return true;
            case 2:
                if (!varint(n) || n > std::uint64_t(end - p)) return false;
                p += n;
                return true;
            default:
                return false;
        }
    }
};

// Returns the `size` field (number `sizeField`) of an OpInput/OpOutput sub-message.
bool subMessageSize(const std::uint8_t* p, const std::uint8_t* end, std::uint32_t sizeField, std::uint64_t& size) {
    ProtoReader r{p, end};
    size = 0;
    while (r.p < r.end) {
        std::uint64_t key = 0;
        if (!r.varint(key)) return false;
        if ((key >> 3) == sizeField && (key & 7) == 0) {
            if (!r.varint(size)) return false;
        } else if (!r.skip(std::uint32_t(key & 7)))
            return false;
    }
    return true;
}

bool inputBytes(const std::uint8_t* p, std::size_t n, std::uint64_t& total) {
    ProtoReader r{p, p + n};
    total = 0;
    while (r.p < r.end) {
        std::uint64_t key = 0, len = 0;
        if (!r.varint(key)) return false;
        if ((key >> 3) == 4 && (key & 7) == 2) {  // OpInput, size = field 5
            if (!r.varint(len) || len > std::uint64_t(r.end - r.p)) return false;
            std::uint64_t sz = 0;
            if (!subMessageSize(r.p, r.p + len, 5, sz)) return false;
            if (sz > std::numeric_limits<std::uint64_t>::max() - total) return false;
            total += sz;
            r.p += len;
        } else if (!r.skip(std::uint32_t(key & 7))) {
            return false;
        }
    }
    return true;
}

}  // namespace

bool parseOpdebugJson(std::string_view text, OpdebugRecord& out, std::string& error) {
    out = OpdebugRecord{};
    json doc = json::parse(text.begin(), text.end(), nullptr, false);
    if (doc.is_discarded()) {
        error = "Opdebug json: not valid JSON";
        return false;
    }
    if (!doc.is_object()) {
        error = "Opdebug json: top level is not an object";
        return false;
    }
    try {
        if (!readBlock(doc, "DHA Atomic Add", out.dhaAtomic, error) ||
            !readBlock(doc, "L2 Atomic Add", out.l2Atomic, error) || !readBlock(doc, "AI Core", out.aiCore, error)) {
            error = "Opdebug json: " + error;
            return false;
        }
        if (auto ai = doc.find("AI Core"); ai != doc.end()) {
            for (const char* k : {"block_idx", "block_id"})
                if (auto v = ai->find(k); v != ai->end() && !jsonUnsigned(*v, out.blockIdx, true)) {
                    error = std::string("Opdebug json: \"AI Core\".") + k + " is not an unsigned number";
                    return false;
                }
            if (auto v = ai->find("kernel_code"); v != ai->end() && !jsonUnsigned(*v, out.kernelCode, true)) {
                error = "Opdebug json: \"AI Core\".kernel_code is not an unsigned number";
                return false;
            }
        }
    } catch (const json::exception& e) {
        error = std::string("Opdebug json: ") + e.what();
        return false;
    }
    if (!out.aiCore.present && !out.dhaAtomic.present && !out.l2Atomic.present) {
        error = "Opdebug json: none of \"AI Core\", \"DHA Atomic Add\", \"L2 Atomic Add\"";
        return false;
    }
    return true;
}

bool decodeOpdebugPayload(const std::uint8_t* data, std::size_t size, OpdebugRecord& out, std::string& error) {
    out = OpdebugRecord{};
    if (!data || size < opdebug::kPayloadSize) {
        error =
            fmt::format("Opdebug payload is {} bytes, expected at least {}", data ? size : 0, opdebug::kPayloadSize);
        return false;
    }
    readInfo(data + 0, out.dhaAtomic);
    readInfo(data + 128, out.l2Atomic);
    readInfo(data + 256, out.aiCore);
    out.dhaAtomic.status = le64(data + 512);
    out.l2Atomic.status = le64(data + 768);
    out.kernelCode = le64(data + 1024);
    out.blockIdx = le64(data + 1032);
    out.aiCore.status = le64(data + 1040);
    return true;
}

bool decodeOpdebugFile(const std::uint8_t* data, std::size_t size, OpdebugRecord& out, std::string& error) {
    if (!data || size < 8) {
        error = "Opdebug file shorter than its 8-byte header length";
        return false;
    }
    const std::uint64_t headerLen = le64(data);
    if (headerLen > size - 8) {
        error = fmt::format("Opdebug file: header length {} exceeds the {} bytes present", headerLen, size - 8);
        return false;
    }
    std::uint64_t offset = 8 + headerLen, skip = 0;
    if (inputBytes(data + 8, std::size_t(headerLen), skip) && skip <= size - offset) offset += skip;
    return decodeOpdebugPayload(data + offset, std::size_t(size - offset), out, error);
}

bool readOpdebugFile(const std::string& path, OpdebugRecord& out, std::string& error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "cannot open " + path;
        return false;
    }
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bool ok = path.ends_with(".json")
        ? parseOpdebugJson(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), out, error)
        : decodeOpdebugFile(bytes.data(), bytes.size(), out, error);
    if (!ok) error = path + ": " + error;
    return ok;
}

std::string_view overflowBlockName(OverflowBlock b) {
    switch (b) {
        case OverflowBlock::None:
            return "none";
        case OverflowBlock::AiCore:
            return "AI Core";
        case OverflowBlock::DhaAtomic:
            return "DHA Atomic Add";
        case OverflowBlock::L2Atomic:
            return "L2 Atomic Add";
    }
    return "none";
}

OverflowCulprit overflowCulprit(const OpdebugRecord& r) {
    OverflowCulprit c;
    auto take = [&](OverflowBlock which, const OpdebugBlock& b) {
        c.block = which;
        c.taskId = std::uint32_t(b.taskId);
        c.streamId = std::uint32_t(b.streamId);
        c.modelId = std::uint32_t(b.modelId);
        c.status = b.status;
    };
    if (r.aiCore.status != 0)
        take(OverflowBlock::AiCore, r.aiCore);
    else if (r.dhaAtomic.status != 0)
        take(OverflowBlock::DhaAtomic, r.dhaAtomic);
    else if (r.l2Atomic.status != 0)
        take(OverflowBlock::L2Atomic, r.l2Atomic);
    return c;
}

std::vector<std::string> describeAiCoreStatus(std::uint64_t status) {
    struct Bit {
        std::uint64_t bit;
        const char* words;
    };
    static constexpr Bit bits[] = {
        {opdebug::kSignedIntMinNegation, "signed integer minimum negated (overflow)"},
        {opdebug::kIntegerOverflow, "integer add/sub/mul/mac overflow"},
        {opdebug::kFloatOverflow, "floating-point overflow"},
        {opdebug::kNegativeFloatToUnsigned, "negative float converted to unsigned"},
        {opdebug::kFp32ToFp16Overflow, "FP32/INT32 to FP16 conversion overflow"},
        {opdebug::kCubeAccumulationOverflow, "cube accumulation overflow"},
    };
    std::vector<std::string> out;
    std::uint64_t rest = status;
    for (const Bit& b : bits)
        if (status & b.bit) {
            out.emplace_back(b.words);
            rest &= ~b.bit;
        }
    for (int i = 0; i < 64; ++i)
        if (rest & (std::uint64_t(1) << i)) out.push_back(fmt::format("bit {:#x}", std::uint64_t(1) << i));
    return out;
}

std::vector<std::string> describeAtomicStatus(std::uint64_t status) {
    if (status == 0) return {};
    return {fmt::format("atomic add overflow (status {:#x})", status)};
}

std::string describeOverflow(const OpdebugRecord& r) {
    OverflowCulprit c = overflowCulprit(r);
    if (c.block == OverflowBlock::None) return "no overflow reported (all statuses 0)";
    std::vector<std::string> words =
        c.block == OverflowBlock::AiCore ? describeAiCoreStatus(c.status) : describeAtomicStatus(c.status);
    std::string joined;
    for (const auto& w : words) joined += (joined.empty() ? "" : ", ") + w;
    return fmt::format("{} task {} stream {} model {}: {} ({:#x})", overflowBlockName(c.block), c.taskId, c.streamId,
                       c.modelId, joined, c.status);
}

}  // namespace dl

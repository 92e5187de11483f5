#include "core/formats/cann/cann_dump_file.h"
#include "core/io/regular_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <limits>

#include "core/io/protobuf_reader.h"

namespace dl {
namespace {

constexpr std::uint64_t kMaxHeader = 256u << 20;  // a DumpData header is KBs; refuse absurd lengths

std::int64_t dimOf(std::uint64_t d) {
    return d > std::uint64_t(std::numeric_limits<std::int64_t>::max()) ? -1 : std::int64_t(d);
}

bool parseShape(const ProtoField& f, std::vector<std::int64_t>& out, std::string& error) {
    ProtoReader r(f.data, f.size);
    ProtoField d;
    std::vector<std::uint64_t> dims;
    while (r.next(d))
        if (d.number == 1 && !readPackedVarints(d, dims)) {
            error = "Shape.dim is neither a varint nor packed varints";
            return false;
        }
    if (*r.error()) {
        error = std::string("Shape: ") + r.error();
        return false;
    }
    if (dims.size() > 64) {
        error = "Shape with " + std::to_string(dims.size()) + " dims";
        return false;
    }
    for (auto v : dims) out.push_back(dimOf(v));
    return true;
}

// OpInput and OpOutput differ in field numbers (docs/formats.md 2.2): size/original_shape/sub_format
// are 5/6/7 for inputs and 6/7/8 for outputs; output has original_op = 4 where input has data.
bool parseTensor(const ProtoField& f, Io io, CannTensor& t, std::string& error) {
    const std::uint32_t kSize = io == Io::Input ? 5 : 6;
    ProtoReader r(f.data, f.size);
    ProtoField x;
    while (r.next(x)) {
        const bool varint = x.wire == WireType::Varint, bytes = x.wire == WireType::Bytes;
        if (x.number == 1 && varint)
            t.dataTypeEnum = std::uint32_t(x.value);
        else if (x.number == 2 && varint)
            t.formatEnum = std::uint32_t(x.value);
        else if (x.number == 3 && bytes) {
            if (!parseShape(x, t.shape, error)) return false;
        } else if (x.number == kSize && varint)
            t.size = x.value;
        else if (x.number == kSize + 1 && bytes) {
            if (!parseShape(x, t.originalShape, error)) return false;
        } else if (x.number == kSize + 2 && varint)
            t.subFormat = std::int32_t(std::uint32_t(x.value));
        else if (io == Io::Output && x.number == 4 && bytes) {
            ProtoReader o(x.data, x.size);
            ProtoField y;
            while (o.next(y))
                if (y.number == 1 && y.wire == WireType::Bytes) t.originalOpName = std::string(y.text());
        }
    }
    if (*r.error()) {
        error = std::string(io == Io::Input ? "OpInput: " : "OpOutput: ") + r.error();
        return false;
    }
    t.io = io;
    t.dtype = cannDataType(t.dataTypeEnum, t.packed);
    t.format = cannFormatName(t.formatEnum);
    for (auto d : t.originalShape)
        if (d < 0) t.originalShape.clear();  // dynamic: unknown logical shape (MindSpore does the same)
    return true;
}

bool parseBlock(const ProtoField& f, CannBlock& b, std::string& error) {
    ProtoReader r(f.data, f.size);
    ProtoField x;
    while (r.next(x)) {
        if (x.number == 1 && x.wire == WireType::Varint)
            b.type = std::uint32_t(x.value);
        else if (x.number == 3 && x.wire == WireType::Varint)
            b.size = x.value;
    }
    if (*r.error()) error = std::string("OpBuffer/Workspace: ") + r.error();
    return !*r.error();
}

std::uint64_t le64(const std::uint8_t* p) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

}  // namespace

std::string cannFormatName(std::uint32_t v) {
    static const char* const kNames[] = {"NCHW",
                                         "NHWC",
                                         "ND",
                                         "NC1HWC0",
                                         "FRACTAL_Z",
                                         "NC1C0HWPAD",
                                         "NHWC1C0",
                                         "FSR_NCHW",
                                         "FRACTAL_DECONV",
                                         "C1HWNC0",
                                         "FRACTAL_DECONV_TRANSPOSE",
                                         "FRACTAL_DECONV_SP_STRIDE_TRANS",
                                         "NC1HWC0_C04",
                                         "FRACTAL_Z_C04",
                                         "CHWN",
                                         "FRACTAL_DECONV_SP_STRIDE8_TRANS",
                                         "HWCN",
                                         "NC1KHKWHWC0",
                                         "BN_WEIGHT",
                                         "FILTER_HWCK",
                                         "HASHTABLE_LOOKUP_LOOKUPS",
                                         "HASHTABLE_LOOKUP_KEYS",
                                         "HASHTABLE_LOOKUP_VALUE",
                                         "HASHTABLE_LOOKUP_OUTPUT",
                                         "HASHTABLE_LOOKUP_HITS",
                                         "C1HWNCoC0",
                                         "MD",
                                         "NDHWC",
                                         "FRACTAL_ZZ",
                                         "FRACTAL_NZ",
                                         "NCDHW",
                                         "DHWCN",
                                         "NDC1HWC0",
                                         "FRACTAL_Z_3D",
                                         "CN",
                                         "NC",
                                         "DHWNC",
                                         "FRACTAL_Z_3D_TRANSPOSE",
                                         "FRACTAL_ZN_LSTM",
                                         "FRACTAL_Z_G",
                                         "RESERVED",
                                         "ALL",
                                         "NULL",
                                         "ND_RNN_BIAS",
                                         "FRACTAL_ZN_RNN",
                                         "YUV",
                                         "YUV_A",
                                         "NCL",
                                         "FRACTAL_Z_WINO",
                                         "C1HWC0"};
    if (v < std::size(kNames)) return kNames[v];
    if (v == 255) return "MAX";
    return "FORMAT_" + std::to_string(v);
}

std::string_view cannDataTypeName(std::uint32_t v) {
    static const char* const kNames[] = {
        "DT_UNDEFINED",     "DT_FLOAT",          "DT_FLOAT16",   "DT_INT8",       "DT_UINT8", "DT_INT16",   "DT_UINT16",
        "DT_INT32",         "DT_INT64",          "DT_UINT32",    "DT_UINT64",     "DT_BOOL",  "DT_DOUBLE",  "DT_STRING",
        "DT_DUAL_SUB_INT8", "DT_DUAL_SUB_UINT8", "DT_COMPLEX64", "DT_COMPLEX128", "DT_QINT8", "DT_QINT16",  "DT_QINT32",
        "DT_QUINT8",        "DT_QUINT16",        "DT_RESOURCE",  "DT_STRING_REF", "DT_DUAL",  "DT_VARIANT", "DT_BF16",
        "DT_INT4",          "DT_UINT1",          "DT_INT2",      "DT_UINT2"};
    return v < std::size(kNames) ? kNames[v] : "";
}

DType cannDataType(std::uint32_t v, bool& packed) {
    packed = v >= 28 && v <= 31;
    switch (v) {
        case 1:
            return DType::Float32;
        case 2:
            return DType::Float16;
        case 3:
        case 18:
            return DType::Int8;  // QINT8 holds int8 values
        case 4:
        case 21:
            return DType::UInt8;
        case 5:
        case 19:
            return DType::Int16;
        case 6:
        case 22:
            return DType::UInt16;
        case 7:
        case 20:
            return DType::Int32;
        case 8:
            return DType::Int64;
        case 9:
            return DType::UInt32;
        case 10:
            return DType::UInt64;
        case 11:
            return DType::Bool;
        case 12:
            return DType::Float64;
        case 16:
            return DType::Complex64;
        case 17:
            return DType::Complex128;
        case 27:
            return DType::BFloat16;
        case 28:
            return DType::Int4;
        case 29:
            return DType::UInt1;
        default:
            return DType::Unknown;  // strings, resources, INT2/UINT2: no statistics
    }
}

bool parseCannDumpHeader(const std::uint8_t* data, std::size_t size, std::uint64_t fileSize, CannDumpHeader& out,
                         std::string& error) {
    out = CannDumpHeader();
    if (!data || size < 8 || fileSize < 8) {
        error = "shorter than the 8-byte header length";
        return false;
    }
    out.headerLen = le64(data);
    if (out.headerLen > fileSize - 8 || out.headerLen > kMaxHeader) {
        error = "header length " + std::to_string(out.headerLen) + " does not fit the " + std::to_string(fileSize) +
            "-byte file";
        return false;
    }
    if (out.headerLen > size - 8) {
        error = "header truncated";
        return false;
    }
    ProtoReader r(data + 8, std::size_t(out.headerLen));
    ProtoField f;
    while (r.next(f)) {
        const bool bytes = f.wire == WireType::Bytes;
        if (f.number == 1 && bytes)
            out.version = std::string(f.text());
        else if (f.number == 2 && f.wire == WireType::Varint)
            out.dumpTime = f.value;
        else if ((f.number == 3 || f.number == 4) && bytes) {
            const Io io = f.number == 3 ? Io::Output : Io::Input;
            auto& list = io == Io::Output ? out.outputs : out.inputs;
            if (list.size() >= 65535) {
                error = "more than 65535 tensors";
                return false;
            }
            CannTensor t;
            if (!parseTensor(f, io, t, error)) return false;
            t.slot = std::uint16_t(list.size());
            list.push_back(std::move(t));
        } else if ((f.number == 5 || f.number == 7) && bytes) {
            CannBlock b;
            if (!parseBlock(f, b, error)) return false;
            (f.number == 5 ? out.buffers : out.workspaces).push_back(b);
        } else if (f.number == 6 && bytes) {
            out.opName = std::string(f.text());
        }
    }
    if (*r.error()) {
        error = std::string("DumpData header: ") + r.error();
        return false;
    }
    // Payloads follow in the order inputs, outputs, buffers, workspaces (docs/formats.md 2.1).
    std::uint64_t offset = 8 + out.headerLen;
    auto place = [&](std::uint64_t sz, std::uint64_t& where) {
        if (sz > fileSize - offset) return false;
        where = offset;
        offset += sz;
        return true;
    };
    for (auto* list : {&out.inputs, &out.outputs})
        for (auto& t : *list)
            if (!place(t.size, t.offset)) {
                error = std::string(t.io == Io::Input ? "input " : "output ") + std::to_string(t.slot) + " (" +
                    std::to_string(t.size) + " bytes) runs past the end of the " + std::to_string(fileSize) +
                    "-byte file";
                return false;
            }
    for (auto* list : {&out.buffers, &out.workspaces})
        for (auto& b : *list)
            if (!place(b.size, b.offset)) {
                error = "buffer/workspace payload runs past the end of the file";
                return false;
            }
    out.payloadEnd = offset;
    return true;
}

bool readCannDumpHeader(const std::string& path, CannDumpHeader& out, std::string& error) {
    const int fd = openRegularFile(path, error);
    if (fd < 0) return false;
    const off_t fileSize = ::lseek(fd, 0, SEEK_END);
    std::array<std::uint8_t, 8> lenBytes{};
    bool ok = fileSize >= 8 && ::pread(fd, lenBytes.data(), 8, 0) == 8;
    std::vector<std::uint8_t> buf;
    if (ok) {
        const std::uint64_t len = le64(lenBytes.data());
        if (len <= std::uint64_t(fileSize) - 8 && len <= kMaxHeader) {
            buf.resize(8 + len);
            ok = ::pread(fd, buf.data(), buf.size(), 0) == ssize_t(buf.size());
        } else {
            buf.assign(lenBytes.begin(), lenBytes.end());
        }
    }
    ::close(fd);
    if (!ok) {
        error = "cannot read the header (file shorter than 8 bytes or unreadable)";
        return false;
    }
    return parseCannDumpHeader(buf.data(), buf.size(), std::uint64_t(fileSize), out, error);
}

bool looksLikeCannDump(const std::uint8_t* data, std::size_t size, std::uint64_t fileSize) {
    CannDumpHeader h;
    std::string error;
    return parseCannDumpHeader(data, size, fileSize, h, error) && h.headerLen > 0 &&
        (!h.inputs.empty() || !h.outputs.empty() || !h.opName.empty());
}

}  // namespace dl

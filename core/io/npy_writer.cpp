#include "core/io/npy_writer.h"

#include <cmath>
#include <cstring>
#include <fstream>

#include "core/util/half.h"

namespace dl {

std::string npyDescr(DType dtype, std::string_view bf16Descr) {
    switch (dtype) {
        case DType::Bool:
            return "|b1";
        case DType::Int8:
            return "|i1";
        case DType::Int16:
            return "<i2";
        case DType::Int32:
            return "<i4";
        case DType::Int64:
            return "<i8";
        case DType::UInt8:
            return "|u1";
        case DType::UInt16:
            return "<u2";
        case DType::UInt32:
            return "<u4";
        case DType::UInt64:
            return "<u8";
        case DType::Float16:
            return "<f2";
        case DType::Float32:
            return "<f4";
        case DType::Float64:
            return "<f8";
        case DType::Complex64:
            return "<c8";
        case DType::Complex128:
            return "<c16";
        case DType::BFloat16:
            return std::string(bf16Descr);
        default:
            return {};
    }
}

std::string makeNpyHeader(std::string_view descr, const std::vector<std::int64_t>& shape) {
    std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (";
    for (auto d : shape) dict += std::to_string(d) + ",";  // MindSpore puts ',' after every dim
    dict += "), }";
    // Same arithmetic as GenerateNpyHeader: a full 64 spaces when already aligned.
    std::size_t prefix = 6 + 2 + 2;
    bool v2 = false;
    std::size_t pad = 64 - (prefix + dict.size() + 1) % 64;
    if (dict.size() + pad + 1 > 65535) {
        v2 = true;
        prefix = 6 + 2 + 4;
        pad = 64 - (prefix + dict.size() + 1) % 64;
    }
    const std::size_t len = dict.size() + pad + 1;
    std::string h = "\x93NUMPY";
    h += char(v2 ? 2 : 1);
    h += char(0);
    for (std::size_t i = 0; i < (v2 ? 4u : 2u); ++i) h += char((len >> (8 * i)) & 0xff);
    h += dict;
    h.append(pad, ' ');
    h += '\n';
    return h;
}

namespace {
template <typename T>
void appendLe(std::string& out, T v) {
    char buf[sizeof(T)];
    std::memcpy(buf, &v, sizeof(T));  // host is little endian (x86-64/aarch64)
    out.append(buf, sizeof(T));
}
}  // namespace

bool encodeFloats(const std::vector<float>& values, DType dtype, std::string& bytes, std::string& error) {
    bytes.clear();
    bytes.reserve(values.size() * dtypeSize(dtype));
    for (float v : values) {
        switch (dtype) {
            case DType::Float16:
                appendLe<std::uint16_t>(bytes, floatToHalf(v));
                break;
            case DType::BFloat16:
                appendLe<std::uint16_t>(bytes, floatToBf16(v));
                break;
            case DType::Float32:
                appendLe<float>(bytes, v);
                break;
            case DType::Float64:
                appendLe<double>(bytes, double(v));
                break;
            case DType::Bool:
                appendLe<std::uint8_t>(bytes, v != 0.0f ? 1 : 0);
                break;
            case DType::Int8:
                appendLe<std::int8_t>(bytes, std::int8_t(v));
                break;
            case DType::UInt8:
                appendLe<std::uint8_t>(bytes, std::uint8_t(v));
                break;
            case DType::Int16:
                appendLe<std::int16_t>(bytes, std::int16_t(v));
                break;
            case DType::Int32:
                appendLe<std::int32_t>(bytes, std::int32_t(v));
                break;
            case DType::Int64:
                appendLe<std::int64_t>(bytes, std::int64_t(v));
                break;
            default:
                error = "encodeFloats: unsupported dtype " + std::string(dtypeName(dtype));
                return false;
        }
    }
    return true;
}

bool writeNpyFile(const std::string& path, DType dtype, const std::vector<std::int64_t>& shape,
                  std::string_view payload, std::string& error, std::string_view bf16Descr) {
    const std::string descr = npyDescr(dtype, bf16Descr);
    if (descr.empty()) {
        error = "writeNpyFile: no npy descr for dtype " + std::string(dtypeName(dtype));
        return false;
    }
    std::uint64_t count = 1;
    for (auto d : shape) {
        if (d < 0) {
            error = "writeNpyFile: negative dimension";
            return false;
        }
        count *= std::uint64_t(d);
    }
    if (count * dtypeSize(dtype) != payload.size()) {
        error = "writeNpyFile: payload is " + std::to_string(payload.size()) + " bytes, shape needs " +
            std::to_string(count * dtypeSize(dtype));
        return false;
    }
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) {
        error = "cannot create " + path;
        return false;
    }
    const std::string header = makeNpyHeader(descr, shape);
    f.write(header.data(), std::streamsize(header.size()));
    f.write(payload.data(), std::streamsize(payload.size()));
    if (!f) {
        error = "write failed: " + path;
        return false;
    }
    return true;
}

}  // namespace dl

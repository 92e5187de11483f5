#include "core/io/npy_file.h"
#include "core/io/regular_file.h"

#include "core/util/byte_swap.h"
#include "core/util/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <new>
#include <optional>
#include <string_view>

#include "core/util/half.h"

namespace dl {

namespace {

// A descr quoted in a message: a crafted 10 KB one is cut, not echoed whole into every warning.
std::string shownDescr(const std::string& descr) {
    constexpr std::size_t kMax = 48;
    return descr.size() <= kMax ? descr : descr.substr(0, kMax) + "... (" + std::to_string(descr.size()) + " bytes)";
}

constexpr std::uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kMaxHeaderRead = 16u << 20;  // no real header is near this; stops huge claims

// Tolerant reader for the header's Python dict literal: keys in any order, either quote,
// optional spaces, trailing commas, Python 2 `L` suffixes on ints.
class DictParser {
public:
    explicit DictParser(std::string_view s) : m_s(s) {}

    bool parse(NpyHeader& out, bool& haveDescr, bool& haveShape, std::string& error) {
        skipSpace();
        if (!eat('{')) return fail(error, "header is not a dict");
        for (;;) {
            skipSpace();
            if (eat('}')) return true;
            std::string key;
            if (!readString(key)) return fail(error, "expected a quoted key in the header dict");
            skipSpace();
            if (!eat(':')) return fail(error, "expected ':' after '" + key + "'");
            skipSpace();
            if (key == "descr") {
                if (peek() == '[') return fail(error, "structured dtype (descr is a list) is not supported");
                if (!readString(out.descr)) return fail(error, "descr is not a string");
                haveDescr = true;
            } else if (key == "fortran_order") {
                if (!readBool(out.fortranOrder)) return fail(error, "fortran_order is not True/False");
            } else if (key == "shape") {
                if (!readShape(out.shape, error)) return false;
                haveShape = true;
            } else if (!skipValue()) {
                return fail(error, "cannot parse the value of '" + key + "'");
            }
            skipSpace();
            if (eat(',')) continue;
            skipSpace();
            if (eat('}')) return true;
            return fail(error, "expected ',' or '}' in the header dict");
        }
    }

private:
    static bool fail(std::string& error, std::string msg) {
        error = std::move(msg);
        return false;
    }
    char peek() const { return m_i < m_s.size() ? m_s[m_i] : '\0'; }
    bool eat(char c) {
        if (peek() != c) return false;
        ++m_i;
        return true;
    }
    void skipSpace() {
        while (m_i < m_s.size() && (m_s[m_i] == ' ' || m_s[m_i] == '\t' || m_s[m_i] == '\n' || m_s[m_i] == '\r')) ++m_i;
    }
    bool readString(std::string& out) {
        const char q = peek();
        if (q != '\'' && q != '"') return false;
        const std::size_t end = m_s.find(q, m_i + 1);
        if (end == std::string_view::npos) return false;
        out.assign(m_s.substr(m_i + 1, end - m_i - 1));
        m_i = end + 1;
        return true;
    }
    bool readWord(std::string_view w) {
        if (m_s.substr(m_i, w.size()) != w) return false;
        m_i += w.size();
        return true;
    }
    bool readBool(bool& v) {
        if (readWord("True") || readWord("1")) {
            v = true;
            return true;
        }
        if (readWord("False") || readWord("0")) {
            v = false;
            return true;
        }
        return false;
    }
    bool readShape(std::vector<std::int64_t>& shape, std::string& error) {
        const char close = peek() == '(' ? ')' : (peek() == '[' ? ']' : '\0');
        if (!close) return fail(error, "shape is not a tuple");
        ++m_i;
        shape.clear();
        for (;;) {
            skipSpace();
            if (eat(close)) return true;
            const bool negative = eat('-');
            if (!std::isdigit(static_cast<unsigned char>(peek()))) return fail(error, "shape holds a non-integer");
            std::uint64_t v = 0;
            while (std::isdigit(static_cast<unsigned char>(peek()))) {
                if (v > (std::uint64_t(INT64_MAX) - 9) / 10) return fail(error, "shape dimension too large");
                v = v * 10 + std::uint64_t(m_s[m_i++] - '0');
            }
            if (negative && v) return fail(error, "shape has a negative dimension -" + std::to_string(v));
            eat('L');
            shape.push_back(std::int64_t(v));
            skipSpace();
            if (eat(',')) continue;
            skipSpace();
            if (eat(close)) return true;
            return fail(error, "malformed shape tuple");
        }
    }
    // Unknown keys: skip a string, word, number or bracketed value.
    bool skipValue() {
        std::string tmp;
        if (peek() == '\'' || peek() == '"') return readString(tmp);
        int depth = 0;
        const std::size_t start = m_i;
        while (m_i < m_s.size()) {
            const char c = m_s[m_i];
            if (c == '(' || c == '[' || c == '{')
                ++depth;
            else if (c == ')' || c == ']' || c == '}') {
                if (depth == 0) break;
                --depth;
            } else if (c == ',' && depth == 0)
                break;
            else if (c == '\'' || c == '"') {
                if (!readString(tmp)) return false;
                continue;
            }
            ++m_i;
        }
        return depth == 0 && m_i > start;
    }

    std::string_view m_s;
    std::size_t m_i = 0;
};

// Maps a descr to a dtype. Returns nullopt with `error` set when it is not a tensor dtype we read.
std::optional<DType> dtypeOfDescr(const std::string& descr, DType hint, bool& bigEndian, std::string& error) {
    bigEndian = false;
    if (descr == "bfloat16") return DType::BFloat16;
    std::string_view d = descr;
    if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
        bigEndian = d[0] == '>';
        d.remove_prefix(1);
    }
    if (!d.empty() && d[0] == 'O') {
        error = "object arrays (descr '" + shownDescr(descr) + "') hold pickles and are not read";
        return std::nullopt;
    }
    if (!d.empty() && (d[0] == 'U' || d[0] == 'S' || d[0] == 'a')) {
        error = "string arrays (descr '" + shownDescr(descr) + "') are not tensors";
        return std::nullopt;
    }
    if (d.size() < 2) {
        error = "unrecognised descr '" + shownDescr(descr) + "'";
        return std::nullopt;
    }
    const char kind = d[0];
    const std::string_view size = d.substr(1);
    auto is = [&](std::string_view s) { return size == s; };
    switch (kind) {
        case 'b':
            if (is("1")) return DType::Bool;
            break;
        case 'i':
            if (is("1")) return DType::Int8;
            if (is("2")) return DType::Int16;
            if (is("4")) return DType::Int32;
            if (is("8")) return DType::Int64;
            break;
        case 'u':
            if (is("1")) return DType::UInt8;
            if (is("2")) return DType::UInt16;
            if (is("4")) return DType::UInt32;
            if (is("8")) return DType::UInt64;
            break;
        case 'f':
            if (is("2")) return DType::Float16;
            if (is("4")) return DType::Float32;
            if (is("8")) return DType::Float64;
            break;
        case 'c':
            if (is("8")) return DType::Complex64;
            if (is("16")) return DType::Complex128;
            break;
        case 'E':
        case 'T':
        case 'h':  // MindSpore 2.4+ / 2.3 / 2.2 bfloat16 codes
            if (is("2")) return DType::BFloat16;
            break;
        case 'V':
        case 'g':  // ml_dtypes / GreenWaves: the type itself is lost
            if (is("2")) {
                if (hint == DType::BFloat16) return DType::BFloat16;
                error = "descr '" + shownDescr(descr) +
                    "' is a raw 2-byte type; it is bfloat16 only when the file name or "
                    "dump.json says so";
                return std::nullopt;
            }
            break;
        default:
            break;
    }
    error = "unsupported descr '" + shownDescr(descr) + "'";
    return std::nullopt;
}

struct FileCloser {
    int fd;
    ~FileCloser() {
        if (fd >= 0) ::close(fd);
    }
};

bool openSized(const std::string& path, int& fd, std::uint64_t& size, std::string& error) {
    fd = openRegularFile(path, error);
    if (fd < 0) {
        error = path + ": " + error;
        return false;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        error = std::string("cannot stat: ") + std::strerror(errno);
        return false;
    }
    if (S_ISDIR(st.st_mode)) {
        error = path + " is a directory";
        return false;
    }
    size = std::uint64_t(st.st_size);
    return true;
}

template <class U>
U loadSwapped(const std::uint8_t* p, bool swap) {
    U v;
    std::memcpy(&v, p, sizeof v);
    return swap ? byteSwap(v) : v;
}

float toFloat(const std::uint8_t* p, DType t, bool be) {
    switch (t) {
        case DType::Bool:
            return *p ? 1.0f : 0.0f;
        case DType::Int4:
        case DType::Int8:
            return float(std::int8_t(*p));
        case DType::UInt1:
        case DType::UInt8:
            return float(*p);
        case DType::Int16:
            return float(std::int16_t(loadSwapped<std::uint16_t>(p, be)));
        case DType::UInt16:
            return float(loadSwapped<std::uint16_t>(p, be));
        case DType::Int32:
            return float(std::int32_t(loadSwapped<std::uint32_t>(p, be)));
        case DType::UInt32:
            return float(loadSwapped<std::uint32_t>(p, be));
        case DType::Int64:
            return float(std::int64_t(loadSwapped<std::uint64_t>(p, be)));
        case DType::UInt64:
            return float(loadSwapped<std::uint64_t>(p, be));
        case DType::Float16:
            return halfToFloat(loadSwapped<std::uint16_t>(p, be));
        case DType::BFloat16:
            return bf16ToFloat(loadSwapped<std::uint16_t>(p, be));
        case DType::Float32:
            return std::bit_cast<float>(loadSwapped<std::uint32_t>(p, be));
        case DType::Float64:
            return float(std::bit_cast<double>(loadSwapped<std::uint64_t>(p, be)));
        default:
            return 0.0f;
    }
}

// Converts n elements; the common little-endian float types skip the per-element switch, and
// fp16 goes through a 65536-entry table (256 KiB, stays in L2) instead of the branchy conversion.
void convertChunk(const std::uint8_t* src, std::size_t n, DType t, bool be, float* dst) {
    if (!be && t == DType::Float32) {
        std::memcpy(dst, src, n * sizeof(float));
        return;
    }
    if (!be && (t == DType::Float16 || t == DType::BFloat16)) {
        static const std::vector<float> halfTable = [] {
            std::vector<float> v(65536);
            for (std::uint32_t i = 0; i < v.size(); ++i) v[i] = halfToFloat(std::uint16_t(i));
            return v;
        }();
        for (std::size_t i = 0; i < n; ++i) {
            std::uint16_t h;
            std::memcpy(&h, src + 2 * i, 2);
            dst[i] = t == DType::Float16 ? halfTable[h] : bf16ToFloat(h);
        }
        return;
    }
    const std::size_t esize = dtypeSize(t);
    for (std::size_t i = 0; i < n; ++i) dst[i] = toFloat(src + i * esize, t, be);
}

// Column-major -> row-major copy.
std::vector<float> fortranToC(const std::vector<float>& f, const std::vector<std::int64_t>& shape) {
    std::vector<float> c(f.size());
    const std::size_t rank = shape.size();
    std::vector<std::uint64_t> idx(rank, 0), stride(rank, 1);
    for (std::size_t k = 1; k < rank; ++k) stride[k] = stride[k - 1] * std::uint64_t(shape[k - 1]);
    std::uint64_t src = 0;
    for (std::size_t out = 0; out < c.size(); ++out) {
        c[out] = f[src];
        for (std::size_t k = rank; k-- > 0;) {  // odometer, last axis fastest
            if (++idx[k] < std::uint64_t(shape[k])) {
                src += stride[k];
                break;
            }
            src -= stride[k] * (idx[k] - 1);
            idx[k] = 0;
        }
    }
    return c;
}

}  // namespace

bool parseNpyHeader(const std::uint8_t* data, std::size_t size, std::uint64_t fileSize, NpyHeader& out,
                    std::string& error, DType dtypeHint) {
    out = NpyHeader{};
    if (!data || size < 10) {
        error = "file is " + std::to_string(std::min<std::uint64_t>(size, fileSize)) +
            " bytes, too short for an npy header";
        return false;
    }
    if (std::memcmp(data, kMagic, sizeof kMagic) != 0) {
        error = "not an npy file (bad magic)";
        return false;
    }
    const int major = data[6];
    if (major < 1 || major > 3) {
        error = "unsupported npy version " + std::to_string(major);
        return false;
    }
    const std::size_t lenBytes = major == 1 ? 2 : 4;
    if (size < 8 + lenBytes) {
        error = "npy header length field is cut off";
        return false;
    }
    std::uint64_t headerLen = data[8] | (std::uint32_t(data[9]) << 8);
    if (lenBytes == 4) headerLen |= (std::uint64_t(data[10]) << 16) | (std::uint64_t(data[11]) << 24);
    const std::uint64_t preamble = 8 + lenBytes;
    if (preamble + headerLen > size || preamble + headerLen > fileSize) {
        error = "npy header claims " + std::to_string(headerLen) + " bytes but the file has only " +
            std::to_string(std::min<std::uint64_t>(size, fileSize) - preamble) + " after the preamble";
        return false;
    }
    const std::string_view text(reinterpret_cast<const char*>(data + preamble), std::size_t(headerLen));
    bool haveDescr = false, haveShape = false;
    if (!DictParser(text).parse(out, haveDescr, haveShape, error)) {
        error = "npy header: " + error;
        return false;
    }
    if (!haveDescr) {
        error = "npy header has no 'descr'";
        return false;
    }
    if (!haveShape) {
        error = "npy header has no 'shape'";
        return false;
    }
    out.dataOffset = preamble + headerLen;
    out.elementCount = 1;
    for (std::int64_t d : out.shape)
        if (__builtin_mul_overflow(out.elementCount, std::uint64_t(d), &out.elementCount)) {
            error = "npy shape element count overflows 64 bits";
            return false;
        }
    const std::optional<DType> dt = dtypeOfDescr(out.descr, dtypeHint, out.bigEndian, error);
    if (!dt) return false;  // shape and descr stay filled in for display
    out.dtype = *dt;
    if (dtypeSize(out.dtype) == 1) out.bigEndian = false;
    if (__builtin_mul_overflow(out.elementCount, std::uint64_t(dtypeSize(out.dtype)), &out.dataBytes)) {
        error = "npy payload size overflows 64 bits";
        return false;
    }
    if (out.dataBytes > fileSize - out.dataOffset) {
        error = "file ends at " + std::to_string(fileSize) + " bytes, header promises " +
            (out.dataBytes > UINT64_MAX - out.dataOffset ? std::string("more than 2^64")
                                                         : std::to_string(out.dataOffset + out.dataBytes));
        return false;
    }
    return true;
}

bool readNpyHeader(const std::string& path, NpyHeader& out, std::string& error, DType dtypeHint) {
    int fd = -1;
    std::uint64_t fileSize = 0;
    FileCloser closer{-1};
    const bool opened = openSized(path, fd, fileSize, error);
    closer.fd = fd;
    if (!opened) return false;
    // Most headers fit in 4 KiB; a longer one (v2/v3) is read once more in full.
    std::vector<std::uint8_t> buf(std::size_t(std::min<std::uint64_t>(fileSize, 4096)));
    if (!readFileAt(fd, buf.data(), buf.size(), 0, error)) return false;
    if (buf.size() >= 12 && std::memcmp(buf.data(), kMagic, 6) == 0 && buf[6] >= 2 && buf[6] <= 3) {
        const std::uint64_t len =
            buf[8] | (std::uint32_t(buf[9]) << 8) | (std::uint32_t(buf[10]) << 16) | (std::uint64_t(buf[11]) << 24);
        const std::uint64_t need = std::min<std::uint64_t>(12 + len, fileSize);
        if (need > buf.size()) {
            if (need > kMaxHeaderRead) {
                error = "npy header claims " + std::to_string(len) + " bytes, beyond any real header";
                return false;
            }
            buf.resize(std::size_t(need));
            if (!readFileAt(fd, buf.data(), buf.size(), 0, error)) return false;
        }
    }
    return parseNpyHeader(buf.data(), buf.size(), fileSize, out, error, dtypeHint);
}

bool loadTensorAsFloat(const std::string& path, std::uint64_t dataOffset, std::uint64_t elementCount, DType dtype,
                       bool bigEndian, std::vector<float>& out, std::string& error) {
    const std::size_t esize = dtypeSize(dtype);
    if (esize == 0) {
        error = "cannot load a tensor of unknown dtype";
        return false;
    }
    if (dtype == DType::Complex64 || dtype == DType::Complex128) {
        error = "complex tensors cannot be loaded as float";
        return false;
    }
    int fd = -1;
    std::uint64_t fileSize = 0;
    FileCloser closer{-1};
    const bool opened = openSized(path, fd, fileSize, error);
    closer.fd = fd;
    if (!opened) return false;
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(elementCount, std::uint64_t(esize), &bytes) || dataOffset > fileSize ||
        bytes > fileSize - dataOffset) {
        error = "file ends at " + std::to_string(fileSize) + " bytes, tensor needs " + std::to_string(elementCount) +
            " elements of " + std::to_string(esize) + " bytes from offset " + std::to_string(dataOffset);
        return false;
    }
    try {
        out.resize(std::size_t(elementCount));
        constexpr std::size_t kChunk = 1u << 20;
        std::vector<std::uint8_t> buf(std::min<std::uint64_t>(bytes, kChunk / esize * esize));
        for (std::uint64_t done = 0; done < bytes;) {
            const std::size_t want = std::size_t(std::min<std::uint64_t>(buf.size(), bytes - done));
            if (!readFileAt(fd, buf.data(), want, dataOffset + done, error)) return false;
            float* dst = out.data() + done / esize;
            convertChunk(buf.data(), want / esize, dtype, bigEndian, dst);
            done += want;
        }
    } catch (const std::bad_alloc&) {
        error = "not enough memory for " + std::to_string(elementCount) + " floats";
        out.clear();
        return false;
    }
    return true;
}

bool loadNpyAsFloat(const std::string& path, std::vector<float>& out, NpyHeader& header, std::string& error,
                    DType dtypeHint) {
    if (!readNpyHeader(path, header, error, dtypeHint)) return false;
    if (!loadTensorAsFloat(path, header.dataOffset, header.elementCount, header.dtype, header.bigEndian, out, error))
        return false;
    if (header.fortranOrder && header.shape.size() > 1 && !out.empty()) {
        try {
            out = fortranToC(out, header.shape);
        } catch (const std::bad_alloc&) {
            error = "not enough memory to reorder a Fortran-ordered tensor";
            return false;
        }
    }
    return true;
}

}  // namespace dl

#include "core/io/torch_file.h"
#include "core/io/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

#include "core/io/pickle_reader.h"
#include "core/io/zip_directory.h"
#include "core/util/read_file.h"

namespace dl {

namespace {

constexpr std::uint64_t kMaxPickle = 64u << 20;   // a single tensor's pickle is a few hundred bytes
constexpr std::uint64_t kLargePickle = 1u << 20;  // beyond this, one at a time process-wide
using Kind = PickleValue::Kind;

// A large pickle costs its bytes plus the reader's bounded tree (tens of MiB): parsed one at a time,
// so peak memory does not grow with the number of worker threads.
std::mutex& largePickleMutex() {
    static std::mutex m;
    return m;
}

bool asInt(const PickleValue* v, std::int64_t& out) {
    if (!v || (v->kind != Kind::Int && v->kind != Kind::Bool)) return false;
    out = v->i;
    return true;
}

bool asInts(const PickleValue* v, std::vector<std::int64_t>& out) {
    if (!v || v->kind != Kind::Tuple) return false;
    out.clear();
    for (const PickleValue* x : v->items) {
        std::int64_t i = 0;
        if (!asInt(x, i)) return false;
        out.push_back(i);
    }
    return true;
}

struct TensorRef {
    std::string key;  // storage record name under "<archive>/data/"
    DType dtype = DType::Unknown;
    std::string storageClass;
    std::int64_t storageNumel = 0, offset = 0;
    std::vector<std::int64_t> size, stride;
};

// torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks[, metadata]),
// also inside _rebuild_parameter(tensor, requires_grad, hooks).
bool interpret(const PickleValue* v, TensorRef& t, std::string& error) {
    if (!v || v->kind != Kind::Reduce || v->items.size() < 2 || v->items[1]->kind != Kind::Tuple) {
        error = "the pickle does not hold a single tensor";
        return false;
    }
    const PickleValue* fn = v->items[0];
    const auto& args = v->items[1]->items;
    if (fn->isGlobal("torch._utils._rebuild_parameter") || fn->isGlobal("torch._utils._rebuild_parameter_with_state"))
        return !args.empty() && interpret(args[0], t, error);
    if (!fn->isGlobal("torch._utils._rebuild_tensor_v2") && !fn->isGlobal("torch._utils._rebuild_tensor")) {
        error = "the pickle holds " + (fn->kind == Kind::Global ? fn->s : std::string("an object")) +
            ", not a single tensor";
        return false;
    }
    // Storage: persistent id ('storage', <torch.XStorage>, key, location, numel).
    const PickleValue* pid = args.empty() ? nullptr : args[0];
    if (!pid || pid->kind != Kind::PersistentId || pid->items.empty() || pid->items[0]->kind != Kind::Tuple) {
        error = "tensor storage is not a persistent reference";
        return false;
    }
    const auto& sid = pid->items[0]->items;
    if (sid.size() < 5 || sid[0]->kind != Kind::String || sid[0]->s != "storage" || sid[1]->kind != Kind::Global ||
        sid[2]->kind != Kind::String || !asInt(sid[4], t.storageNumel)) {
        error = "unexpected storage reference in the pickle";
        return false;
    }
    const std::string& cls = sid[1]->s;
    t.storageClass = cls.substr(cls.rfind('.') + 1);
    t.dtype = torchStorageDType(t.storageClass);
    t.key = sid[2]->s;
    if (args.size() < 4 || !asInt(args[1], t.offset) || !asInts(args[2], t.size) || !asInts(args[3], t.stride) ||
        t.size.size() != t.stride.size()) {
        error = "tensor offset, size or stride missing in the pickle";
        return false;
    }
    if (t.dtype == DType::Unknown) {
        error = "unsupported storage type " + cls;
        return false;
    }
    return true;
}

// Row-major (C) or column-major (Fortran) strides for `size`; false for other layouts.
bool denseLayout(const std::vector<std::int64_t>& size, const std::vector<std::int64_t>& stride, bool& fortran) {
    auto matches = [&](bool reverse) {
        std::int64_t expect = 1;
        for (std::size_t k = 0; k < size.size(); ++k) {
            const std::size_t d = reverse ? k : size.size() - 1 - k;
            if (size[d] != 1 && stride[d] != expect) return false;  // size-1 dims may carry any stride
            expect *= size[d];
        }
        return true;
    };
    fortran = false;
    if (matches(false)) return true;
    fortran = matches(true);
    return fortran;
}

bool parseWith(const ByteReader& reader, std::uint64_t fileSize, NpyHeader& out, std::string& error) {
    ZipDirectory zip;
    if (!zip.read(reader, fileSize, error)) return false;
    // "<archive>/data.pkl": the archive folder is the saved file's stem (or "archive").
    const ZipEntry* pkl = nullptr;
    for (const ZipEntry& e : zip.entries()) {
        const auto slash = e.name.find('/');
        if (slash != std::string::npos && e.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
            pkl = &e;
            break;
        }
    }
    if (!pkl) {
        error = "ZIP archive without a data.pkl record (not a torch.save file)";
        return false;
    }
    const std::string prefix = pkl->name.substr(0, pkl->name.size() - std::strlen("data.pkl"));
    std::uint64_t at = 0;
    if (!zip.dataOffset(*pkl, at, error)) return false;
    if (pkl->size > kMaxPickle || pkl->size != pkl->compressedSize) {
        error = "data.pkl is too large or not stored";
        return false;
    }
    std::unique_lock<std::mutex> large;
    if (pkl->size > kLargePickle) large = std::unique_lock(largePickleMutex());
    std::vector<std::uint8_t> bytes(pkl->size);
    if (!reader(at, bytes.size(), bytes.data())) {
        error = "cannot read data.pkl";
        return false;
    }
    PickleTree tree;
    TensorRef t;
    if (!unpickle(bytes.data(), bytes.size(), tree, error) || !interpret(tree.root, t, error)) return false;
    PickleTree().nodes.swap(tree.nodes);  // t holds copies: free the tree and bytes before unlocking
    tree.root = nullptr;
    std::vector<std::uint8_t>().swap(bytes);
    large = {};
    if (const ZipEntry* bo = zip.find(prefix + "byteorder"); bo && bo->size <= 16) {
        std::uint64_t boAt = 0;
        char text[16] = {};
        if (zip.dataOffset(*bo, boAt, error) && reader(boAt, bo->size, reinterpret_cast<std::uint8_t*>(text)))
            out.bigEndian = std::string(text, bo->size) == "big";
    }
    const ZipEntry* storage = zip.find(prefix + "data/" + t.key);
    if (!storage) {
        error = "storage record data/" + t.key + " is missing";
        return false;
    }
    std::uint64_t storageAt = 0;
    if (!zip.dataOffset(*storage, storageAt, error)) return false;
    bool fortran = false;
    if (!denseLayout(t.size, t.stride, fortran)) {
        error = "non-contiguous tensor view (strides do not describe a dense layout): data not read";
        return false;
    }
    const std::size_t elem = dtypeSize(t.dtype);
    std::uint64_t count = 1;
    for (std::int64_t d : t.size) {
        if (d < 0 || (d > 0 && count > (std::uint64_t(1) << 62) / std::uint64_t(d))) {
            error = "tensor size out of range";
            return false;
        }
        count *= std::uint64_t(d);
    }
    // The pickle's storage numel must fit the record (dataOffset checked the record fits the file).
    if (t.storageNumel < 0 || std::uint64_t(t.storageNumel) > storage->size / elem) {
        error = "storage data/" + t.key + " claims " + std::to_string(t.storageNumel) + " elements of " +
            std::to_string(elem) + " bytes but its record holds " + std::to_string(storage->size) + " bytes";
        return false;
    }
    if (t.offset < 0 || std::uint64_t(t.offset) > storage->size / elem ||
        count > storage->size / elem - std::uint64_t(t.offset)) {
        error = "tensor (offset " + std::to_string(t.offset) + ", " + std::to_string(count) +
            " elements) runs past its " + std::to_string(storage->size) + "-byte storage";
        return false;
    }
    out.descr = t.storageClass;
    out.dtype = t.dtype;
    out.fortranOrder = fortran && t.size.size() > 1;
    out.shape = t.size;
    out.elementCount = count;
    out.dataOffset = storageAt + std::uint64_t(t.offset) * elem;
    out.dataBytes = count * elem;
    if (out.dataOffset > fileSize || out.dataBytes > fileSize - out.dataOffset) {  // unreachable by the checks above
        error = "tensor data runs past the end of the file";
        return false;
    }
    return true;
}

}  // namespace

DType torchStorageDType(const std::string& c) {
    static const std::pair<const char*, DType> kMap[] = {
        {"HalfStorage", DType::Float16},
        {"BFloat16Storage", DType::BFloat16},
        {"FloatStorage", DType::Float32},
        {"DoubleStorage", DType::Float64},
        {"ByteStorage", DType::UInt8},
        {"CharStorage", DType::Int8},
        {"ShortStorage", DType::Int16},
        {"IntStorage", DType::Int32},
        {"LongStorage", DType::Int64},
        {"BoolStorage", DType::Bool},
        {"ComplexFloatStorage", DType::Complex64},
        {"ComplexDoubleStorage", DType::Complex128},
    };
    for (const auto& [name, t] : kMap)
        if (c == name) return t;
    return DType::Unknown;
}

bool parseTorchTensorHeader(const std::uint8_t* data, std::size_t size, NpyHeader& out, std::string& error) {
    const ByteReader reader = [data, size](std::uint64_t off, std::size_t n, std::uint8_t* dst) {
        if (off > size || n > size - off) return false;
        if (n) std::memcpy(dst, data + off, n);
        return true;
    };
    return parseWith(reader, size, out, error);
}

bool readTorchTensorHeader(const std::string& path, NpyHeader& out, std::string& error) {
    const int fd = openRegularFile(path, error);
    if (fd < 0) return false;
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0;
    if (ok) {
        const ByteReader reader = [fd](std::uint64_t off, std::size_t n, std::uint8_t* dst) {
            std::string ignored;  // the parser says what it could not read
            return readFileAt(fd, dst, n, off, ignored);
        };
        ok = parseWith(reader, std::uint64_t(st.st_size), out, error);
    } else {
        error = std::string("cannot stat: ") + std::strerror(errno);
    }
    ::close(fd);
    return ok;
}

}  // namespace dl

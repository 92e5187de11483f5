#include "core/io/npy_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/stats/stats_accumulator.h"
#include "core/util/half.h"
#include "tests/core/temp_dir.h"

using namespace dl;
namespace fs = std::filesystem;

namespace {

// One folder for the whole run, removed at exit (it used to be left behind in /tmp).
fs::path tempDir() {
    static const dltest::TempDir dir("dl_npy_test_");
    return dir.path;
}

void writeBytes(const fs::path& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), std::streamsize(bytes.size()));
}

std::string readBytes(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}

// npy bytes the way MindSpore's GenerateNpyHeader writes them (docs/formats.md 1.5), or with any dict.
std::string npyBytes(const std::string& dict, const std::string& payload, int major = 1) {
    std::string out("\x93NUMPY", 6);
    out += char(major);
    out += char(0);
    const std::size_t lenBytes = major == 1 ? 2 : 4;
    std::size_t total = 6 + 2 + lenBytes + dict.size() + 1;
    const std::size_t pad = 64 - total % 64;
    const std::size_t headerLen = dict.size() + pad + 1;
    for (std::size_t i = 0; i < lenBytes; ++i) out += char((headerLen >> (8 * i)) & 0xff);
    out += dict + std::string(pad, ' ') + "\n";
    return out + payload;
}

std::string dictFor(const std::string& descr, const std::string& shape) {
    return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
}

template <class T>
std::string raw(const std::vector<T>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

NpyHeader parseOk(const std::string& bytes, DType hint = DType::Unknown) {
    NpyHeader h;
    std::string err;
    EXPECT_TRUE(
        parseNpyHeader(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), bytes.size(), h, err, hint))
        << err;
    return h;
}

std::string parseError(const std::string& bytes, DType hint = DType::Unknown) {
    // Exact-size heap copy, so a read beyond `size` would be a real overrun.
    std::unique_ptr<std::uint8_t[]> copy(new std::uint8_t[bytes.size() + 1]);
    std::memcpy(copy.get(), bytes.data(), bytes.size());
    NpyHeader h;
    std::string err;
    EXPECT_FALSE(parseNpyHeader(copy.get(), bytes.size(), bytes.size(), h, err, hint));
    EXPECT_FALSE(err.empty());
    return err;
}

bool haveNumpy() { return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

// Writes arrays with NumPy itself plus a float32 C-order reference next to each (name.ref).
void writeWithNumpy() {
    static bool done = false;
    if (done) return;
    ASSERT_TRUE(haveNumpy()) << "python3 with numpy is required (apt-get install python3-numpy)";
    const fs::path script = tempDir() / "gen.py";
    std::ofstream(script) << R"PY(
import numpy as np, sys, os
d = sys.argv[1]
rng = np.random.default_rng(0)
def save(name, a, version=None):
    p = os.path.join(d, name + '.npy')
    if version is None:
        np.save(p, a)
    else:
        with open(p, 'wb') as f:
            np.lib.format.write_array(f, a, version=version)
    np.ascontiguousarray(a).astype(np.float32).tofile(os.path.join(d, name + '.ref'))
for e in '<>':
    for k in ['i1','i2','i4','i8','u1','u2','u4','u8','f2','f4','f8']:
        a = (rng.standard_normal((3, 5)) * 50).astype(e + k)
        save(e + k, a)
save('bool', rng.standard_normal(17) > 0)
save('fortran', np.asfortranarray(np.arange(24, dtype='<f4').reshape(2, 3, 4)))
save('fortran2d_be', np.asfortranarray(np.arange(6, dtype='>f2').reshape(2, 3)))
save('scalar', np.float16(3.5))
save('empty', np.zeros((0,), dtype=np.float32))
save('empty2', np.zeros((2, 0, 3), dtype=np.int32))
save('v2', np.arange(10, dtype=np.float32), version=(2, 0))
save('v3', np.arange(4, dtype=np.float64), version=(3, 0))
np.save(os.path.join(d, 'c8.npy'), np.array([1+2j, 3-4j], dtype=np.complex64))
np.save(os.path.join(d, 'object.npy'), np.array([{'a': 1}, None], dtype=object), allow_pickle=True)
np.save(os.path.join(d, 'unicode.npy'), np.array(['abc', 'de']))
np.save(os.path.join(d, 'structured.npy'), np.zeros(3, dtype=[('x', '<f4'), ('y', '<i4')]))
np.save(os.path.join(d, 'void2.npy'), np.zeros(3, dtype='V2'))
)PY";
    const std::string cmd = "/usr/bin/python3 " + script.string() + " " + tempDir().string();
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    done = true;
}

std::vector<float> refValues(const std::string& name) {
    const std::string bytes = readBytes(tempDir() / (name + ".ref"));
    std::vector<float> v(bytes.size() / 4);
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());  // empty arrays: no null memcpy
    return v;
}

}  // namespace

TEST(NpyFile, NumpyWrittenEveryDtypeBothEndians) {
    writeWithNumpy();
    struct Case {
        std::string kind;
        DType type;
    };
    const std::vector<Case> cases = {{"i1", DType::Int8},    {"i2", DType::Int16},  {"i4", DType::Int32},
                                     {"i8", DType::Int64},   {"u1", DType::UInt8},  {"u2", DType::UInt16},
                                     {"u4", DType::UInt32},  {"u8", DType::UInt64}, {"f2", DType::Float16},
                                     {"f4", DType::Float32}, {"f8", DType::Float64}};
    for (const char endian : {'<', '>'}) {
        for (const Case& c : cases) {
            const std::string name = std::string(1, endian) + c.kind;
            SCOPED_TRACE(name);
            NpyHeader h;
            std::vector<float> values;
            std::string err;
            ASSERT_TRUE(loadNpyAsFloat((tempDir() / (name + ".npy")).string(), values, h, err)) << err;
            EXPECT_EQ(h.dtype, c.type);
            EXPECT_EQ(h.bigEndian, endian == '>' && dtypeSize(c.type) > 1);
            EXPECT_EQ(h.shape, (std::vector<std::int64_t>{3, 5}));
            EXPECT_EQ(h.elementCount, 15u);
            EXPECT_EQ(h.dataBytes, 15u * dtypeSize(c.type));
            EXPECT_EQ(h.dataOffset % 64, 0u);
            EXPECT_EQ(values, refValues(name));
            // Statistics read the same bytes: the mean must match the reference values.
            TensorStats s;
            Log2Histogram hist;
            ASSERT_TRUE(computeFileStats((tempDir() / (name + ".npy")).c_str(), h.dataOffset, h.dataBytes, h.dtype,
                                         h.bigEndian, s, hist, err))
                << err;
            double sum = 0;
            for (float v : values) sum += v;
            EXPECT_NEAR(s.mean, sum / 15, 1e-6 * std::max(1.0, std::fabs(sum / 15)));  // ref is rounded to f32
        }
    }
}

TEST(NpyFile, NumpyWrittenShapesOrdersAndVersions) {
    writeWithNumpy();
    NpyHeader h;
    std::vector<float> v;
    std::string err;
    auto load = [&](const std::string& name) {
        SCOPED_TRACE(name);
        EXPECT_TRUE(loadNpyAsFloat((tempDir() / (name + ".npy")).string(), v, h, err)) << err;
        EXPECT_EQ(v, refValues(name));
    };
    load("bool");
    EXPECT_EQ(h.dtype, DType::Bool);
    EXPECT_EQ(h.descr, "|b1");
    load("fortran");
    EXPECT_TRUE(h.fortranOrder);
    EXPECT_EQ(h.shape, (std::vector<std::int64_t>{2, 3, 4}));
    load("fortran2d_be");
    EXPECT_TRUE(h.fortranOrder);
    EXPECT_TRUE(h.bigEndian);
    load("scalar");
    EXPECT_TRUE(h.shape.empty());
    EXPECT_EQ(h.elementCount, 1u);
    EXPECT_EQ(v, std::vector<float>{3.5f});
    load("empty");
    EXPECT_EQ(h.elementCount, 0u);
    EXPECT_EQ(h.dataBytes, 0u);
    load("empty2");
    EXPECT_EQ(h.shape, (std::vector<std::int64_t>{2, 0, 3}));
    EXPECT_EQ(h.elementCount, 0u);
    load("v2");
    EXPECT_EQ(h.elementCount, 10u);
    load("v3");
    EXPECT_EQ(h.dtype, DType::Float64);
    ASSERT_TRUE(readNpyHeader((tempDir() / "c8.npy").string(), h, err)) << err;
    EXPECT_EQ(h.dtype, DType::Complex64);
    EXPECT_FALSE(loadNpyAsFloat((tempDir() / "c8.npy").string(), v, h, err));
    EXPECT_NE(err.find("complex"), std::string::npos);
}

TEST(NpyFile, RejectsNonTensorDtypes) {
    writeWithNumpy();
    NpyHeader h;
    std::string err;
    EXPECT_FALSE(readNpyHeader((tempDir() / "object.npy").string(), h, err));
    EXPECT_NE(err.find("object"), std::string::npos) << err;
    EXPECT_FALSE(readNpyHeader((tempDir() / "unicode.npy").string(), h, err));
    EXPECT_NE(err.find("string"), std::string::npos) << err;
    EXPECT_FALSE(readNpyHeader((tempDir() / "structured.npy").string(), h, err));
    EXPECT_NE(err.find("structured"), std::string::npos) << err;
    // Stock NumPy writes a 2-byte void as '|V2': bf16 only with the hint.
    EXPECT_FALSE(readNpyHeader((tempDir() / "void2.npy").string(), h, err));
    EXPECT_NE(err.find("bfloat16"), std::string::npos) << err;
    EXPECT_EQ(h.descr, "|V2");
    EXPECT_EQ(h.shape, std::vector<std::int64_t>{3});
    ASSERT_TRUE(readNpyHeader((tempDir() / "void2.npy").string(), h, err, DType::BFloat16)) << err;
    EXPECT_EQ(h.dtype, DType::BFloat16);
}

TEST(NpyFile, MindSporeHeaderStyle) {
    const std::vector<float> data = {1, 2, 3, 4, 5, 6};
    const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,3,), }";
    ASSERT_EQ(dict.size(), 59u);  // docs/formats.md section 6 test vector
    const std::string bytes = npyBytes(dict, raw(data));
    EXPECT_EQ(std::uint8_t(bytes[8]) | (std::uint8_t(bytes[9]) << 8), 118);
    const NpyHeader h = parseOk(bytes);
    EXPECT_EQ(h.dataOffset, 128u);
    EXPECT_EQ(h.shape, (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(h.dtype, DType::Float32);
    EXPECT_EQ(parseOk(npyBytes(dictFor("<f2", "()"), raw(std::vector<std::uint16_t>{0x3c00}))).elementCount, 1u);
    EXPECT_EQ(parseOk(npyBytes(dictFor("<f4", "(5,)"), raw(std::vector<float>(5)))).shape,
              std::vector<std::int64_t>{5});
}

TEST(NpyFile, TolerantDictSyntax) {
    const std::string payload = raw(std::vector<float>(6));
    for (const std::string dict : {
             R"({"shape": (2, 3), "fortran_order": False, "descr": "<f4"})",
             "{ 'fortran_order' : False , 'descr':'<f4','shape':( 2 ,3 , ) }",
             "{'descr': '<f4', 'shape': (2L, 3L), 'fortran_order': False, 'extra': [1, (2, 3)], }",
             "{'descr': '<f4', 'shape': [2, 3]}",
         }) {
        SCOPED_TRACE(dict);
        const NpyHeader h = parseOk(npyBytes(dict, payload));
        EXPECT_EQ(h.shape, (std::vector<std::int64_t>{2, 3}));
        EXPECT_EQ(h.dtype, DType::Float32);
        EXPECT_FALSE(h.fortranOrder);
    }
    EXPECT_TRUE(parseOk(npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3)}", payload)).fortranOrder);
    EXPECT_EQ(parseOk(npyBytes(dictFor("=i4", "(6,)"), payload)).dtype, DType::Int32);
    EXPECT_TRUE(parseOk(npyBytes(dictFor(">f4", "(6,)"), payload)).bigEndian);
    EXPECT_EQ(parseOk(npyBytes(dictFor("<c16", "(1,)"), std::string(16, '\0'))).dtype, DType::Complex128);
    EXPECT_EQ(parseOk(npyBytes(dictFor("<f4", "(2,3,)"), payload, 2)).dataOffset % 64, 0u);
}

TEST(NpyFile, BFloat16Descrs) {
    const std::string payload = raw(std::vector<std::uint16_t>{0x3f80, 0xc000});
    for (const std::string descr : {"<E2", "<T2", "<h2", "bfloat16"}) {
        SCOPED_TRACE(descr);
        EXPECT_EQ(parseOk(npyBytes(dictFor(descr, "(2,)"), payload)).dtype, DType::BFloat16);
    }
    for (const std::string descr : {"<V2", "|V2", "<g2"}) {
        SCOPED_TRACE(descr);
        EXPECT_NE(parseError(npyBytes(dictFor(descr, "(2,)"), payload)).find("bfloat16"), std::string::npos);
        EXPECT_EQ(parseOk(npyBytes(dictFor(descr, "(2,)"), payload), DType::BFloat16).dtype, DType::BFloat16);
    }
    const fs::path p = tempDir() / "bf16.npy";
    writeBytes(p, npyBytes(dictFor("<E2", "(2,)"), payload));
    std::vector<float> v;
    NpyHeader h;
    std::string err;
    ASSERT_TRUE(loadNpyAsFloat(p.string(), v, h, err)) << err;
    EXPECT_EQ(v, (std::vector<float>{1.0f, -2.0f}));
}

TEST(NpyFile, CorruptHeadersFailWithReasons) {
    const std::string good = npyBytes(dictFor("<f4", "(2,3,)"), raw(std::vector<float>(6)));
    EXPECT_NE(parseError("").find("too short"), std::string::npos);
    EXPECT_NE(parseError("\x93NUMPY").find("too short"), std::string::npos);
    EXPECT_NE(parseError("PK\x03\x04 not numpy at all").find("magic"), std::string::npos);
    std::string v4 = good;
    v4[6] = 4;
    EXPECT_NE(parseError(v4).find("version"), std::string::npos);
    // Every truncation of a valid file fails, never reads past the end.
    for (std::size_t cut = 0; cut < good.size(); ++cut) parseError(good.substr(0, cut));
    EXPECT_NE(parseError(good.substr(0, good.size() - 1)).find("file ends at 151 bytes, header promises 152"),
              std::string::npos);
    // Header length claiming more than the file.
    std::string longClaim = good;
    longClaim[8] = char(0xff);
    longClaim[9] = char(0x7f);
    EXPECT_NE(parseError(longClaim).find("header claims"), std::string::npos);
    EXPECT_NE(parseError(npyBytes(dictFor("<f4", "(2,-3)"), "")).find("negative"), std::string::npos);
    EXPECT_NE(parseError(npyBytes(dictFor("<f4", "(4294967296, 4294967296, 4294967296)"), "")).find("overflow"),
              std::string::npos);
    EXPECT_NE(parseError(npyBytes(dictFor("<f4", "(1000000000000,)"), "")).find("header promises"), std::string::npos);
    EXPECT_NE(parseError(npyBytes(dictFor("<f8", "(4611686018427387904,)"), "")).find("overflow"), std::string::npos);
    EXPECT_NE(parseError(npyBytes("{'descr': '<f4', 'fortran_order': False}", "")).find("shape"), std::string::npos);
    EXPECT_NE(parseError(npyBytes("{'shape': (1,)}", "")).find("descr"), std::string::npos);
    EXPECT_NE(parseError(npyBytes("{'descr': '<f4', 'shape': (a,)}", "")).find("non-integer"), std::string::npos);
    EXPECT_NE(parseError(npyBytes("['descr', '<f4']", "")).find("dict"), std::string::npos);
    EXPECT_NE(parseError(npyBytes(dictFor("<f3", "(1,)"), "xxx")).find("unsupported descr"), std::string::npos);
    EXPECT_NE(parseError(npyBytes(dictFor("<M8", "(1,)"), std::string(8, '\0'))).find("unsupported"),
              std::string::npos);
    EXPECT_NE(parseError(npyBytes("{'descr': '<f4, 'shape': (1,)}", "")).size(), 0u);
    // Random garbage after the magic never crashes.
    std::mt19937 rng(1);
    for (int i = 0; i < 3000; ++i) {
        std::string junk = good;
        for (int k = 0; k < 4; ++k) junk[10 + rng() % (junk.size() - 10)] = char(rng());
        NpyHeader h;
        std::string err;
        parseNpyHeader(reinterpret_cast<const std::uint8_t*>(junk.data()), junk.size(), junk.size(), h, err);
    }
}

TEST(NpyFile, FilesOnDisk) {
    NpyHeader h;
    std::string err;
    std::vector<float> v;
    const fs::path zero = tempDir() / "zero.npy";
    writeBytes(zero, "");
    EXPECT_FALSE(readNpyHeader(zero.string(), h, err));
    EXPECT_NE(err.find("too short"), std::string::npos) << err;
    EXPECT_FALSE(readNpyHeader((tempDir() / "missing.npy").string(), h, err));
    EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
    EXPECT_FALSE(readNpyHeader(tempDir().string(), h, err));
    // v2 header longer than the 4 KiB first read.
    const std::string bigDict =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'pad': '" + std::string(10000, 'z') + "', }";
    const fs::path big = tempDir() / "bighdr.npy";
    writeBytes(big, npyBytes(bigDict, raw(std::vector<float>{1, 2, 3}), 2));
    ASSERT_TRUE(loadNpyAsFloat(big.string(), v, h, err)) << err;
    EXPECT_EQ(v, (std::vector<float>{1, 2, 3}));
    // v2 header claiming 4 GiB in a small file.
    std::string huge = npyBytes(dictFor("<f4", "(1,)"), raw(std::vector<float>{1}), 2);
    huge[11] = char(0xff);
    writeBytes(tempDir() / "hugeclaim.npy", huge);
    EXPECT_FALSE(readNpyHeader((tempDir() / "hugeclaim.npy").string(), h, err));
    EXPECT_FALSE(err.empty());
    // Truncated payload.
    const std::string full = npyBytes(dictFor("<f2", "(100,)"), std::string(200, '\0'));
    writeBytes(tempDir() / "trunc.npy", full.substr(0, full.size() - 10));
    EXPECT_FALSE(readNpyHeader((tempDir() / "trunc.npy").string(), h, err));
    EXPECT_EQ(err, "file ends at 318 bytes, header promises 328");
    EXPECT_FALSE(loadTensorAsFloat((tempDir() / "trunc.npy").string(), 128, 100, DType::Float16, false, v, err));
    EXPECT_FALSE(
        loadTensorAsFloat((tempDir() / "trunc.npy").string(), 128, UINT64_MAX / 2, DType::Float16, false, v, err));
}

TEST(NpyFile, MsprobeSample) {
    const std::string path =
        std::string(DUMPLENS_SAMPLES_DIR) + "/msprobe/mindspore_ut_api_accuracy_checker_files/2_3_input.npy";
    NpyHeader h;
    std::vector<float> v;
    std::string err;
    ASSERT_TRUE(loadNpyAsFloat(path, v, h, err)) << err;
    EXPECT_EQ(h.descr, "<f4");
    EXPECT_EQ(h.shape, (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(h.dataOffset, 128u);
    EXPECT_EQ(v, (std::vector<float>{1, 2, 3, 1, 2, 3}));
    TensorStats s;
    Log2Histogram hist;
    ASSERT_TRUE(computeFileStats(path.c_str(), h.dataOffset, h.dataBytes, h.dtype, h.bigEndian, s, hist, err));
    EXPECT_EQ(s.min, 1.0);
    EXPECT_EQ(s.max, 3.0);
    EXPECT_EQ(s.mean, 2.0);
    EXPECT_DOUBLE_EQ(s.l2, std::sqrt(28.0));
    EXPECT_EQ(hist.exp[Log2Histogram::binOf(0)], 2u);
    EXPECT_EQ(hist.exp[Log2Histogram::binOf(1)], 4u);
}

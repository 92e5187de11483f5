// Device layouts (FRACTAL_NZ, NC1HWC0, NC1HWC0_C04, FRACTAL_Z, NDC1HWC0, FRACTAL_Z_3D, C1HWNCoC0)
// undone into the original shape, against tensors NumPy laid out independently
// (tests/data/device_layouts/make_cases.py), and the same files as raw CANN dumps: statistics,
// histograms and the loaded values without the padding (which holds 9999 there).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/formats/cann/cann_dump_writer.h"
#include "core/formats/cann/device_layout.h"
#include "core/index/dump_indexer.h"
#include "core/index/tensor_values.h"
#include "core/io/npy_file.h"
#include "core/io/npy_writer.h"
#include "core/stats/log2_histogram.h"
#include "tests/core/temp_dir.h"

using namespace dl;

namespace {

const std::string kDir = std::string(DUMPLENS_TEST_DATA_DIR) + "/device_layouts/";

struct Case {
    std::string name, format, reading;
    std::vector<std::int64_t> stored, original;
    std::vector<float> storedData, nd;
};

std::vector<std::int64_t> dims(const std::string& s) {
    std::vector<std::int64_t> out;
    std::stringstream in(s);
    for (std::string d; std::getline(in, d, ',');) out.push_back(std::stoll(d));
    return out;
}

std::vector<float> npy(const std::string& path, const std::vector<std::int64_t>& shape) {
    std::vector<float> v;
    NpyHeader h;
    std::string error;
    EXPECT_TRUE(loadNpyAsFloat(path, v, h, error)) << path << ": " << error;
    EXPECT_EQ(h.shape, shape) << path;
    return v;
}

std::vector<Case> cases() {
    std::vector<Case> out;
    std::ifstream in(kDir + "cases.txt");
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::stringstream ls(line);
        Case c;
        std::string stored, original;
        ls >> c.name >> c.format >> stored >> original >> c.reading;
        c.stored = dims(stored);
        c.original = dims(original);
        c.storedData = npy(kDir + c.name + ".stored.npy", c.stored);
        c.nd = npy(kDir + c.name + ".nd.npy", c.original);
        out.push_back(std::move(c));
    }
    return out;
}

std::uint32_t formatEnum(const std::string& f) {
    if (f == "NC1HWC0") return 3;
    if (f == "FRACTAL_Z") return 4;
    if (f == "NC1HWC0_C04") return 12;
    if (f == "C1HWNCoC0") return 25;
    if (f == "FRACTAL_NZ") return 29;
    if (f == "NDC1HWC0") return 32;
    if (f == "FRACTAL_Z_3D") return 33;
    return 2;
}

std::vector<std::uint64_t> unsignedDims(const std::vector<std::int64_t>& d) { return {d.begin(), d.end()}; }

}  // namespace

TEST(DeviceLayout, EveryLayoutMatchesNumPy) {
    const std::vector<Case> all = cases();
    ASSERT_EQ(all.size(), 17u);
    std::vector<std::string> formats;
    for (const Case& c : all) {
        SCOPED_TRACE(c.name);
        DeviceLayout l;
        std::string why;
        ASSERT_TRUE(DeviceLayout::build(c.format, c.stored, c.original, l, why)) << why;
        EXPECT_EQ(l.originalLayout(), c.reading);
        EXPECT_EQ(l.deviceElements(), c.storedData.size());
        EXPECT_EQ(l.validElements(), c.nd.size());
        std::vector<float> nd(l.validElements(), -1.0f);
        l.toNd(c.storedData.data(), nd.data());
        EXPECT_EQ(nd, c.nd);
        // The runs name every value once, in stored order, and never a padding element.
        std::uint64_t values = 0, last = 0;
        bool ordered = true, paddingSeen = false;
        l.forEachRun([&](std::uint64_t s, std::uint64_t n, std::uint64_t, std::uint64_t) {
            ordered = ordered && s >= last;
            last = s + n;
            values += n;
            for (std::uint64_t i = 0; i < n; ++i) paddingSeen = paddingSeen || c.storedData[s + i] == 9999.0f;
        });
        EXPECT_TRUE(ordered);
        EXPECT_FALSE(paddingSeen);
        EXPECT_EQ(values, c.nd.size());
        if (std::find(formats.begin(), formats.end(), c.format) == formats.end()) formats.push_back(c.format);
    }
    EXPECT_EQ(formats.size(), 7u);  // every modelled layout has a case
}

TEST(DeviceLayout, RefusesShapesThatDoNotTile) {
    DeviceLayout l;
    std::string why;
    EXPECT_FALSE(DeviceLayout::build("FRACTAL_NZ", {2, 2, 16, 16}, {3, 20}, l, why));  // M1 should be 1
    EXPECT_FALSE(DeviceLayout::build("FRACTAL_NZ", {1, 1, 16, 16}, {}, l, why));
    EXPECT_NE(why.find("no original shape"), std::string::npos);
    EXPECT_FALSE(DeviceLayout::build("FRACTAL_NZ", {3, 2, 1, 16, 16}, {2, 3, 17, 5}, l, why));   // batch 3 vs 6
    EXPECT_FALSE(DeviceLayout::build("NC1HWC0", {1, 1, 2, 2, 16}, {1, 20, 2, 2}, l, why));       // C1 should be 2
    EXPECT_FALSE(DeviceLayout::build("FRACTAL_Z", {5, 2, 16, 16}, {20, 18, 1, 2}, l, why));      // 5 is no C1*H*W
    EXPECT_FALSE(DeviceLayout::build("C1HWNCoC0", {2, 2, 1, 2, 16, 8}, {2, 17, 2, 1}, l, why));  // Co != C0
    EXPECT_FALSE(DeviceLayout::build("FRACTAL_Z_C04", {1, 1, 16, 16}, {2, 3, 1, 1}, l, why));
    EXPECT_NE(why.find("no layout model"), std::string::npos);
    EXPECT_FALSE(DeviceLayout::build("NC1HWC0", {1, -1, 2, 2, 16}, {1, 20, 2, 2}, l, why));
    EXPECT_FALSE(DeviceLayout::build("FRACTAL_NZ", {1ll << 39, 1ll << 39, 16, 16}, {1ll << 39, 16, 1ll << 39}, l, why));
    EXPECT_NE(why.find("too many"), std::string::npos);
}

// Each case as the output of a raw CANN file: the index's figures and histogram cover the values
// only, and loadTensorValues gives the original-shape tensor.
TEST(DeviceLayout, RawCannStatisticsAndValuesSkipPadding) {
    dltest::TempDir dir;
    const std::vector<Case> all = cases();
    for (std::size_t i = 0; i < all.size(); ++i) {
        const Case& c = all[i];
        std::string bytes, error;
        ASSERT_TRUE(encodeFloats(c.storedData, DType::Float32, bytes, error)) << error;
        CannTensorSpec out{Io::Output, 1, formatEnum(c.format), unsignedDims(c.stored), unsignedDims(c.original),
                           bytes};
        dltest::writeFile(
            dir.path / ("rank_0/Net/0/0/Conv2D.Conv2D-op" + std::to_string(i) + ".1.1." + std::to_string(100 + i)),
            buildCannDumpFile({out}, "Conv2D-op" + std::to_string(i)));
    }
    DumpIndex idx;
    IndexReport report;
    std::string error;
    IndexOptions o;
    o.useCache = false;
    o.threads = 2;
    ASSERT_TRUE(indexDump(dir.path.string(), o, idx, report, error)) << error;
    ASSERT_EQ(idx.tensors.size(), all.size());
    for (const TensorRecord& t : idx.tensors) {
        const std::string name(idx.strings.view(idx.ops[t.op].name));
        const Case& c = all[std::stoul(name.substr(name.find("-op") + 3))];
        SCOPED_TRACE(c.name);
        EXPECT_TRUE(t.flags & PaddingExcluded);
        const TensorStats s = idx.stats(t);
        double sum = 0, mx = -1e30, mn = 1e30;
        for (float v : c.nd) {
            sum += v;
            mx = std::max(mx, double(v));
            mn = std::min(mn, double(v));
        }
        EXPECT_EQ(s.count, c.nd.size());
        EXPECT_EQ(s.max, mx);
        EXPECT_EQ(s.min, mn);
        EXPECT_NEAR(s.mean, sum / double(c.nd.size()), 1e-9 * std::fabs(mx));
        Log2Histogram h;
        ASSERT_TRUE(idx.histogram(t, h));
        std::uint64_t inHist = h.zero + h.nan + h.posInf + h.negInf;
        for (auto n : h.exp) inHist += n;
        EXPECT_EQ(inHist, c.nd.size());
        EXPECT_EQ(h.exp[Log2Histogram::binOf(13)], 0u);  // the bin of the 9999 padding (values stay below 2^13)
        TensorValues v;
        ASSERT_TRUE(loadTensorValues(idx, t, v, error)) << error;
        EXPECT_EQ(v.shape, c.original);
        EXPECT_EQ(v.data, c.nd);
        EXPECT_NE(v.conversion.find(c.format), std::string::npos) << v.conversion;
        EXPECT_EQ(logicalShape(idx, t), c.original);
    }
}

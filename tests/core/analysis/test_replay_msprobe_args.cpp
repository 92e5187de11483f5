// Replay of msprobe calls whose operands are Python numbers (issue 26 point 10), on the real
// msprobe corpus (tests/data/real/msprobe, fp16_overflow, tensor mode, 8.3.3 and 26.2.0): the
// scalar of `logits.to(float16) * 4096.0` comes from dump.json, and the fp16 replay equals the
// output torch wrote. That corpus has no element past 65504 (msprobe's own Mean/Norm overflow:
// it sums in fp16), so a copy with the scalar raised to 32768 and torch's product rewritten in
// the output file is the overflow analyze must find and reproduce; its Inf count is computed
// here from the dumped input's raw fp16 bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/analysis/op_replay.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/formats/msprobe/msprobe_call_args.h"
#include "core/formats/msprobe/msprobe_dump.h"
#include "core/index/dump_indexer.h"
#include "tests/core/index_uncached.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

const std::string kCorpus = std::string(DUMPLENS_TEST_DATA_DIR) + "/real/msprobe/dumps/";
const char* const kVersions[] = {"8.3.3", "26.2.0"};

fs::path dumpDir(const std::string& version) { return kCorpus + version + "/tensor_L1/fp16_overflow"; }

DumpIndex indexOf(const std::filesystem::path& root) { return dltest::indexUncached(root.string(), 2); }

std::uint32_t opNamed(const DumpIndex& idx, std::string_view name) {
    for (std::uint32_t i = 0; i < idx.ops.size(); ++i)
        if (idx.strings.view(idx.ops[i].name) == name) return i;
    ADD_FAILURE() << "no op " << name;
    return 0;
}

// dump.json holds Python's bare -Infinity / NaN tokens; the entries read here have none left
// once they are turned into strings.
nlohmann::json entry(const fs::path& dir, const std::string& name) {
    std::string text = dltest::readText(dir / "dump.json");
    neutralizeNonFiniteTokens(text.data(), text.size());
    return nlohmann::json::parse(text)["data"][name];
}

// IEEE binary16 bits -> float, written out here (not DumpLens's conversion).
float halfToFloat(std::uint16_t h) {
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    const float s = (h & 0x8000) ? -1.0f : 1.0f;
    if (e == 0) return s * std::ldexp(float(m), -24);
    if (e == 31) return m ? NAN : s * INFINITY;
    return s * std::ldexp(float(m | 0x400), e - 25);
}

std::uint16_t u16(const std::string& b, std::size_t at) {
    return std::uint16_t(std::uint8_t(b[at]) | std::uint8_t(b[at + 1]) << 8);
}
std::uint32_t u32(const std::string& b, std::size_t at) { return u16(b, at) | std::uint32_t(u16(b, at + 2)) << 16; }
void put32(std::string& b, std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b[at + i] = char(v >> (8 * i));
}

// The payload of a torch .pt (a zip of stored entries; sizes are in the central directory, the
// local headers may defer them to a data descriptor): the bytes of its "…/data/0" entry.
std::pair<std::size_t, std::size_t> payloadOf(const std::string& pt) {
    for (std::size_t p = 0; p + 46 <= pt.size(); ++p) {
        if (u32(pt, p) != 0x02014b50) continue;
        const std::size_t size = u32(pt, p + 20), nameLen = u16(pt, p + 28), local = u32(pt, p + 42);
        if (p + 46 + nameLen > pt.size() || !pt.substr(p + 46, nameLen).ends_with("/data/0")) continue;
        if (local + 30 > pt.size()) break;
        return {local + 30 + u16(pt, local + 26) + u16(pt, local + 28), size};
    }
    ADD_FAILURE() << "no data/0 entry";
    return {0, 0};
}

// Replaces the payload and both CRC-32 fields of its entry (the zip stays valid for torch).
void rewritePayload(std::string& pt, const std::string& bytes) {
    const auto [at, size] = payloadOf(pt);
    ASSERT_EQ(size, bytes.size());
    pt.replace(at, size, bytes);
    const std::uint32_t crc = std::uint32_t(std::stoul(crc32Text(bytes), nullptr, 16));
    auto nameEnds = [&](std::size_t nameAt, std::size_t len) {
        return nameAt + len <= pt.size() && pt.substr(nameAt, len).ends_with("/data/0");
    };
    for (std::size_t p = 0; p + 46 <= pt.size(); ++p) {
        if (u32(pt, p) == 0x04034b50 && nameEnds(p + 30, u16(pt, p + 26))) put32(pt, p + 14, crc);  // local header
        if (u32(pt, p) == 0x02014b50 && nameEnds(p + 46, u16(pt, p + 28))) put32(pt, p + 16, crc);  // central directory
    }
}

std::vector<float> halves(const std::string& pt) {
    const auto [at, size] = payloadOf(pt);
    std::vector<float> v(size / 2);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = halfToFloat(u16(pt, at + 2 * i));
    return v;
}

bool noted(const ReplayResult& r, const std::string& text) {
    for (const std::string& n : r.notes)
        if (n.find(text) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST(MsprobeCallArgs, ScalarsListsTensorsAndKeywordsFromTheRealDumpJson) {
    for (const char* v : kVersions) {
        SCOPED_TRACE(v);
        const std::string json = (dumpDir(v) / "dump.json").string();
        std::vector<MsprobeCallArg> args;
        std::string error;
        ASSERT_TRUE(readMsprobeCallArgs(json, "Tensor.__mul__.0.forward", args, error)) << error;
        ASSERT_EQ(args.size(), 2u);
        EXPECT_EQ(args[0].kind, MsprobeCallArg::Kind::Tensor);
        EXPECT_EQ(args[0].tensorSlot, 0);
        EXPECT_EQ(args[1].kind, MsprobeCallArg::Kind::Number);
        EXPECT_EQ(args[1].position, 1);
        EXPECT_EQ(args[1].type, "float");
        EXPECT_EQ(args[1].numbers,
                  (std::vector<double>{entry(dumpDir(v), "Tensor.__mul__.0.forward")["input_args"][1]["value"]}));
        // layer_norm(x, normalized_shape=[16], weight, bias, eps): a list, then tensors 1 and 2.
        ASSERT_TRUE(readMsprobeCallArgs(json, "Functional.layer_norm.0.forward", args, error)) << error;
        ASSERT_GE(args.size(), 4u);
        EXPECT_EQ(args[1].kind, MsprobeCallArg::Kind::List);
        EXPECT_EQ(args[1].numbers, (std::vector<double>{16}));
        EXPECT_EQ(args[2].tensorSlot, 1);
        EXPECT_EQ(args[3].tensorSlot, 2);
        // SGD's param.add_(grad, alpha=-lr): a keyword argument after the positional ones.
        ASSERT_TRUE(readMsprobeCallArgs(json, "Tensor.add_.0.forward", args, error)) << error;
        ASSERT_EQ(args.size(), 3u);
        EXPECT_EQ(args[2].keyword, "alpha");
        EXPECT_EQ(args[2].numbers, (std::vector<double>{-0.1}));
        EXPECT_FALSE(readMsprobeCallArgs(json, "Tensor.__mul__.99.forward", args, error));
        EXPECT_NE(error.find("no entry"), std::string::npos);
    }
}

// The real corpus: the replay takes 4096 from dump.json and gives, in fp16, exactly the output
// torch dumped; its max |y| is msprobe's Max/Min of that output.
TEST(MsprobeReplay, TensorTimesScalarOnTheRealCorpus) {
    for (const char* v : kVersions) {
        SCOPED_TRACE(v);
        const DumpIndex idx = indexOf(dumpDir(v));
        for (const char* name : {"Tensor.__mul__.0.forward", "Tensor.__mul__.1.forward"}) {
            SCOPED_TRACE(name);
            const ReplayResult r = replayFromIndex(idx, opNamed(idx, name), kNoIndex, ReplayOptions{});
            ASSERT_TRUE(r.available) << r.unavailableReason;
            const nlohmann::json out = entry(dumpDir(v), name)["output"][0];
            const double msprobeMax =
                std::max(std::fabs(out["Max"].get<double>()), std::fabs(out["Min"].get<double>()));
            EXPECT_EQ(r.results[0].maxAbs, msprobeMax);
            EXPECT_EQ(r.maxDiffVsDump, 0.0);
            EXPECT_FALSE(r.reproducesOverflow);  // no element passes 65504 in this corpus
            EXPECT_TRUE(noted(r, "argument 1 = 4096 (float, from dump.json)"));
        }
        // alpha != 1 is not modelled: refused with the reason, not replayed as a plain add.
        const ReplayResult add = replayFromIndex(idx, opNamed(idx, "Tensor.add_.0.forward"), kNoIndex, ReplayOptions{});
        EXPECT_FALSE(add.available);
        EXPECT_NE(add.unavailableReason.find("alpha"), std::string::npos) << add.unavailableReason;
    }
}

TEST(MsprobeReplay, AnalyzeReproducesAScalarOverflow) {
    for (const char* v : kVersions) {
        SCOPED_TRACE(v);
        dltest::TempDir dir;
        fs::copy(dumpDir(v), dir.path, fs::copy_options::recursive);
        const fs::path data = dir.path / "dump_tensor_data";
        const float scale = 32768.0f;
        // dump.json: the scalar of the first __mul__ becomes 32768.
        std::string json = dltest::readText(dir.path / "dump.json");
        const std::string key = "\"Tensor.__mul__.0.forward\"";
        const std::string was = "\"value\": 4096.0";
        const std::size_t at = json.find(was, json.find(key));
        ASSERT_NE(at, std::string::npos);
        json.replace(at, was.size(), "\"value\": 32768.0");
        dltest::writeFile(dir.path / "dump.json", json);
        // Its output: x * 32768 as torch stores it (Inf past 65504); the input's values are
        // exact fp16 times a power of two, so the product is exact or overflows.
        const std::vector<float> x = halves(dltest::readText(data / "Tensor.__mul__.0.forward.input.0.pt"));
        std::string outPt = dltest::readText(data / "Tensor.__mul__.0.forward.output.0.pt");
        std::string bytes;
        std::uint64_t infs = 0;
        for (float xi : x) {
            const double y = double(xi) * scale;
            const bool inf = std::fabs(y) >= 65520;
            infs += inf;
            std::uint16_t h = 0;
            if (inf)
                h = y > 0 ? 0x7c00 : 0xfc00;
            else {  // exact: an fp16 value scaled by 2^15, still normal here
                const float f = float(y);
                std::uint32_t u;
                std::memcpy(&u, &f, 4);
                const int e = int((u >> 23) & 0xff) - 127;
                h = f == 0 ? std::uint16_t((u >> 16) & 0x8000)
                           : std::uint16_t(((u >> 16) & 0x8000) | ((e + 15) << 10) | ((u >> 13) & 0x3ff));
                ASSERT_EQ(halfToFloat(h), f);
            }
            bytes += char(h & 0xff);
            bytes += char(h >> 8);
        }
        ASSERT_GT(infs, 0u);
        rewritePayload(outPt, bytes);
        dltest::writeFile(data / "Tensor.__mul__.0.forward.output.0.pt", outPt);

        const DumpIndex idx = indexOf(dir.path);
        const AnalysisResult r = analyze(idx);
        ASSERT_TRUE(r.overflow);
        ASSERT_TRUE(r.firstOverflow.has_value());
        ASSERT_TRUE(r.replay.has_value());
        EXPECT_EQ(idx.strings.view(idx.ops[r.replay->op].name), "Tensor.__mul__.0.forward");
        const ReplayResult& rp = *r.replay;
        ASSERT_TRUE(rp.available) << rp.unavailableReason;
        EXPECT_TRUE(rp.reproducesOverflow);
        EXPECT_EQ(rp.results[0].infCount, infs);
        EXPECT_EQ(rp.maxDiffVsDump, 0.0);
        EXPECT_FALSE(rp.results[2].overflow);
        double maxX = 0;
        for (float xi : x) maxX = std::max(maxX, std::fabs(double(xi)));
        EXPECT_EQ(rp.results[2].maxAbsUnrounded, maxX * scale);  // fp32 holds every product
        EXPECT_TRUE(noted(rp, "argument 1 = 32768 (float, from dump.json)"));
    }
}

// F.softmax(logits, dim=...): the kernel normalises the last axis, so dim=-2 (the softmax_bad
// variant) is refused with its reason, and dim=-1 replays to what torch wrote.
TEST(MsprobeReplay, SoftmaxDimFromDumpJson) {
    for (const char* v : kVersions) {
        SCOPED_TRACE(v);
        const DumpIndex bad = indexOf(kCorpus + v + "/tensor_L1/softmax_bad");
        const ReplayResult r =
            replayFromIndex(bad, opNamed(bad, "Functional.softmax.0.forward"), kNoIndex, ReplayOptions{});
        EXPECT_FALSE(r.available);
        EXPECT_NE(r.unavailableReason.find("softmax over dim -2"), std::string::npos) << r.unavailableReason;
        const DumpIndex good = indexOf(kCorpus + v + "/tensor_L1/softmax_good");
        const ReplayResult g =
            replayFromIndex(good, opNamed(good, "Functional.softmax.0.forward"), kNoIndex, ReplayOptions{});
        ASSERT_TRUE(g.available) << g.unavailableReason;
        EXPECT_LT(g.maxDiffVsDump, 1e-6);  // fp32 run: the fp32 replay against torch's output
    }
}

// Compare on msprobe statistics dumps built for the purpose: inf/NaN Max/Min from one backward op
// on, md5 (CRC-32) changes with equal statistics, shape changes, and two steps of one run matched
// by name; each checked against values computed here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/compare/compare_json.h"
#include "core/compare/compare_rows.h"
#include "core/compare/run_comparison.h"
#include "core/index/dump_indexer.h"

using namespace dl;
namespace {

// A hand-written msprobe statistics capture: {root}/step{N}/rank0/dump.json with Python's bare
// NaN/Infinity tokens, one tensor per input and output.
struct MsTensor {
    std::string dtype = "torch.float16";
    std::vector<int> shape{8, 48, 48};
    double max = 1, min = -1, mean = 0, norm = 10;
    std::string md5;  // "" when the capture has no md5
};
struct MsEntry {
    std::string name;
    std::vector<MsTensor> in, out;
};

std::string jsonNumber(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    std::ostringstream s;
    s.precision(17);
    s << v;
    return s.str();
}

std::string tensorJson(const MsTensor& t) {
    std::string s = "{\"type\": \"torch.Tensor\", \"dtype\": \"" + t.dtype + "\", \"shape\": [";
    for (std::size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
    s += "], \"Max\": " + jsonNumber(t.max) + ", \"Min\": " + jsonNumber(t.min) + ", \"Mean\": " + jsonNumber(t.mean) +
        ", \"Norm\": " + jsonNumber(t.norm) + ", \"requires_grad\": false";
    if (!t.md5.empty()) s += ", \"md5\": \"" + t.md5 + "\"";
    return s + "}";
}

void writeMsprobeStep(const std::string& root, int step, const std::vector<MsEntry>& entries) {
    const std::string dir = root + "/step" + std::to_string(step) + "/rank0";
    std::filesystem::create_directories(dir);
    std::string s = std::string(
        "{\"task\": \"statistics\", \"level\": \"L1\", \"framework\": \"pytorch\", \"dump_data_dir\": null, "
        "\"data\": {");
    for (std::size_t e = 0; e < entries.size(); ++e) {
        const bool bwd = entries[e].name.find(".backward") != std::string::npos;
        s += (e ? ", " : "") + std::string("\"") + entries[e].name + "\": {\"" + (bwd ? "input" : "input_args") +
            "\": [";
        for (std::size_t i = 0; i < entries[e].in.size(); ++i) s += (i ? ", " : "") + tensorJson(entries[e].in[i]);
        s += std::string("], ") + (bwd ? "" : "\"input_kwargs\": {}, ") + "\"output\": [";
        for (std::size_t i = 0; i < entries[e].out.size(); ++i) s += (i ? ", " : "") + tensorJson(entries[e].out[i]);
        s += "]}";
    }
    s += "}}";
    std::ofstream(dir + "/dump.json") << s;
}

RunComparison compareDirs(const std::string& a, const std::string& b, DumpIndex& ia, DumpIndex& ib,
                          CompareOptions o = {}) {
    IndexOptions io;
    io.useCache = false;
    IndexReport report;
    std::string error;
    EXPECT_TRUE(indexDump(a, io, ia, report, error)) << error;
    EXPECT_TRUE(indexDump(b, io, ib, report, error)) << error;
    return compareRuns(ia, ib, o);
}

// n entries, forward then backward, with figures that grow along the run.
std::vector<MsEntry> msprobeRun(int n) {
    std::vector<MsEntry> out;
    for (int k = 0; k < n; ++k) {
        MsEntry e;
        e.name = "Functional.linear." + std::to_string(k) + (k < n / 2 ? ".forward" : ".backward");
        for (int i = 0; i < 2; ++i) {
            MsTensor t;
            t.max = 1.5 + k + i, t.min = -0.5 - k, t.mean = 0.25 * k, t.norm = 10.0 + k;
            (i ? e.out : e.in).push_back(t);
        }
        out.push_back(e);
    }
    return out;
}

std::string tempRoot(const std::string& name) {
    const std::string d = ::testing::TempDir() + "/dl_cmp_" + name + "_" + std::to_string(::getpid());
    std::filesystem::remove_all(d);
    return d;
}

}  // namespace

TEST(CompareMsprobeStatistics, InfNanMaxMinFromOneBackwardOpOnIsNonFinite) {
    const std::string root = tempRoot("infnan");
    std::vector<MsEntry> a = msprobeRun(10), b = a;
    // From the first backward entry (k = 5) on, run A's outputs and later inputs hold inf / NaN.
    const int from = 5;
    std::size_t expectNonFinite = 0;
    for (int k = from; k < 10; ++k) {
        a[k].out[0].max = INFINITY;
        ++expectNonFinite;
        if (k > from) {
            a[k].in[0].min = k % 2 ? NAN : -INFINITY;
            ++expectNonFinite;
        }
    }
    writeMsprobeStep(root + "/a", 0, a);
    writeMsprobeStep(root + "/b", 0, b);
    DumpIndex ia, ib;
    const RunComparison c = compareDirs(root + "/a/step0", root + "/b/step0", ia, ib);
    ASSERT_EQ(c.rows.size(), 20u);
    EXPECT_EQ(c.counts[std::size_t(Verdict::NonFinite)], expectNonFinite);
    EXPECT_EQ(c.counts[std::size_t(Verdict::Identical)], 20u - expectNonFinite);
    ASSERT_GE(c.firstDivergence, 0);
    const OpRecord& o = ia.ops[ia.tensors[c.alignment.tensors[std::size_t(c.firstDivergence)].a].op];
    EXPECT_EQ(ia.strings.str(o.name), a[from].name);
    EXPECT_EQ(c.rows[std::size_t(c.firstDivergence)].verdict, Verdict::NonFinite);
    EXPECT_NE(c.story.find("run A overflows at linear " + a[from].name + " output.0 (inf), run B stays finite"),
              std::string::npos)
        << c.story;
    // The same under msprobe's rules: its overflow check is on the same figures.
    CompareOptions ms;
    ms.thresholds = CompareThresholds::defaults(CompareRules::Msprobe);
    EXPECT_EQ(compareRuns(ia, ib, ms).firstDivergence, c.firstDivergence);
    std::filesystem::remove_all(root);
}

TEST(TensorMetrics, StatisticsNanInfPresenceAgainstFiniteMaxMin) {
    // msprobe: Max = inf gives a +inf count of 1 and no Max; the other run's Max/Min are finite.
    TensorStats a, b;
    a.posInfCount = 1, a.min = -3, a.known = stat::PosInfCount | stat::Min;
    b.max = 4, b.min = -3, b.known = stat::Max | stat::Min;
    TensorMetrics m;
    computeStatsMetrics(a, b, m);
    EXPECT_TRUE(m.nanInfMismatch);
    TensorMetrics same;
    computeStatsMetrics(b, b, same);
    EXPECT_FALSE(same.nanInfMismatch);
    // Nothing known about one side: no verdict on NaN/Inf.
    TensorMetrics unknown;
    computeStatsMetrics(a, TensorStats{}, unknown);
    EXPECT_FALSE(unknown.nanInfMismatch);
}

namespace {
std::string crcText(std::uint32_t v) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", v);
    return buf;
}
}  // namespace

TEST(CompareMsprobeStatistics, ChecksumChangeIsADivergenceLikeMsprobesMd5Mode) {
    const std::string root = tempRoot("md5");
    std::vector<MsEntry> a = msprobeRun(12), b;
    std::uint32_t crc = 0x1234abcdu;
    for (MsEntry& e : a)
        for (auto* side : {&e.in, &e.out})
            for (MsTensor& t : *side) t.md5 = crcText(crc = crc * 1664525u + 1013904223u);
    b = a;
    // Checksum-only changes (statistics equal) at entries 3 and 8, a statistics change at 6.
    b[3].out[0].md5 = crcText(0xdeadbeefu);
    b[8].in[0].md5 = crcText(0xfeedf00du);
    b[6].out[0].max *= 2;
    b[6].out[0].md5 = crcText(0x0badf00du);
    writeMsprobeStep(root + "/a", 0, a);
    writeMsprobeStep(root + "/b", 0, b);
    // msprobe's md5 mode: "diff" wherever the checksums differ; the first such row in order.
    std::string firstDiff;
    std::size_t diffs = 0;
    for (std::size_t k = 0; k < a.size(); ++k)
        for (int side = 0; side < 2; ++side) {
            const MsTensor &x = side ? a[k].out[0] : a[k].in[0], &y = side ? b[k].out[0] : b[k].in[0];
            if (x.md5 == y.md5) continue;
            ++diffs;
            if (firstDiff.empty()) firstDiff = a[k].name;
        }
    DumpIndex ia, ib;
    const RunComparison c = compareDirs(root + "/a/step0", root + "/b/step0", ia, ib);
    ASSERT_EQ(c.rows.size(), 24u);
    ASSERT_FALSE(c.md5A.empty());
    EXPECT_EQ(c.diverged, diffs);
    EXPECT_EQ(c.counts[std::size_t(Verdict::Md5)], 2u);
    EXPECT_EQ(c.counts[std::size_t(Verdict::Diverged)], 1u);
    EXPECT_EQ(c.counts[std::size_t(Verdict::Identical)], 24u - diffs);
    ASSERT_GE(c.firstDivergence, 0);
    const OpRecord& o = ia.ops[ia.tensors[c.alignment.tensors[std::size_t(c.firstDivergence)].a].op];
    EXPECT_EQ(ia.strings.str(o.name), firstDiff);
    EXPECT_EQ(c.rows[std::size_t(c.firstDivergence)].verdict, Verdict::Md5);
    EXPECT_NE(c.rows[std::size_t(c.firstDivergence)].reason.find(crcText(0xdeadbeefu)), std::string::npos);
    const auto j = nlohmann::json::parse(compareJson(c, ia, ib));
    EXPECT_EQ(j["first_divergence"]["class"], "md5");
    EXPECT_EQ(j["counts"]["md5"], 2);
    std::filesystem::remove_all(root);
}

TEST(CompareMsprobeStatistics, ShapeChangeIsADivergence) {
    const std::string root = tempRoot("shape");
    std::vector<MsEntry> a = msprobeRun(6), b = a;
    b[2].out[0].shape = {8, 48, 47};
    writeMsprobeStep(root + "/a", 0, a);
    writeMsprobeStep(root + "/b", 0, b);
    DumpIndex ia, ib;
    const RunComparison c = compareDirs(root + "/a/step0", root + "/b/step0", ia, ib);
    ASSERT_EQ(c.rows.size(), 12u);
    ASSERT_GE(c.firstDivergence, 0);
    const TensorComparison& row = c.rows[std::size_t(c.firstDivergence)];
    EXPECT_EQ(row.verdict, Verdict::Shape);
    EXPECT_TRUE(row.diverged);
    EXPECT_EQ(row.reason, "shapes differ: [8,48,48] vs [8,48,47]");
    EXPECT_EQ(ia.strings.str(ia.ops[ia.tensors[c.alignment.tensors[std::size_t(c.firstDivergence)].a].op].name),
              a[2].name);
    EXPECT_EQ(c.diverged, 1u);
    std::filesystem::remove_all(root);
}

TEST(CompareMsprobeStatistics, TwoStepsMatchByNameAndSaySo) {
    const std::string root = tempRoot("steps");
    std::vector<MsEntry> s0 = msprobeRun(8), s1 = s0;
    for (MsEntry& e : s1) e.out[0].max *= 1.5;  // the next step's figures moved
    writeMsprobeStep(root, 0, s0);
    writeMsprobeStep(root, 1, s1);
    DumpIndex ia, ib;
    const RunComparison c = compareDirs(root + "/step0", root + "/step1", ia, ib);
    EXPECT_EQ(c.alignment.tensors.size(), 16u);
    EXPECT_EQ(c.alignment.exactOps, 8u);
    EXPECT_EQ(c.alignment.onlyTensorsA + c.alignment.onlyTensorsB, 0u);
    ASSERT_FALSE(c.warnings.empty());
    EXPECT_NE(c.warnings[0].find("share no iteration (A: 0; B: 1)"), std::string::npos) << c.warnings[0];
    EXPECT_EQ(c.counts[std::size_t(Verdict::Identical)], 8u);  // the inputs did not move
    // Both steps in one capture: pick them by number.
    DumpIndex all;
    IndexOptions io;
    io.useCache = false;
    IndexReport report;
    std::string error;
    ASSERT_TRUE(indexDump(root, io, all, report, error)) << error;
    CompareOptions o;
    o.iterations = {0u, 1u};
    const RunComparison d = compareRuns(all, all, o);
    EXPECT_EQ(d.alignment.tensors.size(), 16u);
    EXPECT_EQ(d.alignment.onlyTensorsA + d.alignment.onlyTensorsB, 0u);
    ASSERT_FALSE(d.warnings.empty());
    EXPECT_NE(d.warnings[0].find("comparing iteration 0 of run A with iteration 1 of run B"), std::string::npos);
    EXPECT_EQ(d.diverged, c.diverged);
    // Without a choice the same capture pairs each step with itself: nothing changes.
    EXPECT_EQ(compareRuns(all, all, {}).counts[std::size_t(Verdict::Identical)], 32u);
    std::filesystem::remove_all(root);
}

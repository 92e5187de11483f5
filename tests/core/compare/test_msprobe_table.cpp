// `compare --format msprobe-csv`: msprobe's compare table row for row. The header against
// msprobe's own column constants; one row per argument (non-tensors too) on the real sample dumps
// and on built pairs; statistics diffs, tensor metrics and checksums against values computed
// here independently (plain float64 loops on the data the test wrote).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "core/compare/msprobe_table.h"
#include "core/formats/msprobe/msprobe_dump.h"
#include "core/index/dump_indexer.h"
#include "core/io/npy_writer.h"
#include "tests/core/compare/csv_cells.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

// Copied from msprobe's source, debug/accuracy_tools/msprobe/core/common/const.py (CompareConst:
// BASIC_INFO, ALL_COMPARE_INDEX, SUMMARY_COMPARE_INDEX, SUMMARY_INFO; COMPARE_RESULT_HEADER =
// BASIC_INFO + ALL_COMPARE_INDEX + SUMMARY_INFO + [REQ_GRAD_CONSIST, ACCURACY, ERROR_MESSAGE],
// SUMMARY_COMPARE_RESULT_HEADER = BASIC_INFO + SUMMARY_COMPARE_INDEX + SUMMARY_INFO +
// [REQ_GRAD_CONSIST, RESULT, ERROR_MESSAGE], MD5_COMPARE_RESULT_HEADER = BASIC_INFO + [NPU_MD5,
// BENCH_MD5, REQ_GRAD_CONSIST] + MD5_COMPARE_INDEX); STACK and DATA_NAME are appended by
// core/compare/acc_compare.py CreateTable.make_result_df.
const std::vector<std::string> BASIC_INFO = {"NPU Name",          "Bench Name",         "NPU Dtype",
                                             "Bench Dtype",       "NPU Tensor Shape",   "Bench Tensor Shape",
                                             "NPU Requires_grad", "Bench Requires_grad"};
const std::vector<std::string> ALL_COMPARE_INDEX = {
    "Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio", "Five Thousandths Err Ratio"};
const std::vector<std::string> SUMMARY_COMPARE_INDEX = {"Max diff",        "Min diff",       "Mean diff",
                                                        "L2norm diff",     "MaxRelativeErr", "MinRelativeErr",
                                                        "MeanRelativeErr", "NormRelativeErr"};
const std::vector<std::string> SUMMARY_INFO = {"NPU max",   "NPU min",   "NPU mean",   "NPU l2norm",
                                               "Bench max", "Bench min", "Bench mean", "Bench l2norm"};
const std::vector<std::string> MD5_COMPARE_INDEX = {"Result"};
const std::string REQ_GRAD_CONSIST = "Requires_grad Consistent", ACCURACY = "Accuracy Reached or Not",
                  ERROR_MESSAGE = "Err_message", RESULT = "Result", NPU_MD5 = "NPU MD5", BENCH_MD5 = "BENCH MD5",
                  STACK = "NPU_Stack_Info", DATA_NAME = "Data_name";

std::vector<std::string> cat(std::initializer_list<std::vector<std::string>> parts) {
    std::vector<std::string> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

using Table = std::vector<std::map<std::string, std::string>>;

using dltest::parseCsv;

struct Result {
    std::vector<std::string> header;
    Table rows;
    MsprobeTableReport report;
};

// msprobe 8.3's table (the generation these tests were written against); 26.x's in test_msprobe_real.
Result table(const fs::path& a, const fs::path& b, IterationChoice it = {}, bool highlight = true,
             MsprobeGeneration g = MsprobeGeneration::V8_3) {
    IndexOptions io;
    io.useCache = false;
    IndexReport rep;
    std::string error;
    DumpIndex ia, ib;
    EXPECT_TRUE(indexDump(a.string(), io, ia, rep, error)) << error;
    EXPECT_TRUE(indexDump(b.string(), io, ib, rep, error)) << error;
    Result r;
    std::string csv;
    MsprobeTableOptions mo;
    mo.generation = g;
    mo.highlight = highlight;
    mo.iterations = it;
    EXPECT_TRUE(writeMsprobeTableCsv(ia, ib, mo, csv, r.report, error)) << error;
    const auto cells = parseCsv(csv);
    if (cells.empty()) return r;
    r.header = cells[0];
    for (std::size_t i = 1; i < cells.size(); ++i) {
        EXPECT_EQ(cells[i].size(), r.header.size()) << "row " << i;
        std::map<std::string, std::string> row;
        for (std::size_t k = 0; k < r.header.size() && k < cells[i].size(); ++k) row[r.header[k]] = cells[i][k];
        r.rows.push_back(std::move(row));
    }
    return r;
}

// Rows msprobe's op_item_parse gives an entry: a dict with a string "type" is one leaf; null is
// one (a row of None); lists and other dicts are walked; bare values give none.
std::size_t leaves(const nlohmann::json& v) {
    if (v.is_null()) return 1;
    if (v.is_object() && v.contains("type") && v["type"].is_string()) return 1;
    if (v.is_object() && v.contains("class_type")) return 1;
    std::size_t n = 0;
    if (v.is_array() || v.is_object())
        for (const auto& x : v) n += leaves(x);
    return n;
}

std::size_t expectedRows(const fs::path& dumpJson) {
    std::string text;
    {
        std::ifstream in(dumpJson);
        text.assign(std::istreambuf_iterator<char>(in), {});
    }
    neutralizeNonFiniteTokens(text.data(), text.size());  // bare NaN/Infinity become strings
    const auto j = nlohmann::json::parse(text);
    std::size_t n = 0;
    for (const auto& [name, entry] : j["data"].items())
        for (const auto& [key, v] : entry.items())
            if (key != "is_recompute") n += leaves(v);
    return n;
}

double num(const std::string& s) {
    EXPECT_FALSE(s.empty());
    return std::strtod(s.c_str(), nullptr);
}

std::string pct(double rel) { return pythonFloatText(rel) + "%"; }

}  // namespace

TEST(MsprobeTable, HeaderIsMsprobesColumnList) {
    EXPECT_EQ(
        msprobeTableHeader(MsprobeTableMode::Tensor, false, MsprobeGeneration::V8_3),
        cat({BASIC_INFO, ALL_COMPARE_INDEX, SUMMARY_INFO, {REQ_GRAD_CONSIST, ACCURACY, ERROR_MESSAGE}, {DATA_NAME}}));
    EXPECT_EQ(msprobeTableHeader(MsprobeTableMode::Tensor, true, MsprobeGeneration::V8_3),
              cat({BASIC_INFO,
                   ALL_COMPARE_INDEX,
                   SUMMARY_INFO,
                   {REQ_GRAD_CONSIST, ACCURACY, ERROR_MESSAGE},
                   {STACK, DATA_NAME}}));
    EXPECT_EQ(msprobeTableHeader(MsprobeTableMode::Statistics, false, MsprobeGeneration::V8_3),
              cat({BASIC_INFO, SUMMARY_COMPARE_INDEX, SUMMARY_INFO, {REQ_GRAD_CONSIST, RESULT, ERROR_MESSAGE}}));
    EXPECT_EQ(
        msprobeTableHeader(MsprobeTableMode::Statistics, true, MsprobeGeneration::V8_3),
        cat({BASIC_INFO, SUMMARY_COMPARE_INDEX, SUMMARY_INFO, {REQ_GRAD_CONSIST, RESULT, ERROR_MESSAGE}, {STACK}}));
    EXPECT_EQ(msprobeTableHeader(MsprobeTableMode::Md5, false, MsprobeGeneration::V8_3),
              cat({BASIC_INFO, {NPU_MD5, BENCH_MD5, REQ_GRAD_CONSIST}, MD5_COMPARE_INDEX}));
}

TEST(MsprobeTable, PythonTextOfFloatsAndCrc32) {
    EXPECT_EQ(pythonFloatText(1.0), "1.0");
    EXPECT_EQ(pythonFloatText(100000.0), "100000.0");
    EXPECT_EQ(pythonFloatText(1e16), "1e+16");
    EXPECT_EQ(pythonFloatText(1.5e-5), "1.5e-05");
    EXPECT_EQ(pythonFloatText(0.0001), "0.0001");
    EXPECT_EQ(pythonFloatText(-2.5), "-2.5");
    EXPECT_EQ(pythonFloatText(0.1 + 0.2), "0.30000000000000004");
    EXPECT_EQ(pythonFloatText(123456789012345.6), "123456789012345.6");
    EXPECT_EQ(crc32Text("123456789"), "cbf43926");  // the CRC-32 check value
    EXPECT_EQ(crc32Text(""), "00000000");
}

// The real msprobe sample dumps, each against itself: every argument a row, every row matched,
// every figure equal: 8.3 subtracts them (0.0, 0.0%, N/A where the figure is 0 or not a number),
// 26.x writes 0 and pass.
TEST(MsprobeTable, SampleDumpsOneRowPerArgument) {
    const fs::path samples = fs::path(DUMPLENS_SAMPLES_DIR) / "msprobe";
    for (const MsprobeGeneration g : {MsprobeGeneration::V8_3, MsprobeGeneration::V26})
        for (const char* name :
             {"layer_mapping_pytorch", "layer_mapping_mindspore", "mindspore_ut_compare_mindspore_data",
              "mindspore_ut_compare_pytorch_data", "visualization_ut_input_step0_rank0"}) {
            SCOPED_TRACE(std::string(name) + " " + msprobeGenerationName(g));
            const fs::path dir = samples / name;
            const Result r = table(dir, dir, {}, false, g);
            const bool stack = fs::exists(dir / "stack.json");
            EXPECT_EQ(r.header, msprobeTableHeader(r.report.mode, stack, g));
            ASSERT_EQ(r.rows.size(), expectedRows(dir / "dump.json"));
            std::size_t nonTensor = 0;
            for (const auto& row : r.rows) {
                EXPECT_EQ(row.at("Bench Name"), row.at("NPU Name"));
                EXPECT_EQ(row.at(REQ_GRAD_CONSIST), "True");
                nonTensor += row.at("NPU Dtype").rfind("<class '", 0) == 0;
                if (r.report.mode != MsprobeTableMode::Statistics) continue;
                for (std::size_t k = 0; k < 4; ++k) {
                    const std::string& diff = row.at(SUMMARY_COMPARE_INDEX[k]);
                    const std::string& rel = row.at(SUMMARY_COMPARE_INDEX[k + 4]);
                    if (g == MsprobeGeneration::V26) {
                        EXPECT_EQ(diff, "0") << row.at("NPU Name");
                        EXPECT_EQ(rel, "0") << row.at("NPU Name");
                    } else {
                        EXPECT_TRUE(diff == "0.0" || diff == "N/A" || diff == "Nan")
                            << row.at("NPU Name") << " " << diff;
                        EXPECT_TRUE(rel == "0.0%" || rel == "N/A" || rel == "Nan") << row.at("NPU Name") << " " << rel;
                    }
                }
                EXPECT_EQ(row.at(RESULT), g == MsprobeGeneration::V26 ? "pass" : "");
            }
            if (std::string(name) == "mindspore_ut_compare_mindspore_data") {
                EXPECT_GT(nonTensor, 0u);
            }
        }
}

namespace {

struct Arg {
    std::string json;  // the argument as dump.json holds it
};

std::string tensorJson(const std::string& dtype, const std::vector<std::int64_t>& shape, double mx, double mn,
                       double mean, double norm, bool reqGrad, const std::string& extra = "") {
    std::string s = "{\"type\": \"torch.Tensor\", \"dtype\": \"" + dtype + "\", \"shape\": [";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    auto n = [](double v) {
        return std::isnan(v) ? std::string("NaN")
            : std::isinf(v)  ? std::string(v > 0 ? "Infinity" : "-Infinity")
                             : nlohmann::json(v).dump();
    };
    s += "], \"Max\": " + n(mx) + ", \"Min\": " + n(mn) + ", \"Mean\": " + n(mean) + ", \"Norm\": " + n(norm) +
        ", \"requires_grad\": " + (reqGrad ? "true" : "false") + extra + "}";
    return s;
}

void writeDump(const fs::path& dir, const std::string& task, const std::string& framework, const std::string& data) {
    dltest::writeFile(dir / "dump.json",
                      "{\"task\": \"" + task + "\", \"level\": \"L1\", \"framework\": \"" + framework +
                          "\", \"dump_data_dir\": null, \"data\": {" + data + "}}");
}

}  // namespace

TEST(MsprobeTable, StatisticsDiffsNonTensorsAndMessages) {
    dltest::TempDir ta, tb;
    // linear: input 0 a tensor whose Max moves; input 1 an int, 2 a float, 3 a bool, 4 None, a
    // slice and a torch.Size in kwargs; output 0 overflows in run A only; output 1 loses requires_grad in B.
    const double maxA = 3.25, maxB = 3.0, minA = -1.5, minB = -1.25;
    auto data = [&](bool isA) {
        return std::string("\"Functional.linear.0.forward\": {\"input_args\": [") +
            tensorJson("torch.float32", {4, 8}, isA ? maxA : maxB, isA ? minA : minB, 0.5, 7.0, true) +
            ", {\"type\": \"int\", \"value\": " + (isA ? "3" : "5") + "}, {\"type\": \"float\", \"value\": 0.5}" +
            ", {\"type\": \"bool\", \"value\": true}, null], \"input_kwargs\": {\"s\": {\"type\": \"slice\", "
            "\"value\": [0, 4, null]}" +
            ", \"size\": {\"type\": \"torch.Size\", \"value\": [4, 8]}}, \"output\": [" +
            tensorJson("torch.float32", {4, 4}, isA ? INFINITY : 9.0, -2.0, 1.0, 20.0, true) + ", " +
            tensorJson("torch.float32", {4, 4}, 2.0, 0.0, 1.0, 0.0, isA) + "]}";
    };
    writeDump(ta.path / "step0/rank0", "statistics", "pytorch", data(true));
    writeDump(tb.path / "step0/rank0", "statistics", "pytorch", data(false));
    const Result r = table(ta.path, tb.path);
    ASSERT_EQ(r.report.mode, MsprobeTableMode::Statistics);
    ASSERT_EQ(r.rows.size(), 9u);  // 5 input_args (None included) + 2 kwargs + 2 outputs
    std::map<std::string, std::map<std::string, std::string>> by;
    for (const auto& row : r.rows) by[row.at("NPU Name")] = row;
    const std::string e = "Functional.linear.0.forward.";
    // The moved tensor: diffs a - b, relative |d / b| in percent, as float64.
    const auto& t = by.at(e + "input.0");
    EXPECT_EQ(num(t.at("Max diff")), maxA - maxB);
    EXPECT_EQ(t.at("MaxRelativeErr"), pct(std::fabs((maxA - maxB) / maxB * 100)));
    EXPECT_EQ(num(t.at("Min diff")), minA - minB);
    EXPECT_EQ(t.at("MinRelativeErr"), pct(std::fabs((minA - minB) / minB * 100)));
    EXPECT_EQ(t.at("Mean diff"), "0.0");  // 8.3 subtracts equal figures too (26.x writes "0")
    EXPECT_EQ(t.at("MeanRelativeErr"), "0.0%");
    EXPECT_EQ(t.at("NPU Tensor Shape"), "[4, 8]");
    EXPECT_EQ(t.at("NPU Requires_grad"), "True");
    // Non-tensors: Python's type, shape [] and the value in all four statistics.
    const auto& i1 = by.at(e + "input.1");
    EXPECT_EQ(i1.at("NPU Dtype"), "<class 'int'>");
    EXPECT_EQ(i1.at("NPU Tensor Shape"), "[]");
    EXPECT_EQ(i1.at("NPU max"), "3");
    EXPECT_EQ(i1.at("Bench l2norm"), "5");
    EXPECT_EQ(num(i1.at("Max diff")), -2.0);
    EXPECT_EQ(i1.at("MaxRelativeErr"), pct(std::fabs(-2.0 / 5 * 100)));
    EXPECT_EQ(by.at(e + "input.2").at("NPU Dtype"), "<class 'float'>");
    EXPECT_EQ(by.at(e + "input.3").at("NPU max"), "True");
    EXPECT_EQ(by.at(e + "input.4").at("NPU Dtype"), "None");
    EXPECT_EQ(by.at(e + "input.s").at("NPU Dtype"), "slice");
    EXPECT_EQ(by.at(e + "input.s").at("NPU Tensor Shape"), "(3,)");
    EXPECT_EQ(by.at(e + "input.size").at("NPU Tensor Shape"), "[4, 8]");
    // The overflow: "inf" diff and msprobe's red highlight message.
    const auto& o0 = by.at(e + "output.0");
    EXPECT_EQ(o0.at("NPU max"), "inf");
    EXPECT_EQ(o0.at("Max diff"), "inf");
    EXPECT_NE(o0.at(ERROR_MESSAGE).find("maximum or minimum is nan, -inf, or inf"), std::string::npos);
    // requires_grad lost: the flag, the message and the yellow highlight.
    const auto& o1 = by.at(e + "output.1");
    EXPECT_EQ(o1.at("Bench Requires_grad"), "False");
    EXPECT_EQ(o1.at(REQ_GRAD_CONSIST), "False");
    EXPECT_EQ(o1.at(ERROR_MESSAGE), "Requires_grad inconsistent. \nrequires_grad is inconsistent");
    EXPECT_EQ(o1.at("L2norm diff"), "0.0");
    EXPECT_EQ(o1.at("MinRelativeErr"), "N/A");  // 8.3: the bench's figure is 0
}

TEST(MsprobeTable, UnmatchedArgumentsAndChecksums) {
    dltest::TempDir ta, tb;
    auto entry = [](const std::string& name, const std::string& md5In, const std::string& md5Out, int shape) {
        return "\"" + name + "\": {\"input_args\": [" +
            tensorJson("torch.float16", {2, shape}, 1, 0, 0.5, 1, false, ", \"md5\": \"" + md5In + "\"") +
            ", {\"type\": \"int\", \"value\": 7}], \"output\": [" +
            tensorJson("torch.float16", {2, shape}, 1, 0, 0.5, 1, false, ", \"md5\": \"" + md5Out + "\"") + "]}";
    };
    writeDump(ta.path / "step0/rank0", "statistics", "pytorch",
              entry("Torch.add.0.forward", "0000aaaa", "0000bbbb", 3) + ", " +
                  entry("Torch.mul.0.forward", "1111aaaa", "1111bbbb", 3));
    // B: add's output checksum differs; mul's shapes differ (msprobe matches on name and shape).
    writeDump(tb.path / "step0/rank0", "statistics", "pytorch",
              entry("Torch.add.0.forward", "0000aaaa", "ffffffff", 3) + ", " +
                  entry("Torch.mul.0.forward", "1111aaaa", "1111bbbb", 4));
    const Result r = table(ta.path, tb.path);
    ASSERT_EQ(r.report.mode, MsprobeTableMode::Md5);
    EXPECT_EQ(r.header, cat({BASIC_INFO, {NPU_MD5, BENCH_MD5, REQ_GRAD_CONSIST}, MD5_COMPARE_INDEX}));
    ASSERT_EQ(r.rows.size(), 6u);
    EXPECT_EQ(r.rows[0].at(RESULT), "pass");
    EXPECT_EQ(r.rows[1].at("NPU MD5"), crc32Text("7"));  // a non-tensor's checksum is of str(value)
    EXPECT_EQ(r.rows[1].at(RESULT), "pass");
    EXPECT_EQ(r.rows[2].at(RESULT), "Different");
    EXPECT_EQ(r.rows[2].at(BENCH_MD5), "ffffffff");
    EXPECT_EQ(r.rows[3].at("Bench Name"), "N/A");
    EXPECT_EQ(r.rows[3].at(RESULT), "N/A");
    EXPECT_EQ(r.rows[4].at(RESULT), "pass");  // the int argument has no shape to differ in
    EXPECT_EQ(r.rows[5].at("Bench Name"), "N/A");
    EXPECT_EQ(r.report.matched, 4u);
}

namespace {

struct Tensor {
    std::vector<std::int64_t> shape;
    std::vector<float> a, b;
};

// A MindSpore msprobe tensor dump: entry "Functional.gelu.0.forward" with `tensors` as inputs then
// one output, plus an int argument; .npy files in dump_tensor_data.
void writeTensorRun(const fs::path& dir, const std::vector<Tensor>& ts, bool isA) {
    std::string data = "\"Functional.gelu.0.forward\": {\"input_args\": [";
    std::string error;
    for (std::size_t i = 0; i < ts.size(); ++i) {
        const bool out = i + 1 == ts.size();
        // msprobe names a saved tensor by its position: the int argument sits at input.1.
        const std::string label = out ? "output.0" : "input." + std::to_string(i == 0 ? 0 : i + 1);
        const std::string file = "Functional.gelu.0.forward." + label + ".npy";
        const std::vector<float>& v = isA ? ts[i].a : ts[i].b;
        std::string bytes;
        EXPECT_TRUE(encodeFloats(v, DType::Float32, bytes, error)) << error;
        fs::create_directories(dir / "dump_tensor_data");
        EXPECT_TRUE(writeNpyFile((dir / "dump_tensor_data" / file).string(), DType::Float32, ts[i].shape, bytes, error))
            << error;
        double mx = -INFINITY, mn = INFINITY, sum = 0, sq = 0;
        for (float x : v) mx = std::max(mx, double(x)), mn = std::min(mn, double(x)), sum += x, sq += double(x) * x;
        const std::string t = tensorJson("Float32", ts[i].shape, mx, mn, sum / double(v.size()), std::sqrt(sq), false,
                                         ", \"data_name\": \"" + file + "\"");
        if (out)
            data += "], \"output\": [" + t + "]}";
        else
            data += (i ? ", " : "") + t + (i == 0 ? ", {\"type\": \"int\", \"value\": 2}" : "");
    }
    dltest::writeFile(dir / "dump.json",
                      "{\"task\": \"tensor\", \"level\": \"L1\", \"framework\": \"mindspore\", "
                      "\"dump_data_dir\": \"" +
                          (dir / "dump_tensor_data").string() + "\", \"data\": {" + data + "}}");
}

// msprobe's metrics in plain float64 (npy_compare.py), for the check.
struct Expected {
    double cos, euc, maxAbs, maxRel, r1, r5;
};
Expected expected(const std::vector<float>& a, const std::vector<float>& b) {
    Expected e{};
    double dot = 0, na = 0, nb = 0, d2 = 0;
    std::size_t in1 = 0, in5 = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double x = a[i], y = b[i];
        dot += x * y, na += x * x, nb += y * y, d2 += (x - y) * (x - y);
        e.maxAbs = std::max(e.maxAbs, std::fabs(x - y));
        const double eps = 2.220446049250313e-16;
        const double rel = y == 0 ? std::fabs(((x + eps) - eps) / eps) : std::fabs((x - y) / y);
        e.maxRel = std::max(e.maxRel, rel);
        in1 += rel < 0.001, in5 += rel < 0.005;
    }
    e.cos = dot / (std::sqrt(na) * std::sqrt(nb));
    e.euc = std::sqrt(d2);
    e.r1 = double(in1) / double(a.size()), e.r5 = double(in5) / double(a.size());
    return e;
}

}  // namespace

TEST(MsprobeTable, TensorMetricsAgainstFloat64) {
    std::mt19937 rng(7);
    std::normal_distribution<float> g(0, 1);
    std::vector<Tensor> ts(3);
    ts[0].shape = {16, 32};
    ts[1].shape = {1};      // one element: no cosine
    ts[2].shape = {8, 64};  // the output: drifts far
    for (std::size_t k = 0; k < ts.size(); ++k) {
        std::size_t n = 1;
        for (auto d : ts[k].shape) n *= std::size_t(d);
        for (std::size_t i = 0; i < n; ++i) {
            const float x = g(rng);
            ts[k].a.push_back(x);
            ts[k].b.push_back(k == 2 ? x + 0.5f * g(rng) : x * (1 + 1e-4f * g(rng)));
        }
    }
    dltest::TempDir ta, tb;
    writeTensorRun(ta.path / "rank0", ts, true);
    writeTensorRun(tb.path / "rank0", ts, false);
    const Result r = table(ta.path, tb.path);
    ASSERT_EQ(r.report.mode, MsprobeTableMode::Tensor);
    ASSERT_EQ(r.rows.size(), 4u);  // input.0, the int (input.1), input.2, output.0
    const std::string e = "Functional.gelu.0.forward.";
    EXPECT_EQ(r.rows[0].at("NPU Name"), e + "input.0");
    EXPECT_EQ(r.rows[1].at("NPU Name"), e + "input.1");
    EXPECT_EQ(r.rows[2].at("NPU Name"), e + "input.2");
    EXPECT_EQ(r.rows[3].at("NPU Name"), e + "output.0");
    const Tensor* byRow[4] = {&ts[0], nullptr, &ts[1], &ts[2]};
    for (int k : {0, 2, 3}) {
        SCOPED_TRACE(k);
        const auto& row = r.rows[std::size_t(k)];
        const Expected x = expected(byRow[k]->a, byRow[k]->b);
        EXPECT_NEAR(num(row.at("EucDist")), x.euc, 1e-11);
        EXPECT_NEAR(num(row.at("MaxAbsErr")), x.maxAbs, 1e-11);
        EXPECT_NEAR(num(row.at("MaxRelativeErr")), x.maxRel, 1e-11 * std::max(1.0, x.maxRel));
        EXPECT_NEAR(num(row.at("One Thousandth Err Ratio")), x.r1, 1e-12);
        EXPECT_NEAR(num(row.at("Five Thousandths Err Ratio")), x.r5, 1e-12);
        if (k == 2) {
            EXPECT_EQ(row.at("Cosine"), "unsupported");
            EXPECT_EQ(row.at(ERROR_MESSAGE), "This is a 1-d tensor of length 1.");
            EXPECT_EQ(row.at(ACCURACY), "None");
        } else {
            EXPECT_NEAR(num(row.at("Cosine")), x.cos, x.cos > 0.9999 ? 5e-7 : 1e-11);
            // check_accuracy: cosine < 0.99 with max abs err > 0.001, or cosine < 0.9, or max abs err > 1.
            const bool no = (x.cos < 0.99 && x.maxAbs > 0.001) || x.cos < 0.9 || x.maxAbs > 1;
            EXPECT_EQ(row.at(ACCURACY), no ? "No" : "Yes");
            const std::string file = e + (k ? "output.0" : "input.0") + ".npy";
            EXPECT_EQ(row.at(DATA_NAME), "['" + file + "', '" + file + "']");
        }
    }
    // The int: no data file, so no metrics; msprobe 8.3.3 writes "unsupported" there (its real table,
    // tests/data/real/msprobe/tables/8.3.3/tensor_L1/softmax_bad-vs-softmax_good, row layer_norm input.1.0).
    EXPECT_EQ(r.rows[1].at("NPU Dtype"), "<class 'int'>");
    EXPECT_EQ(r.rows[1].at("Cosine"), "unsupported");
    EXPECT_EQ(r.rows[1].at(ERROR_MESSAGE), "NPU does not have data file.");
    EXPECT_EQ(r.rows[1].at(DATA_NAME), "['-1', '-1']");
    // The output drifted: its one-thousandth ratio fell far below the inputs' (msprobe's red rule).
    EXPECT_NE(r.rows[3].at(ERROR_MESSAGE).find("one thousandth err ratio exceeds 0.9, while the output's is below 0.6"),
              std::string::npos)
        << r.rows[3].at(ERROR_MESSAGE);
}

TEST(MsprobeTable, NotMsprobeIsAClearError) {
    dltest::TempDir ta;
    dltest::writeFile(ta.path / "note.txt", "x");
    DumpIndex ia, ib;
    ia.root = ib.root = ta.path.string();
    std::string csv, error;
    MsprobeTableReport rep;
    EXPECT_FALSE(writeMsprobeTableCsv(ia, ib, {}, csv, rep, error));
    EXPECT_NE(error.find("needs two msprobe dumps"), std::string::npos) << error;
    EXPECT_NE(error.find(ta.path.string()), std::string::npos) << error;
}

// The bundled demo dumps: on-disk formats (names, npy headers, statistic.csv, metadata), the
// numbers of the story (SqrtGrad overflows in iteration 5, decoy, bf16 twin, clock offsets),
// and determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <unistd.h>

#include "core/demo/demo_dumps.h"
#include "core/formats/mindspore/statistic_csv_writer.h"
#include "core/io/npy_writer.h"
#include "core/util/half.h"
#include "tests/core/shared_demo.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;
using namespace dl::demo;

namespace {

std::string readFile(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == sep) {
            out.push_back(cur);
            cur.clear();
        } else
            cur += c;
    }
    out.push_back(cur);
    return out;
}

// CSV fields, honouring the double-quoted Shape cell.
std::vector<std::string> csvFields(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (char c : line) {
        if (c == '"') quoted = !quoted;
        if (c == ',' && !quoted) {
            out.push_back(cur);
            cur.clear();
        } else
            cur += c;
    }
    out.push_back(cur);
    return out;
}

struct ParsedName {
    std::string opType, opName, io, format, dtype;
    std::uint64_t task = 0, stream = 0, slot = 0;
    std::int64_t ts = 0;
};

bool allDigits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// docs/formats.md 1.4: first token = op_type, the rest parsed from the right.
bool parseName(const std::string& file, bool nineFields, ParsedName& p) {
    auto t = split(file, '.');
    const std::size_t need = nineFields ? 10 : 9;
    if (t.size() < need || t.back() != "npy") return false;
    t.pop_back();
    if (nineFields) {
        p.dtype = t.back();
        t.pop_back();
    }
    p.format = t.back();
    t.pop_back();
    if (!allDigits(t.back())) return false;
    p.slot = std::stoull(t.back());
    t.pop_back();
    p.io = t.back();
    t.pop_back();
    if (p.io != "input" && p.io != "output") return false;
    if (!allDigits(t.back()) || t.back().size() != 16) return false;
    p.ts = std::stoll(t.back());
    t.pop_back();
    if (!allDigits(t.back())) return false;
    p.stream = std::stoull(t.back());
    t.pop_back();
    if (!allDigits(t.back())) return false;
    p.task = std::stoull(t.back());
    t.pop_back();
    p.opType = t.front();
    for (std::size_t i = 1; i < t.size(); ++i) p.opName += (i > 1 ? "." : "") + t[i];
    return !p.opName.empty();
}

struct Npy {
    std::string descr;
    std::vector<std::int64_t> shape;
    std::vector<float> v;
    std::size_t headerSize = 0;
};

// A strict reader of MindSpore-style headers (fails on anything else).
bool readNpy(const fs::path& p, Npy& out) {
    const std::string b = readFile(p);
    if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0 || b[6] != 1 || b[7] != 0) return false;
    const std::size_t len = std::uint8_t(b[8]) | (std::size_t(std::uint8_t(b[9])) << 8);
    out.headerSize = 10 + len;
    if (out.headerSize % 64 != 0 || b.size() < out.headerSize || b[out.headerSize - 1] != '\n') return false;
    const std::string dict = b.substr(10, len);
    static const std::regex re(
        R"(^\{'descr': '([<|][a-z][0-9]+)', 'fortran_order': False, 'shape': \(((?:\d+,)*)\), \} *\n$)");
    std::smatch m;
    if (!std::regex_match(dict, m, re)) return false;
    out.descr = m[1];
    out.shape.clear();
    std::size_t n = 1;
    for (const auto& d : split(m[2], ','))
        if (!d.empty()) {
            out.shape.push_back(std::stoll(d));
            n *= std::size_t(std::stoll(d));
        }
    const char* data = b.data() + out.headerSize;
    const std::size_t payload = b.size() - out.headerSize;
    out.v.clear();
    if (out.descr == "<f2" && payload == n * 2) {
        for (std::size_t i = 0; i < n; ++i) {
            std::uint16_t h;
            std::memcpy(&h, data + 2 * i, 2);
            out.v.push_back(halfToFloat(h));
        }
    } else if (out.descr == "<f4" && payload == n * 4) {
        out.v.resize(n);
        std::memcpy(out.v.data(), data, payload);
    } else if (out.descr == "<i4" && payload == n * 4) {
        for (std::size_t i = 0; i < n; ++i) {
            std::int32_t x;
            std::memcpy(&x, data + 4 * i, 4);
            out.v.push_back(float(x));
        }
    } else {
        return false;
    }
    return true;
}

fs::path iterDir(const fs::path& variant, int rank, int it) {
    return variant / ("rank_" + std::to_string(rank)) / "Baichuan2" / "0" / std::to_string(it);
}

// The files of one op type in one iteration directory, keyed by "input.0"/"output.0".
std::map<std::string, fs::path> opFiles(const fs::path& dir, const std::string& type, bool nine) {
    std::map<std::string, fs::path> out;
    for (const auto& e : fs::directory_iterator(dir)) {
        ParsedName p;
        const std::string f = e.path().filename().string();
        if (f.starts_with(type + ".") && parseName(f, nine, p) && p.opType == type)
            out[p.io + "." + std::to_string(p.slot)] = e.path();
    }
    return out;
}

float maxAbs(const std::vector<float>& v) {
    float m = 0;
    for (float x : v) m = std::max(m, std::fabs(x));
    return m;
}

class DemoDumps : public ::testing::Test {
protected:
    // Written once per ctest run (tests/core/shared_demo.h); read-only here.
    static void SetUpTestSuite() {
        try {
            m_root = dltest::sharedDemoDumps(m_summary);
            ok_ = true;
        } catch (const std::exception& e) {
            error_ = e.what();
        }
    }
    void SetUp() override { ASSERT_TRUE(ok_) << error_; }

    static inline fs::path m_root;
    static inline DemoSummary m_summary;
    static inline bool ok_ = false;
    static inline std::string error_;
};

}  // namespace

TEST(NpyWriter, MindSporeHeaderBytes) {
    const std::string h = makeNpyHeader("<f4", {2, 3});
    EXPECT_EQ(h.size(), 128u);  // docs/formats.md 6: HEADER_LEN 118, data at 128
    EXPECT_EQ(std::uint8_t(h[8]) | (std::uint8_t(h[9]) << 8), 118);
    EXPECT_EQ(h.substr(10, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (2,3,), }");
    EXPECT_EQ(h.back(), '\n');
    const std::string s = makeNpyHeader("<f2", {});
    EXPECT_NE(s.find("'shape': (), }"), std::string::npos);
    EXPECT_EQ(s.size() % 64, 0u);
    EXPECT_EQ(npyDescr(DType::BFloat16, "<h2"), "<h2");
    EXPECT_EQ(npyDescr(DType::Bool), "|b1");
}

TEST(NpyWriter, RejectsPayloadShapeMismatch) {
    std::string error;
    const auto p = (fs::temp_directory_path() / ("dl_npy_bad_" + std::to_string(::getpid()) + ".npy")).string();
    EXPECT_FALSE(writeNpyFile(p, DType::Float16, {2, 3}, std::string(10, '\0'), error));
    EXPECT_NE(error.find("payload"), std::string::npos);
    EXPECT_FALSE(fs::exists(p));
}

TEST(StatisticCsvWriter, LegacyNullsAndCounts) {
    StatisticCsvWriter w(StatCsvStyle::Ms16To22);
    EXPECT_EQ(w.header(),
              "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,"
              "Avg Value,Count,Negative Zero Count,Positive Zero Count,NaN Count,Negative Inf Count,"
              "Positive Inf Count,Zero Count");
    const float inf = std::numeric_limits<float>::infinity();
    StatCsvRow r{"Add", "Add-op1", 3, 2, 1700000000000000, true, 0, 4, "float16", {2}};
    EXPECT_EQ(w.row(r, {inf, inf}),
              "Add,Add-op1,3,2,1700000000000000,output,0,4,float16,\"(2)\",null,null,null,2,0,0,0,0,2,0");
    r.shape = {4};
    EXPECT_TRUE(w.row(r, {65504.f, -0.5f, 0.f, inf}).ends_with("float16,\"(4)\",65504,-0.5,21834.5,4,1,1,0,0,1,1"));
}

TEST(StatisticCsvWriter, CategoriesInUserOrderWithTrailingComma) {
    StatisticCsvWriter w(StatCsvStyle::Ms23Plus, {"max", "min", "positive zero count", "positive inf count"});
    EXPECT_EQ(w.header(),
              "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,"
              "Max Value,Min Value,Positive Zero Count,Positive Inf Count");
    const float inf = std::numeric_limits<float>::infinity();
    StatCsvRow r{"Add", "Default_Add-op0", 0, 0, 1733905446822806, false, 0, 4, "float16", {2}};
    EXPECT_EQ(w.row(r, {inf, inf}), "Add,Default_Add-op0,0,0,1733905446822806,input,0,4,float16,\"(2)\",inf,inf,2,2,");
    StatisticCsvWriter d(StatCsvStyle::Ms23Plus);
    EXPECT_TRUE(d.header().ends_with(",Shape,Max Value,Min Value,L2Norm Value"));
    std::string error;
    EXPECT_FALSE(StatisticCsvWriter(StatCsvStyle::Ms23Plus, {"maximum"}).valid(error));
    EXPECT_NE(error.find("maximum"), std::string::npos);
}

TEST_F(DemoDumps, SummaryNamesVariantsAndCulprit) {
    EXPECT_EQ(m_summary.variants,
              (std::vector<std::string>{"ms22_async_saturation", "ms22_async_infnan", "ms22_overflow_only", "ms24_kbk",
                                        "bf16_fix"}));
    EXPECT_TRUE(std::regex_match(m_summary.culpritOpName, std::regex("SqrtGrad-op[0-9]+")));
    EXPECT_EQ(m_summary.firstOverflowIteration, 5);
    EXPECT_NE(m_summary.notes.find("gradSqrt/SqrtGrad-op"), std::string::npos);
    for (const auto& v : m_summary.variants) EXPECT_TRUE(fs::is_directory(m_root / v)) << v;
}

TEST_F(DemoDumps, EveryTensorFileNameAndHeaderFollowTheFormat) {
    const std::set<std::string> dtypes = {"float16", "float32", "bfloat16", "int32"};
    for (const auto& v : m_summary.variants) {
        const bool nine = v == "ms24_kbk";
        std::size_t count = 0;
        for (const auto& e : fs::recursive_directory_iterator(m_root / v)) {
            const std::string f = e.path().filename().string();
            if (!e.is_regular_file() || !f.ends_with(".npy")) continue;
            ++count;
            ParsedName p;
            if (nine && allDigits(f.substr(0, f.size() - 4))) continue;  // mapped long name (mapping.csv)
            ASSERT_TRUE(parseName(f, nine, p)) << v << "/" << f;
            EXPECT_EQ(p.format, "DefaultFormat");
            EXPECT_EQ(p.opName.find('/'), std::string::npos);
            if (nine) {
                EXPECT_TRUE(dtypes.count(p.dtype)) << f;
                EXPECT_EQ(p.task, 0u) << f;
                EXPECT_TRUE(p.opName.starts_with("Default_") || p.opName.starts_with("Gradients_Default_")) << f;
            } else {
                EXPECT_TRUE(std::regex_match(p.opName, std::regex(p.opType + "-op[0-9]+"))) << f;
                EXPECT_GT(p.task, 0u);
            }
            EXPECT_LT(f.size(), 256u);
            Npy n;
            ASSERT_TRUE(readNpy(e.path(), n)) << f;
        }
        EXPECT_GT(count, v == "ms22_overflow_only" ? 5u : 4000u) << v;
    }
}

TEST_F(DemoDumps, LongKernelByKernelNamesGoThroughMappingCsv) {
    std::size_t mapped = 0;
    for (const auto& e : fs::recursive_directory_iterator(m_root / "ms24_kbk")) {
        if (e.path().filename() != "mapping.csv") continue;
        for (const auto& line : split(readFile(e.path()), '\n')) {
            if (line.empty()) continue;
            const auto f = split(line, ',');
            ASSERT_EQ(f.size(), 2u) << line;
            EXPECT_TRUE(fs::exists(e.path().parent_path() / f[0])) << f[0];
            EXPECT_GT(f[1].size(), 255u);
            ++mapped;
        }
    }
    EXPECT_GT(mapped, 0u);
}

TEST_F(DemoDumps, StatisticCsvHeadersAndRows) {
    const std::string legacy = StatisticCsvWriter(StatCsvStyle::Ms16To22).header();
    for (const std::string v : {"ms22_async_saturation", "ms22_async_infnan", "bf16_fix"}) {
        const auto lines = split(readFile(iterDir(m_root / v, 3, 5) / "statistic.csv"), '\n');
        ASSERT_GT(lines.size(), 10u);
        EXPECT_EQ(lines[0], legacy);
        for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
            const auto f = csvFields(lines[i]);
            ASSERT_EQ(f.size(), 20u) << lines[i];
            EXPECT_TRUE(f[9].starts_with("\"(") && f[9].ends_with(")\"")) << lines[i];
        }
        EXPECT_TRUE(lines.back().empty());  // file ends with '\n'
    }
    const auto kbk = split(readFile(iterDir(m_root / "ms24_kbk", 3, 5) / "statistic.csv"), '\n');
    EXPECT_EQ(kbk[0],
              "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,"
              "Min Value,Avg Value,NaN Count,Negative Inf Count,Positive Inf Count,L2Norm Value");
    for (std::size_t i = 1; i + 1 < kbk.size(); ++i) {
        EXPECT_EQ(csvFields(kbk[i]).size(), 18u) << kbk[i];
        EXPECT_EQ(kbk[i].back(), ',');
    }
    EXPECT_FALSE(fs::exists(iterDir(m_root / "ms22_overflow_only", 3, 5) / "statistic.csv"));
}

TEST_F(DemoDumps, SqrtGradOverflowsInIterationFiveOnly) {
    for (const std::string v : {"ms22_async_saturation", "ms22_async_infnan", "ms24_kbk"}) {
        const bool nine = v == "ms24_kbk", sat = v == "ms22_async_saturation";
        for (int it = 0; it <= 5; ++it) {
            auto files = opFiles(iterDir(m_root / v, 3, it), "SqrtGrad", nine);
            ASSERT_EQ(files.size(), 3u) << v << " it " << it;
            Npy y, dy, dx;
            ASSERT_TRUE(readNpy(files["input.0"], y) && readNpy(files["input.1"], dy) &&
                        readNpy(files["output.0"], dx));
            EXPECT_EQ(dx.descr, "<f2");
            for (const auto* in : {&y, &dy})
                for (float x : in->v) ASSERT_TRUE(std::isfinite(x) && std::fabs(x) < kFp16Max) << v << " it " << it;
            bool hasInf = false;
            for (float x : dx.v) hasInf |= std::isinf(x);
            if (it < 5) {
                EXPECT_LT(maxAbs(dx.v), kFp16Max) << v << " it " << it;
                EXPECT_FALSE(hasInf);
                continue;
            }
            EXPECT_GT(maxAbs(dy.v), 45000.f);  // the ~47580 gradient of the story
            EXPECT_LT(maxAbs(dy.v), 50000.f);
            if (sat) {
                EXPECT_FALSE(hasInf);
                EXPECT_EQ(maxAbs(dx.v), kFp16Max);  // saturation clamps
            } else {
                EXPECT_TRUE(hasInf) << v;
            }
        }
    }
}

TEST_F(DemoDumps, InfNanDamageReachesEveryStageAfterTheOrigin) {
    for (int rank = 0; rank < 4; ++rank) {
        std::size_t nonFinite = 0;
        for (const auto& e : fs::directory_iterator(iterDir(m_root / "ms22_async_infnan", rank, 7))) {
            Npy n;
            if (e.path().extension() == ".npy" && readNpy(e.path(), n))
                for (float x : n.v) nonFinite += !std::isfinite(x);
        }
        EXPECT_GT(nonFinite, 100u) << "rank " << rank;
    }
}

TEST_F(DemoDumps, Bf16TwinStaysFinite) {
    const fs::path twin = m_root / "bf16_fix";
    for (int it = 0; it < 8; ++it) {
        auto files = opFiles(iterDir(twin, 3, it), "SqrtGrad", false);
        ASSERT_EQ(files.size(), 3u);
        Npy dx;
        ASSERT_TRUE(readNpy(files["output.0"], dx));
        EXPECT_EQ(dx.descr, "<f4");  // bf16 is dumped as float32
        for (float x : dx.v) {
            ASSERT_TRUE(std::isfinite(x));
            EXPECT_EQ(x, roundToBf16(x));  // values are bf16 numbers
        }
        EXPECT_EQ(opFiles(iterDir(twin, 3, it), "Cast", false).size() >= 2, true);
        for (const auto& e : fs::directory_iterator(iterDir(twin, 3, it))) {
            Npy n;
            if (e.path().extension() == ".npy" && readNpy(e.path(), n) && n.descr == "<f2") {
                ASSERT_LT(maxAbs(n.v), kFp16Max) << e.path();  // no fp16 tensor saturates
            }
        }
    }
    // The Casts around SqrtGrad shift the -opN numbers of later ops.
    const auto twinOrder = readFile(twin / "rank_3/execution_order/ms_execution_order_graph_0.csv");
    const auto fp16Order =
        readFile(m_root / "ms22_async_saturation/rank_3/execution_order/ms_execution_order_graph_0.csv");
    EXPECT_NE(twinOrder, fp16Order);
    EXPECT_NE(twinOrder.find("gradSqrt/Cast-op"), std::string::npos);
}

TEST_F(DemoDumps, DecoyIsNearTheLimitButFinite) {
    const fs::path v = m_root / "ms22_async_saturation";
    auto files = opFiles(iterDir(v, 0, 2), "Gather", false);
    Npy out;
    ASSERT_TRUE(readNpy(files["output.0"], out));
    EXPECT_EQ(maxAbs(out.v), 40000.f);
    for (int rank = 0; rank < 4; ++rank)
        for (const auto& e : fs::directory_iterator(iterDir(v, rank, 2))) {
            Npy n;
            if (e.path().extension() == ".npy" && readNpy(e.path(), n)) {
                for (float x : n.v) ASSERT_TRUE(std::isfinite(x) && std::fabs(x) < kFp16Max) << e.path();
            }
        }
}

TEST_F(DemoDumps, RankClocksDisagreeSoRawTimestampsBreakCausality) {
    // Rank 3 sends the backward gradient (sr_tag 2) and rank 2 receives it: in true time the
    // Receive ends after the Send, but rank 2's clock lags 3 ms.
    const fs::path v = m_root / "ms22_async_saturation";
    auto ts = [&](int rank, const std::string& type) {
        const auto order = split(
            readFile(v / ("rank_" + std::to_string(rank)) / "execution_order/ms_execution_order_graph_0.csv"), '\n');
        std::string shortName;
        for (const auto& n : order)
            if (n.starts_with("Gradients/") && n.find("sr_tag_2/") != std::string::npos &&
                n.find("/" + type + "-op") != std::string::npos)
                shortName = n.substr(n.rfind('/') + 1);
        EXPECT_FALSE(shortName.empty());
        for (const auto& e : fs::directory_iterator(iterDir(v, rank, 5))) {
            ParsedName p;
            if (parseName(e.path().filename().string(), false, p) && p.opName == shortName) return p.ts;
        }
        return std::int64_t(0);
    };
    const std::int64_t send = ts(3, "Send"), recv = ts(2, "Receive");
    ASSERT_GT(send, 0);
    ASSERT_GT(recv, 0);
    EXPECT_LT(recv, send);
    EXPECT_GT(send - recv, 2000);
}

TEST_F(DemoDumps, OverflowOnlyHoldsTheOverflowingOpsAndOpdebugRecords) {
    const fs::path v = m_root / "ms22_overflow_only";
    for (int it = 0; it < 8; ++it)
        for (int rank = 0; rank < 4; ++rank) {
            std::size_t npy = 0, json = 0;
            std::set<std::pair<std::uint64_t, std::uint64_t>> ops;
            std::vector<nlohmann::json> records;
            for (const auto& e : fs::directory_iterator(iterDir(v, rank, it))) {
                const std::string f = e.path().filename().string();
                ParsedName p;
                if (parseName(f, false, p)) {
                    ++npy;
                    EXPECT_EQ(p.opType, "SqrtGrad");
                    ops.insert({p.task, p.stream});
                } else if (f.starts_with("Opdebug.Node_OpDebug.") && f.ends_with(".output.0.json")) {
                    ++json;
                    const std::string text = readFile(e.path());
                    auto j = nlohmann::json::parse(text);
                    EXPECT_EQ(j.dump(), text);  // compact, sorted keys
                    records.push_back(j);
                }
            }
            const bool expect = rank == 3 && it >= 5;
            EXPECT_EQ(npy, expect ? 3u : 0u) << "rank " << rank << " it " << it;
            EXPECT_EQ(json, expect ? 1u : 0u);
            for (const auto& j : records) {
                EXPECT_EQ(j["AI Core"]["status"], 32);
                const std::string code = j["AI Core"]["kernel_code"];
                EXPECT_TRUE(std::regex_match(code, std::regex("0x[0-9a-f]+")));
                EXPECT_TRUE(ops.count(
                    {j["AI Core"]["task_id"].get<std::uint64_t>(), j["AI Core"]["stream_id"].get<std::uint64_t>()}));
            }
        }
}

TEST_F(DemoDumps, ExecutionOrderAndMetadata) {
    const fs::path r3 = m_root / "ms22_async_saturation/rank_3";
    const auto order = split(readFile(r3 / "execution_order/ms_execution_order_graph_0.csv"), '\n');
    EXPECT_EQ(order[0], "NodeExecutionOrder-FullNameWithScope");
    EXPECT_EQ(std::count_if(order.begin(), order.end(),
                            [](const std::string& s) {
                                return s.starts_with("Gradients/Default/") &&
                                    s.find("lm_head-NormHead/gradSqrt/SqrtGrad-op") != std::string::npos;
                            }),
              1);
    EXPECT_EQ(readFile(r3 / "execution_order/ms_global_execution_order_graph_0.csv"), "0\n1\n2\n3\n4\n5\n6\n7\n");
    EXPECT_EQ(readFile(r3 / ".dump_metadata/config.json"), R"({"device_target":"Ascend","ms_version":"2.2.10"})");
    EXPECT_EQ(readFile(m_root / "ms24_kbk/rank_0/.dump_metadata/config.json"),
              R"({"device_target":"Ascend","ms_version":"2.4.1"})");
    const auto dump = nlohmann::json::parse(readFile(r3 / ".dump_metadata/data_dump.json"));
    EXPECT_EQ(dump["common_dump_settings"]["file_format"], "npy");
    EXPECT_EQ(dump["common_dump_settings"]["op_debug_mode"], 0);
    const auto hccl = nlohmann::json::parse(readFile(r3 / ".dump_metadata/hccl.json"));
    EXPECT_EQ(hccl["server_count"], "2");
    std::set<std::string> ranks;
    for (const auto& s : hccl["server_list"])
        for (const auto& d : s["device"]) ranks.insert(d["rank_id"].get<std::string>());
    EXPECT_EQ(ranks, (std::set<std::string>{"0", "1", "2", "3"}));
}

TEST_F(DemoDumps, SameBytesEveryTime) {
    const dltest::TempDir own("dumplens_test_demo_again_");  // the shared dumps stay read-only
    const fs::path again = own.path / "again";
    DemoVariantInfo info;
    std::string error;
    ASSERT_TRUE(writeDemoVariant(again.string(), demoVariants().front().second, info, error)) << error;
    const fs::path first = m_root / "ms22_async_saturation";
    std::size_t compared = 0;
    for (const auto& e : fs::recursive_directory_iterator(first)) {
        if (!e.is_regular_file()) continue;
        const fs::path twin = again / fs::relative(e.path(), first);
        ASSERT_TRUE(fs::exists(twin)) << twin;
        ASSERT_EQ(readFile(e.path()), readFile(twin)) << twin;
        ++compared;
    }
    EXPECT_EQ(compared, info.filesWritten);
}

TEST(DemoVariants, ForwardOriginAndCleanScenarios) {
    const fs::path root = fs::temp_directory_path() / ("dumplens_test_demo_variants_" + std::to_string(::getpid()));
    std::string error;
    DemoOptions fwd;
    fwd.scenario = DemoScenario::ForwardOrigin;
    fwd.iterations = 4;
    DemoVariantInfo info;
    ASSERT_TRUE(writeDemoVariant((root / "fwd").string(), fwd, info, error)) << error;
    EXPECT_EQ(info.firstOverflowIteration, fwd.decoyIteration);
    EXPECT_EQ(info.culpritRank, 0);
    EXPECT_EQ(info.culpritFullName.find("Gradients/"), std::string::npos);  // a forward op
    ASSERT_FALSE(info.culpritOutputFiles.empty());
    Npy out;
    ASSERT_TRUE(readNpy(root / "fwd" / info.culpritOutputFiles.front(), out));
    EXPECT_EQ(maxAbs(out.v), kFp16Max);

    DemoOptions clean;
    clean.scenario = DemoScenario::Clean;
    clean.mode = OverflowMode::InfNan;
    ASSERT_TRUE(writeDemoVariant((root / "clean").string(), clean, info, error)) << error;
    EXPECT_EQ(info.firstOverflowIteration, -1);
    EXPECT_TRUE(info.culpritShortName.empty());
    EXPECT_EQ(info.decoyMaxAbs, 40000.f);

    DemoOptions bad;
    bad.iterations = 0;
    EXPECT_FALSE(writeDemoVariant((root / "bad").string(), bad, info, error));
    EXPECT_NE(error.find("iterations"), std::string::npos);
    fs::remove_all(root);
}

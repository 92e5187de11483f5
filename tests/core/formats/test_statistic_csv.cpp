#include "core/formats/mindspore/statistic_csv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

using namespace dl;

namespace {
constexpr const char* kHeader22 =
    "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,"
    "Avg Value,Count,Negative Zero Count,Positive Zero Count,NaN Count,Negative Inf Count,Positive Inf Count,"
    "Zero Count\n";

StatisticCsvResult parseOk(const std::string& text) {
    StatisticCsvResult r;
    std::string err;
    EXPECT_TRUE(parseStatisticCsv(text, r, err)) << err;
    return r;
}
}  // namespace

TEST(StatisticCsv, Ms24DefaultRowWithTrailingComma) {  // docs/formats.md section 6
    auto r = parseOk(
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,"
        "L2Norm Value\n"
        "Add,Default_Add-op0,0,0,1733905446822806,input,0,4,float32,\"()\",2,2,2,\n");
    ASSERT_EQ(r.rows.size(), 1u);
    EXPECT_TRUE(r.warnings.empty());
    const auto& row = r.rows[0];
    EXPECT_EQ(row.line, 2u);
    EXPECT_EQ(row.opType, "Add");
    EXPECT_EQ(row.opName, "Default_Add-op0");
    EXPECT_EQ(row.timestampUs, 1733905446822806);
    EXPECT_EQ(row.io, Io::Input);
    EXPECT_EQ(row.slot, 0);
    EXPECT_EQ(row.dataBytes, 4u);
    EXPECT_EQ(row.dtype, DType::Float32);
    EXPECT_TRUE(row.hasShape);
    EXPECT_TRUE(row.shape.empty());
    EXPECT_EQ(row.stats.known, stat::Max | stat::Min | stat::L2 | stat::MaxAbs);
    EXPECT_EQ(row.stats.max, 2);
    EXPECT_EQ(row.stats.min, 2);
    EXPECT_EQ(row.stats.l2, 2);
    EXPECT_EQ(row.stats.maxAbs, 2);
    EXPECT_EQ(row.nonFinite, 0);
}

TEST(StatisticCsv, Ms22InfTensorNullsAndCounts) {  // docs/formats.md section 6: float16 [+inf, +inf]
    auto r = parseOk(std::string(kHeader22) +
                     "Add,Add-op3,0,0,1623124369613540,output,0,4,float16,\"(2)\",null,null,null,2,0,0,0,0,2,0\n");
    ASSERT_EQ(r.rows.size(), 1u);
    const auto& s = r.rows[0].stats;
    EXPECT_EQ(r.rows[0].shape, (std::vector<std::int64_t>{2}));
    EXPECT_FALSE(s.has(stat::Max));
    EXPECT_FALSE(s.has(stat::Min));
    EXPECT_FALSE(s.has(stat::Mean));
    EXPECT_FALSE(s.has(stat::MaxAbs));
    const std::uint32_t counts = stat::Count | stat::NegCount | stat::PosCount | stat::NanCount | stat::NegInfCount |
        stat::PosInfCount | stat::ZeroCount;
    EXPECT_EQ(s.known, counts);
    EXPECT_EQ(s.count, 2u);
    EXPECT_EQ(s.posInfCount, 2u);
    EXPECT_EQ(s.negCount, 0u);
    EXPECT_EQ(s.posCount, 0u);
    EXPECT_EQ(r.rows[0].lowerBoundCounts, 0u);
    EXPECT_TRUE(r.rows[0].hasInf());
    EXPECT_FALSE(r.rows[0].hasNan());
}

TEST(StatisticCsv, Ms23InfPropagatesIntoMaxMin) {  // same tensor, 2.3+ categories
    auto r = parseOk(
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,"
        "Positive Zero Count,Positive Inf Count\n"
        "Add,Default_Add-op3,0,0,1733905446822806,output,0,4,float16,\"(2)\",inf,inf,2,2,\n");
    ASSERT_EQ(r.rows.size(), 1u);
    const auto& row = r.rows[0];
    EXPECT_FALSE(row.stats.has(stat::Max));
    EXPECT_FALSE(row.stats.has(stat::Min));
    EXPECT_EQ(row.nonFinite, SeenPosInf);
    EXPECT_TRUE(row.stats.has(stat::PosInfCount | stat::PosCount));
    EXPECT_EQ(row.stats.posInfCount, 2u);  // exact column wins over evidence
    EXPECT_EQ(row.lowerBoundCounts, 0u);
}

TEST(StatisticCsv, NanAndInfWithoutCountColumnsBecomeLowerBounds) {
    auto r = parseOk(
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,"
        "L2Norm Value\n"
        "SqrtGrad,Default_SqrtGrad-op42,0,0,1,output,0,8,float16,\"(2,2)\",inf,-65504,inf,\n"
        "SqrtGrad,Default_SqrtGrad-op42,0,0,2,input,0,8,float16,\"(2,2)\",nan,-nan,nan,\n"
        "Mul,Default_Mul-op1,0,0,3,output,0,8,float16,\"(2,2)\",47580,-inf,1,\n");
    ASSERT_EQ(r.rows.size(), 3u);
    const auto& a = r.rows[0];
    EXPECT_EQ(a.nonFinite, SeenPosInf);
    EXPECT_TRUE(a.stats.has(stat::Min));
    EXPECT_EQ(a.stats.min, -65504);
    EXPECT_FALSE(a.stats.has(stat::Max));
    EXPECT_FALSE(a.stats.has(stat::L2));
    EXPECT_FALSE(a.stats.has(stat::MaxAbs));
    EXPECT_TRUE(a.stats.has(stat::PosInfCount));
    EXPECT_EQ(a.stats.posInfCount, 1u);
    EXPECT_EQ(a.lowerBoundCounts, std::uint32_t(stat::PosInfCount));
    EXPECT_FALSE(a.stats.has(stat::NanCount));
    const auto& b = r.rows[1];
    EXPECT_EQ(b.nonFinite, SeenNan);
    EXPECT_TRUE(b.hasNan());
    EXPECT_EQ(b.stats.nanCount, 1u);
    EXPECT_EQ(b.lowerBoundCounts, std::uint32_t(stat::NanCount));
    const auto& c = r.rows[2];
    EXPECT_EQ(c.nonFinite, SeenNegInf);
    EXPECT_EQ(c.stats.max, 47580);
    EXPECT_EQ(c.stats.negInfCount, 1u);
    EXPECT_EQ(c.stats.l2, 1);
}

TEST(StatisticCsv, EmptyTensorMarkersAreUnknownNotInf) {
    auto r = parseOk(
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,Count\n"
        "A,a,0,0,1,output,0,0,float32,\"(0)\",-inf,inf,0,\n"
        "A,a,0,0,2,output,1,0,float32,\"(0)\",-1.79769e+308,1.79769e+308,0,\n"
        "A,a,0,0,3,output,2,8,float32,\"(2)\",-inf,-inf,2,\n");
    ASSERT_EQ(r.rows.size(), 3u);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(r.rows[i].nonFinite, 0) << i;
        EXPECT_FALSE(r.rows[i].stats.has(stat::Max)) << i;
        EXPECT_FALSE(r.rows[i].stats.has(stat::Min)) << i;
        EXPECT_FALSE(r.rows[i].hasInf()) << i;
    }
    EXPECT_EQ(r.rows[2].nonFinite, SeenNegInf);  // every element -inf
}

TEST(StatisticCsv, Ms22FullRowAndMaxAbs) {
    auto r = parseOk(std::string(kHeader22) +
                     "Conv2D,Conv2D-op12,0,0,1623124369613540,output,0,24,float32,\"(2,3)\",9.53939,-12.5,0.5,6,2,3,"
                     "0,0,0,1\n");
    ASSERT_EQ(r.rows.size(), 1u);
    const auto& s = r.rows[0].stats;
    EXPECT_EQ(r.rows[0].shape, (std::vector<std::int64_t>{2, 3}));
    EXPECT_DOUBLE_EQ(s.max, 9.53939);
    EXPECT_DOUBLE_EQ(s.min, -12.5);
    EXPECT_DOUBLE_EQ(s.maxAbs, 12.5);
    EXPECT_DOUBLE_EQ(s.mean, 0.5);
    EXPECT_EQ(s.count, 6u);
    EXPECT_EQ(s.negCount, 2u);
    EXPECT_EQ(s.posCount, 3u);
    EXPECT_EQ(s.zeroCount, 1u);
    EXPECT_TRUE(s.has(stat::Max | stat::Min | stat::Mean | stat::MaxAbs | stat::Count | stat::NegCount |
                      stat::PosCount | stat::NanCount | stat::NegInfCount | stat::PosInfCount | stat::ZeroCount));
    EXPECT_FALSE(s.has(stat::L2));
}

TEST(StatisticCsv, Md5ColumnAnd21Columns) {
    auto r = parseOk(std::string(kHeader22).substr(0, std::string(kHeader22).size() - 1) + ",MD5\r\n" +
                     "Cast,Cast-op1,0,0,5,input,1,2,bool,\"(2)\",True,False,0.5,2,0,1,0,0,0,1,"
                     "0123456789abcdef0123456789abcdef\r\n");
    ASSERT_EQ(r.rows.size(), 1u) << (r.warnings.empty() ? "" : r.warnings[0].reason);
    EXPECT_EQ(r.columns.size(), 21u);
    EXPECT_EQ(r.rows[0].md5, "0123456789abcdef0123456789abcdef");
    EXPECT_EQ(r.rows[0].stats.max, 1);
    EXPECT_EQ(r.rows[0].stats.min, 0);
    EXPECT_EQ(r.rows[0].dtype, DType::Bool);
    EXPECT_EQ(r.rows[0].slot, 1);
}

TEST(StatisticCsv, UserOrderedCategoriesAllColumns) {
    auto r = parseOk(
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,L2Norm Value,MD5,"
        "Zero Count,NaN Count,Count,Avg Value,Min Value,Max Value,Negative Inf Count\n"
        "Mul,Default_Mul-op9,3,2,7,output,1,12,bfloat16,\"(3)\",5,abc,1,0,3,-1,-4,3,0,\n");
    ASSERT_EQ(r.rows.size(), 1u);
    const auto& row = r.rows[0];
    EXPECT_EQ(row.taskId, 3u);
    EXPECT_EQ(row.streamId, 2u);
    EXPECT_EQ(row.dtype, DType::BFloat16);
    EXPECT_EQ(row.stats.l2, 5);
    EXPECT_EQ(row.stats.max, 3);
    EXPECT_EQ(row.stats.min, -4);
    EXPECT_EQ(row.stats.maxAbs, 4);
    EXPECT_EQ(row.stats.mean, -1);
    EXPECT_EQ(row.stats.count, 3u);
    EXPECT_EQ(row.md5, "abc");
    EXPECT_TRUE(row.stats.has(stat::NegInfCount));
    EXPECT_FALSE(row.stats.has(stat::PosInfCount));
}

TEST(StatisticCsv, MsprobeUnquotedShapeAndFormat) {
    auto r = parseOk(
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,Input/Output,Slot,Data Size,Data Type,Format,Shape,"
        "Max Value,Min Value,Avg Value,L2Norm Value,NaN Count,Negative Inf Count,Positive Inf Count,MD5 Value\n"
        "MatMul,Default_MatMul-op5,12,2,1700000000000000,input,0,64,FLOAT16,FRACTAL_NZ,(2,4,4),65504,-3,1.5,"
        "100,0,0,0,ffee\n"
        "MatMul,Default_MatMul-op5,12,2,1700000000000000,output,0,8,FLOAT16,ND,(),1,1,1,1,0,0,0,ffee\n");
    ASSERT_EQ(r.rows.size(), 2u) << (r.warnings.empty() ? "" : r.warnings[0].reason);
    EXPECT_EQ(r.rows[0].shape, (std::vector<std::int64_t>{2, 4, 4}));
    EXPECT_EQ(r.rows[0].format, "FRACTAL_NZ");
    EXPECT_EQ(r.rows[0].dtype, DType::Float16);
    EXPECT_EQ(r.rows[0].dtypeRaw, "FLOAT16");
    EXPECT_EQ(r.rows[0].stats.max, 65504);
    EXPECT_EQ(r.rows[0].md5, "ffee");
    EXPECT_TRUE(r.rows[1].shape.empty());
    EXPECT_TRUE(r.rows[1].hasShape);
}

TEST(StatisticCsv, MalformedRowsWarnWithLineNumbersAndRestParses) {
    auto r = parseOk(std::string(kHeader22) +
                     "Add,Add-op3,0,0,1,output,0,4,float16,\"(2)\",1,0,0.5,2,0,1,0,0,0,1\n"
                     "Add,Add-op3,0,0,1,output,0,4,float16\n"                                  // line 3
                     "Add,Add-op3,0,0,1,sideways,0,4,float16,\"(2)\",1,0,0.5,2,0,1,0,0,0,1\n"  // line 4
                     "Add,Add-op3,0,0,1,output,0,4,float16,\"(2,3,1,0,0.5,2,0,1,0,0,0,1\n"     // line 5
                     "Add,Add-op3,0,0,1,output,0,4,float16,\"(2)\",abc,0,0.5,2,0,1,0,0,0,1\n"  // line 6
                     "\n"
                     "Add,Add-op3,0,0,1,output,0,4,float16,\"(2)\",1,0,0.5,-2,0,1,0,0,0,1\n"  // line 8
                     "Add,Add-op3,0,0,1,output,0,4,float16,\"(x)\",1,0,0.5,2,0,1,0,0,0,1\n"   // line 9
                     "Add,,0,0,1,output,0,4,float16,\"(2)\",1,0,0.5,2,0,1,0,0,0,1\n"          // line 10
                     "Add,Add-op4,0,0,1,input,1,4,float16,\"(2)\",1,0,0.5,2,0,1,0,0,0,1\n");
    ASSERT_EQ(r.rows.size(), 2u);
    EXPECT_EQ(r.rows[1].opName, "Add-op4");
    ASSERT_EQ(r.warnings.size(), 7u);
    std::vector<std::uint32_t> lines;
    for (const auto& w : r.warnings) {
        lines.push_back(w.line);
        EXPECT_FALSE(w.reason.empty());
    }
    EXPECT_EQ(lines, (std::vector<std::uint32_t>{3, 4, 5, 6, 8, 9, 10}));
    EXPECT_NE(r.warnings[0].reason.find("fields"), std::string::npos);
    EXPECT_NE(r.warnings[1].reason.find("IO"), std::string::npos);
    EXPECT_NE(r.warnings[4].reason.find("Count"), std::string::npos);
}

TEST(StatisticCsv, RepeatedHeaderRemapsColumns) {
    auto r = parseOk(
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value\n"
        "A,a,0,0,1,output,0,4,float32,\"()\",3,\n"
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Min Value\n"
        "A,a,0,0,1,output,0,4,float32,\"()\",-3,\n");
    ASSERT_EQ(r.rows.size(), 2u);
    EXPECT_TRUE(r.rows[0].stats.has(stat::Max));
    EXPECT_FALSE(r.rows[0].stats.has(stat::Min));
    EXPECT_TRUE(r.rows[1].stats.has(stat::Min));
    EXPECT_EQ(r.rows[1].stats.min, -3);
}

TEST(StatisticCsv, SpellingsAndUnknownColumn) {
    auto r = parseOk(
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,Extra\n"
        "A,a,0,0,1,output,0,4,unsupported(12),\"(1)\",+1.5e3,-1e-3,x\n"
        "A,a,0,0,1,output,1,4,float64,\"(1)\",1e999,null,x\n");
    ASSERT_EQ(r.rows.size(), 2u);
    EXPECT_EQ(r.rows[0].dtype, DType::Unknown);
    EXPECT_EQ(r.rows[0].dtypeRaw, "unsupported(12)");
    EXPECT_EQ(r.rows[0].stats.max, 1500);
    EXPECT_EQ(r.rows[0].stats.min, -1e-3);
    EXPECT_EQ(r.rows[1].nonFinite, SeenPosInf);  // out-of-range literal is beyond any dtype
    EXPECT_FALSE(r.rows[1].stats.has(stat::Min));
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(r.warnings[0].line, 0u);
    EXPECT_NE(r.warnings[0].reason.find("Extra"), std::string::npos);
}

TEST(StatisticCsv, HeaderProblemsFail) {
    StatisticCsvResult r;
    std::string err;
    EXPECT_FALSE(parseStatisticCsv("", r, err));
    EXPECT_FALSE(err.empty());
    err.clear();
    EXPECT_FALSE(parseStatisticCsv("Add,Add-op3,0,0,1,output,0,4\n", r, err));
    EXPECT_FALSE(err.empty());
    err.clear();
    EXPECT_FALSE(parseStatisticCsv("Op Type,Task ID\nA,1\n", r, err));
    EXPECT_NE(err.find("header"), std::string::npos);
    // Header only: valid, zero rows.
    EXPECT_TRUE(parseStatisticCsv(std::string(kHeader22), r, err));
    EXPECT_TRUE(r.rows.empty());
}

TEST(StatisticCsv, WarningsAreCapped) {
    std::string text = kHeader22;
    for (int i = 0; i < 50; ++i) text += "broken row\n";
    std::vector<std::string> cols;
    std::vector<StatisticCsvWarning> warnings;
    std::string err;
    int rows = 0;
    ASSERT_TRUE(parseStatisticCsv(
        text, [&](StatisticRow&) { ++rows; }, cols, warnings, err, 10));
    EXPECT_EQ(rows, 0);
    ASSERT_EQ(warnings.size(), 11u);
    EXPECT_NE(warnings.back().reason.find("40 more"), std::string::npos);
}

TEST(StatisticCsv, ReadsFileAndNamesPathOnError) {
    const std::string path = ::testing::TempDir() + "/dl_statistic_test.csv";
    {
        std::FILE* f = std::fopen(path.c_str(), "wb");
        ASSERT_NE(f, nullptr);
        std::fputs(kHeader22, f);
        std::fputs("Add,Add-op3,0,0,1,output,0,4,float16,\"(2)\",1,0,0.5,2,0,1,0,0,0,1\n", f);
        std::fclose(f);
    }
    StatisticCsvResult r;
    std::string err;
    ASSERT_TRUE(readStatisticCsv(path, r, err)) << err;
    EXPECT_EQ(r.rows.size(), 1u);
    std::remove(path.c_str());
    EXPECT_FALSE(readStatisticCsv(path, r, err));
    EXPECT_NE(err.find(path), std::string::npos);
}

// The index of a multi-rank statistics-only dump (MindSpore 2.3+ statistic.csv) holds every row
// as written: each tensor's figures, shape, dtype, names and order are checked against a plain
// reference reading of the CSV text done here (strtod, a hand split), not through the parser.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/index/dump_indexer.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;

namespace {

// Twelve iterations: the scan meets folder "10" before "2", so the index must put the folders in
// numeric order itself; with one thread the four shards are built one after another on the same
// drafts' buffers.
constexpr int kRanks = 4, kIterations = 12;
const char* kHeader =
    "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,"
    "Max Value,Min Value,Avg Value,Count,NaN Count,L2Norm Value\n";

// One row as the reference reads it back.
struct RefTensor {
    std::string opType, opName, dtype;
    std::int64_t ts = 0;
    bool output = false;
    int slot = 0;
    std::vector<std::int64_t> shape;
    std::string max, min, avg, count, nanCount, l2;  // the cells as text
};
struct RefOp {
    std::string type, name;
    std::int64_t start = 0;
    std::vector<RefTensor> tensors;  // inputs by slot, then outputs by slot
};

std::string cell(std::mt19937_64& rng, bool allowSpecial) {
    std::uniform_int_distribution<int> pick(0, 19);
    const int p = pick(rng);
    if (allowSpecial && p == 0) return "inf";
    if (allowSpecial && p == 1) return "-inf";
    if (allowSpecial && p == 2) return "nan";
    if (allowSpecial && p == 3) return "null";
    std::ostringstream s;  // %g, 6 significant digits, like MindSpore
    s << std::uniform_real_distribution<double>(-70000.0, 70000.0)(rng);
    return s.str();
}

// Writes the dump and returns, per rank and iteration, its ops in execution (timestamp) order.
std::vector<std::vector<std::vector<RefOp>>> writeDump(const fs::path& root) {
    std::mt19937_64 rng(1313);
    const std::vector<std::string> types = {"MatMul", "Add", "SqrtGrad", "AllReduce", "Softmax"};
    const std::vector<std::string> dtypes = {"float16", "float32", "bfloat16", "int32"};
    std::vector<std::vector<std::vector<RefOp>>> ops(kRanks, std::vector<std::vector<RefOp>>(kIterations));
    for (int r = 0; r < kRanks; ++r)
        for (int it = 0; it < kIterations; ++it) {
            std::int64_t ts = 1733905446819790 + it * 1000000 + r * 7;
            std::vector<std::string> lines;
            for (int k = 0; k < 120; ++k) {
                RefOp op;
                // Every 9th op runs a second time under the same name (a loop body): its own execution.
                const int id = k % 9 == 8 ? k - 4 : k;
                op.type = types[std::size_t(id) % types.size()];
                op.name = "Default_network-WithLossCell__backbone-Baichuan_layers_" + std::to_string(id % 40) + "_" +
                    op.type + "-op" + std::to_string(id * 3 + r);
                op.start = ts;
                const int inputs = 1 + k % 3, outputs = 1 + k % 2;
                for (int io = 0; io < 2; ++io)
                    for (int s = 0; s < (io ? outputs : inputs); ++s) {
                        RefTensor t;
                        t.opType = op.type;
                        t.opName = op.name;
                        t.ts = ts++;
                        t.output = io == 1;
                        t.slot = s;
                        t.dtype = dtypes[std::size_t(k + s) % dtypes.size()];
                        const int nd = (k + s) % 4;  // 0: a scalar "()"
                        for (int d = 0; d < nd; ++d) t.shape.push_back(1 + std::int64_t((k * 31 + d * 7) % 5000));
                        t.max = cell(rng, true);
                        t.min = cell(rng, true);
                        t.avg = cell(rng, true);
                        // Past 2^32 elements the packed form cannot hold the count: the wide one must.
                        t.count = k % 17 == 5 ? "6000000000" : std::to_string(k * 1000 + s);
                        t.nanCount = std::to_string((k + s) % 3);
                        t.l2 = cell(rng, false);
                        std::string shape = "\"(";
                        for (std::size_t d = 0; d < t.shape.size(); ++d)
                            shape += (d ? "," : "") + std::to_string(t.shape[d]);
                        shape += ")\"";
                        lines.push_back(t.opType + "," + t.opName + ",0," + (op.type == "AllReduce" ? "1" : "0") + "," +
                                        std::to_string(t.ts) + "," + (t.output ? "output" : "input") + "," +
                                        std::to_string(s) + ",64," + t.dtype + "," + shape + "," + t.max + "," + t.min +
                                        "," + t.avg + "," + t.count + "," + t.nanCount + "," + t.l2 + ",");
                        op.tensors.push_back(std::move(t));
                    }
                ts += 10;
                ops[std::size_t(r)][std::size_t(it)].push_back(std::move(op));
            }
            std::shuffle(lines.begin(), lines.end(), rng);  // A+M writes rows from several threads
            std::string text = kHeader;
            for (const auto& l : lines) text += l + "\n";
            dltest::writeFile(
                root / ("rank_" + std::to_string(r)) / "Baichuan2/0" / std::to_string(it) / "statistic.csv", text);
        }
    return ops;
}

// What a cell says, read with strtod: a finite figure (true) or not.
bool finiteCell(const std::string& s, double& v) {
    if (s == "null") return false;
    v = std::strtod(s.c_str(), nullptr);
    return std::isfinite(v) && std::fabs(v) < 1.79769e308;
}

DType dtypeOf(const std::string& s) {
    static const std::map<std::string, DType> m = {{"float16", DType::Float16},
                                                   {"float32", DType::Float32},
                                                   {"bfloat16", DType::BFloat16},
                                                   {"int32", DType::Int32}};
    return m.at(s);
}

void expectTensor(const DumpIndex& index, const TensorRecord& t, const RefTensor& ref, const std::string& where) {
    SCOPED_TRACE(where + " " + ref.opName + (ref.output ? " output " : " input ") + std::to_string(ref.slot));
    EXPECT_EQ(t.io, ref.output ? Io::Output : Io::Input);
    EXPECT_EQ(t.slot, ref.slot);
    EXPECT_EQ(t.timestampUs, ref.ts);
    EXPECT_EQ(t.dtype, dtypeOf(ref.dtype));
    EXPECT_EQ(index.shape(t), ref.shape);
    EXPECT_TRUE(t.flags & HasCsvStats);
    const TensorStats s = index.stats(t);
    // docs/formats.md 1.6: finite Max/Min are figures unless max < min (the empty-tensor marker);
    // inf cells are evidence, "at least one" when the file has no count column for them.
    const bool mxOk = ref.max != "null", mnOk = ref.min != "null";
    const double mxv = mxOk ? std::strtod(ref.max.c_str(), nullptr) : 0,
                 mnv = mnOk ? std::strtod(ref.min.c_str(), nullptr) : 0;
    const bool empty = mxOk && mnOk && mxv < mnv;
    double mx = 0, mn = 0, avg = 0, l2 = 0;
    const bool hasMax = finiteCell(ref.max, mx) && !empty, hasMin = finiteCell(ref.min, mn) && !empty;
    EXPECT_EQ(s.has(stat::Max), hasMax);
    EXPECT_EQ(s.has(stat::Min), hasMin);
    if (hasMax) {
        EXPECT_EQ(s.max, mx);
    }
    if (hasMin) {
        EXPECT_EQ(s.min, mn);
    }
    EXPECT_EQ(s.has(stat::MaxAbs), hasMax && hasMin);
    if (hasMax && hasMin) {
        EXPECT_EQ(s.maxAbs, std::max(std::fabs(mx), std::fabs(mn)));
    }
    EXPECT_EQ(s.has(stat::Mean), finiteCell(ref.avg, avg));
    if (s.has(stat::Mean)) {
        EXPECT_EQ(s.mean, avg);
    }
    ASSERT_TRUE(finiteCell(ref.l2, l2));
    EXPECT_TRUE(s.has(stat::L2));
    EXPECT_EQ(s.l2, l2);
    EXPECT_TRUE(s.has(stat::Count | stat::NanCount));
    const std::uint64_t count = std::stoull(ref.count);
    EXPECT_EQ(s.count, count);
    EXPECT_EQ(s.nanCount, std::stoull(ref.nanCount));  // the column wins over nan cells
    const bool nonEmptyMax = (mxOk && !std::isnan(mxv) && !empty) || count > 0;
    const bool nonEmptyMin = (mnOk && !std::isnan(mnv) && !empty) || count > 0;
    const bool posInf = (mxOk && mxv == HUGE_VAL) || (mnOk && mnv == HUGE_VAL && nonEmptyMax);
    const bool negInf = (mnOk && mnv == -HUGE_VAL) || (mxOk && mxv == -HUGE_VAL && nonEmptyMin);
    EXPECT_EQ(s.has(stat::PosInfCount), posInf);
    EXPECT_EQ(s.has(stat::NegInfCount), negInf);
    if (posInf) {
        EXPECT_EQ(s.posInfCount, 1u);
    }
    if (negInf) {
        EXPECT_EQ(s.negInfCount, 1u);
    }
}

class StatisticIndex : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir = new dltest::TempDir("dumplens_statindex_");
        expected = writeDump(dir->path);
        for (unsigned threads : {1u, 2u}) {
            IndexOptions opt;
            opt.useCache = false;
            opt.threads = threads;
            IndexReport report;
            std::string error;
            auto* index = new DumpIndex;
            ASSERT_TRUE(indexDump(dir->path.string(), opt, *index, report, error)) << error;
            (threads == 1 ? one : two) = index;
        }
    }
    static void TearDownTestSuite() {
        delete one;
        delete two;
        delete dir;
    }
    static inline dltest::TempDir* dir = nullptr;
    static inline std::vector<std::vector<std::vector<RefOp>>> expected;
    static inline DumpIndex* one = nullptr;
    static inline DumpIndex* two = nullptr;
};

TEST_F(StatisticIndex, EveryRowIsATensorWithItsFiguresNamesAndOrder) {
    const DumpIndex& index = *one;
    EXPECT_TRUE(index.warnings.empty()) << index.warnings.front().path << ": " << index.warnings.front().reason;
    std::size_t op = 0, tensors = 0;
    for (int r = 0; r < kRanks; ++r)
        for (int it = 0; it < kIterations; ++it)
            for (const RefOp& ref : expected[std::size_t(r)][std::size_t(it)]) {
                ASSERT_LT(op, index.ops.size());
                const OpRecord& o = index.ops[op];
                const std::string where = "rank " + std::to_string(r) + " iteration " + std::to_string(it);
                EXPECT_EQ(o.rank, std::uint32_t(r)) << where;
                EXPECT_EQ(o.iteration, std::uint32_t(it)) << where;
                EXPECT_EQ(index.strings.view(o.type), ref.type) << where;
                ASSERT_EQ(index.strings.view(o.name), ref.name) << where;
                EXPECT_EQ(o.startUs, ref.start) << where;
                EXPECT_EQ(o.streamId, ref.type == "AllReduce" ? 1u : 0u);
                // Inputs by slot, then outputs by slot.
                std::vector<const RefTensor*> order;
                for (const auto& t : ref.tensors) order.push_back(&t);
                std::stable_sort(order.begin(), order.end(), [](const RefTensor* a, const RefTensor* b) {
                    return std::pair(a->output, a->slot) < std::pair(b->output, b->slot);
                });
                ASSERT_EQ(o.tensorCount, order.size()) << where << " " << ref.name;
                for (std::size_t k = 0; k < order.size(); ++k) {
                    const TensorRecord& t = index.tensors[o.firstTensor + k];
                    EXPECT_EQ(t.op, op);
                    expectTensor(index, t, *order[k], where);
                }
                tensors += order.size();
                ++op;
            }
    EXPECT_EQ(index.ops.size(), op);
    EXPECT_EQ(index.tensors.size(), tensors);
    ASSERT_EQ(index.ranks.size(), std::size_t(kRanks));
    for (int r = 0; r < kRanks; ++r) EXPECT_EQ(index.ranks[std::size_t(r)].rank, std::uint32_t(r));
}

TEST_F(StatisticIndex, TheThreadCountChangesNothing) {
    const DumpIndex &a = *one, &b = *two;
    ASSERT_EQ(a.ops.size(), b.ops.size());
    ASSERT_EQ(a.tensors.size(), b.tensors.size());
    for (std::size_t i = 0; i < a.ops.size(); ++i) {
        EXPECT_EQ(a.strings.view(a.ops[i].name), b.strings.view(b.ops[i].name));
        EXPECT_EQ(a.ops[i].startUs, b.ops[i].startUs);
        EXPECT_EQ(a.ops[i].execPos, b.ops[i].execPos);
    }
    for (std::size_t i = 0; i < a.tensors.size(); ++i) {
        const TensorStats x = a.stats(a.tensors[i]), y = b.stats(b.tensors[i]);
        auto same = [](double p, double q) { return p == q || (std::isnan(p) && std::isnan(q)); };
        EXPECT_EQ(x.known, y.known) << "tensor " << i;
        EXPECT_TRUE(same(x.max, y.max) && same(x.min, y.min) && same(x.mean, y.mean) && same(x.l2, y.l2)) << i;
        EXPECT_TRUE(x.count == y.count && x.nanCount == y.nanCount && x.posInfCount == y.posInfCount &&
                    x.negInfCount == y.negInfCount)
            << "tensor " << i;
        EXPECT_EQ(a.shape(a.tensors[i]), b.shape(b.tensors[i]));
    }
}

}  // namespace

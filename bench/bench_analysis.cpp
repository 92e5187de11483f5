// Overflow analysis over a synthetic index of 1,000,000 tensors: 8 ranks (4 pipeline stages x 2
// tensor-parallel), 10 iterations, 3 tensors per op, forward/backward Send/Receive between
// stages; the NormHead SqrtGrad on the last stage overflows in iteration 6 and the inf spreads.
#include <benchmark/benchmark.h>

#include "core/analysis/overflow_analyzer.h"
#include "core/model/dump_index.h"

namespace {

dl::TensorStats stats(double maxAbs, bool inf) {
    dl::TensorStats s;
    s.min = -maxAbs;
    s.max = maxAbs;
    s.maxAbs = maxAbs;
    s.mean = 0;
    s.l2 = maxAbs;
    s.count = 4096;
    s.posInfCount = inf ? 3 : 0;
    s.known = dl::stat::AllFromData & ~dl::stat::Histogram;
    return s;
}

dl::DumpIndex syntheticIndex(std::size_t targetTensors) {
    constexpr std::uint32_t kRanks = 8, kIters = 10, kBadIter = 6;
    dl::DumpIndex idx;
    const std::size_t opsPerRankIter = targetTensors / 3 / kRanks / kIters;
    const dl::StrId types[] = {idx.strings.intern("MatMul"), idx.strings.intern("Add"), idx.strings.intern("Mul")};
    const dl::StrId send = idx.strings.intern("Send"), recv = idx.strings.intern("Receive");
    const dl::StrId sqrtGrad = idx.strings.intern("SqrtGrad"), sgName = idx.strings.intern("SqrtGrad-op42");
    const dl::StrId fwdScope = idx.strings.intern("Default/network/op"),
                    bwdScope = idx.strings.intern("Gradients/Default/network/op");
    const std::vector<std::int64_t> shape{64, 64};
    for (std::uint32_t rank = 0; rank < kRanks; ++rank) {
        const std::uint32_t stage = rank / 2;
        idx.ranks.push_back({rank, "rank_" + std::to_string(rank), dl::DumpFormat::MindSporeNpy, "", ""});
        for (std::uint32_t it = 0; it < kIters; ++it) {
            bool bad = it > kBadIter || (it == kBadIter && stage == 3);
            for (std::size_t k = 0; k < opsPerRankIter; ++k) {
                dl::OpRecord o;
                const bool backward = k >= opsPerRankIter / 2;
                o.rank = rank;
                o.iteration = it;
                o.execPos = std::uint32_t(k);
                o.startUs = o.endUs = std::int64_t(it) * 1000000 + std::int64_t(k) * 10 + stage;
                o.scope = backward ? bwdScope : fwdScope;
                o.type = types[k % 3];
                bool origin = false;
                if (k == 1 && stage > 0)
                    o.type = recv;  // forward receive
                else if (k == opsPerRankIter / 2 - 1 && stage < 3)
                    o.type = send;  // forward send
                else if (k == opsPerRankIter / 2 + 1 && stage < 3)
                    o.type = recv;  // backward receive
                else if (k == opsPerRankIter - 2 && stage > 0)
                    o.type = send;  // backward send
                else if (k == opsPerRankIter / 2 + 5 && stage == 3) {
                    o.type = sqrtGrad;
                    origin = it == kBadIter;
                }
                o.name = o.type == sqrtGrad
                    ? sgName
                    : idx.strings.intern(std::string(idx.strings.view(o.type)) + "-op" + std::to_string(k));
                o.firstTensor = std::uint32_t(idx.tensors.size());
                o.tensorCount = 3;
                const bool badHere = bad && (it > kBadIter || k > opsPerRankIter / 2 + 5);
                for (std::uint16_t slot = 0; slot < 3; ++slot) {
                    dl::TensorRecord t;
                    t.op = std::uint32_t(idx.ops.size());
                    t.io = slot < 2 ? dl::Io::Input : dl::Io::Output;
                    t.slot = slot < 2 ? slot : 0;
                    t.dtype = dl::DType::Float16;
                    t.ndim = 2;
                    t.shapeOffset = std::uint32_t(idx.dims.size());
                    idx.dims.insert(idx.dims.end(), shape.begin(), shape.end());
                    const bool infHere = (badHere && !origin) || (origin && slot == 2);
                    idx.setStats(t, stats(1.0 + double((k * 7 + slot) % 40000), infHere));
                    t.timestampUs = o.startUs;
                    idx.tensors.push_back(t);
                }
                idx.ops.push_back(o);
            }
        }
    }
    return idx;
}

void BM_AnalyzeMillionTensors(benchmark::State& state) {
    const dl::DumpIndex idx = syntheticIndex(1000000);
    dl::AnalysisOptions opt;
    std::size_t chain = 0;
    for (auto _ : state) {
        const dl::AnalysisResult r = dl::analyze(idx, opt);
        chain = r.chain.size();
        if (!r.firstOverflow || idx.strings.str(idx.ops[r.firstOverflow->op].type) != "SqrtGrad")
            state.SkipWithError("wrong origin");
        benchmark::DoNotOptimize(r);
    }
    state.counters["tensors"] = double(idx.tensors.size());
    state.counters["chain_steps"] = double(chain);
    state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(idx.tensors.size()));
}
BENCHMARK(BM_AnalyzeMillionTensors)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();

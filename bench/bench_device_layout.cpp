// Device layouts (core/formats/cann/device_layout.*): gathering a stored tensor into its original
// shape (what replay and compare load) and the statistics walk over its value runs (what the
// index does), against a plain copy / plain statistics of the same bytes. In memory, fp16.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/formats/cann/device_layout.h"
#include "core/stats/stats_accumulator.h"

namespace {

struct Layout {
    const char* format;
    std::vector<std::int64_t> stored, original;
};

// FRACTAL_NZ of a 4000 x 4000 matrix (250 x 250 tiles, 2.4 % padding on each axis), NC1HWC0 of an
// 8 x 250 x 64 x 64 activation (C1 = 16, 2.3 % padding).
const Layout kLayouts[] = {
    {"FRACTAL_NZ", {250, 250, 16, 16}, {4000, 3990}},
    {"NC1HWC0", {8, 16, 64, 64, 16}, {8, 250, 64, 64}},
};

dl::DeviceLayout layoutOf(benchmark::State& state) {
    const Layout& l = kLayouts[state.range(0)];
    dl::DeviceLayout out;
    std::string why;
    if (!dl::DeviceLayout::build(l.format, l.stored, l.original, out, why)) state.SkipWithError(why.c_str());
    state.SetLabel(l.format);
    return out;
}

std::vector<std::uint16_t> storedHalves(std::uint64_t n) {
    std::vector<std::uint16_t> v(n);
    for (std::uint64_t i = 0; i < n; ++i) v[i] = std::uint16_t(0x3c00 + (i * 2654435761u) % 0x0800);  // 1 .. 2
    return v;
}

void BM_LayoutToNd(benchmark::State& state) {
    const dl::DeviceLayout l = layoutOf(state);
    const auto stored = storedHalves(l.deviceElements());
    std::vector<std::uint16_t> nd(l.validElements());
    for (auto _ : state) {
        l.toNd(stored.data(), nd.data());
        benchmark::DoNotOptimize(nd.data());
    }
    state.SetBytesProcessed(std::int64_t(state.iterations() * l.deviceElements() * 2));
}
BENCHMARK(BM_LayoutToNd)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// The baseline of the gather: copying the stored bytes as they are.
void BM_LayoutPlainCopy(benchmark::State& state) {
    const dl::DeviceLayout l = layoutOf(state);
    const auto stored = storedHalves(l.deviceElements());
    std::vector<std::uint16_t> copy(stored.size());
    for (auto _ : state) {
        std::memcpy(copy.data(), stored.data(), stored.size() * 2);
        benchmark::DoNotOptimize(copy.data());
    }
    state.SetBytesProcessed(std::int64_t(state.iterations() * l.deviceElements() * 2));
}
BENCHMARK(BM_LayoutPlainCopy)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// Statistics over the value runs as cann_stats adds them: touching runs as one, runs shorter than
// 1,024 elements gathered and added in batches of 256 KiB.
void BM_LayoutStatsWithoutPadding(benchmark::State& state) {
    const dl::DeviceLayout l = layoutOf(state);
    const auto stored = storedHalves(l.deviceElements());
    std::vector<std::uint16_t> batch;
    for (auto _ : state) {
        dl::StatsAccumulator acc;
        std::uint64_t start = 0, count = 0;
        auto flush = [&]() {
            if (count >= 1024)
                acc.add(stored.data() + start, count, dl::DType::Float16);
            else
                batch.insert(batch.end(), stored.begin() + std::ptrdiff_t(start),
                             stored.begin() + std::ptrdiff_t(start + count));
            if (batch.size() >= (1u << 17)) {
                acc.add(batch.data(), batch.size(), dl::DType::Float16);
                batch.clear();
            }
        };
        l.forEachRun([&](std::uint64_t s, std::uint64_t n, std::uint64_t, std::uint64_t) {
            if (count && start + count == s) {
                count += n;
                return;
            }
            if (count) flush();
            start = s;
            count = n;
        });
        if (count) flush();
        if (!batch.empty()) acc.add(batch.data(), batch.size(), dl::DType::Float16);
        batch.clear();
        benchmark::DoNotOptimize(acc.stats());
    }
    state.SetBytesProcessed(std::int64_t(state.iterations() * l.deviceElements() * 2));
}
BENCHMARK(BM_LayoutStatsWithoutPadding)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// Statistics over every stored element, padding included (what the index did before it knew the layout).
void BM_LayoutStatsWithPadding(benchmark::State& state) {
    const dl::DeviceLayout l = layoutOf(state);
    const auto stored = storedHalves(l.deviceElements());
    for (auto _ : state) {
        dl::StatsAccumulator acc;
        acc.add(stored.data(), stored.size(), dl::DType::Float16);
        benchmark::DoNotOptimize(acc.stats());
    }
    state.SetBytesProcessed(std::int64_t(state.iterations() * l.deviceElements() * 2));
}
BENCHMARK(BM_LayoutStatsWithPadding)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

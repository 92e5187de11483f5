// Timeline rendering: a synthetic 1,000,000-op index (8 ranks, 4 stages) painted offscreen into a
// 1600x900 QImage at several zoom levels; reports ms per frame and the timeline's memory.
//   QT_QPA_PLATFORM=offscreen build/gui/bench/bench_timeline_render
#include <benchmark/benchmark.h>

#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <random>
#include <string>

#include "core/timeline/timeline_data.h"
#include "ui/views/timeline/timeline_painter.h"

namespace {

struct Fixture {
    dl::DumpIndex index;
    dl::AnalysisResult analysis;
    dl::OpStates states;
    std::shared_ptr<const dl::TimelineData> data;
    double buildMs = 0;
};

// 8 ranks x 125,000 ops of 5-60 us with 1-10 us gaps; a few near-limit, saturated and inf ops.
// startOnly: no end times (slices inferred to the next op) and kernel-by-kernel names, one per
// op, so every slice wide enough gets a short name parsed out of a long scoped name.
Fixture makeFixture(bool startOnly) {
    Fixture fx;
    std::mt19937 rng(42);
    const dl::StrId type = fx.index.strings.intern("MatMul");
    const std::uint32_t ranks = 8, perRank = 125000;
    fx.index.ops.reserve(ranks * perRank);
    for (std::uint32_t r = 0; r < ranks; ++r) {
        std::int64_t t = 1700000000000000 + r * 37;
        for (std::uint32_t k = 0; k < perRank; ++k) {
            dl::OpRecord o;
            o.rank = r;
            o.type = type;
            o.name = startOnly ? fx.index.strings.intern(
                                     "Default/network-TrainOneStepCell/layers." + std::to_string(k % 96) +
                                     "-DecoderLayer/attention-Attention/MatMul-op" + std::to_string(r * perRank + k))
                               : type;
            o.execPos = k;
            t += 1 + rng() % 10;
            o.startUs = t;
            t += 5 + rng() % 55;
            o.endUs = startOnly ? 0 : t;
            fx.index.ops.push_back(o);
        }
        fx.analysis.stages.stageOfRank[r] = static_cast<int>(r / 2);
    }
    fx.analysis.stages.stageCount = 4;
    fx.states.op.assign(fx.index.ops.size(), dl::OpState::Normal);
    for (std::size_t i = 0; i < fx.states.op.size(); i += 997) fx.states.op[i] = dl::OpState(1 + rng() % 3);
    fx.states.op[ranks * perRank / 2] = dl::OpState::Origin;
    const auto t0 = std::chrono::steady_clock::now();
    fx.data = std::make_shared<const dl::TimelineData>(dl::buildTimeline(fx.index, &fx.analysis, fx.states, {}));
    fx.buildMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return fx;
}

Fixture& fixture(bool startOnly) {
    static Fixture withEnds = makeFixture(false);
    static Fixture inferred = makeFixture(true);
    return startOnly ? inferred : withEnds;
}

// The Time column is ms per frame. range(0): visible fraction of the whole run in parts per million.
// range(1): 1 = no end times (inferred slices, scoped names).
void BM_TimelineRender(benchmark::State& state) {
    Fixture& fx = fixture(state.range(1) == 1);
    dlui::TimelinePainter painter;
    painter.setData(fx.data, &fx.index);
    dl::TimelineViewport vp;
    vp.setDataRange(fx.data->t0, fx.data->t1);
    const double frac = static_cast<double>(state.range(0)) / 1e6;
    const double mid = (vp.fullFrom() + vp.fullTo()) / 2;
    vp.zoomTo(mid - vp.span() * frac / 2, mid + vp.span() * frac / 2);
    QImage img(1600, 900, QImage::Format_ARGB32_Premultiplied);
    const QRect r(0, 0, 1600, 900);
    for (auto _ : state) {
        QPainter p(&img);
        painter.paint(p, r, vp, {});
        p.end();
        benchmark::DoNotOptimize(img.constBits());
    }
    state.counters["drawn"] = static_cast<double>(painter.lastDrawn());
    state.counters["visible_ops"] = static_cast<double>(fx.data->opsShown) * frac;
    state.counters["timeline_MiB"] = static_cast<double>(fx.data->memoryBytes()) / (1 << 20);
    state.counters["build_ms"] = fx.buildMs;
    state.counters["labels"] = static_cast<double>(painter.lastLabels().size());
}
BENCHMARK(BM_TimelineRender)
    ->ArgsProduct({{1000000, 100000, 10000, 1000, 100, 10}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM",
            qgetenv("QT_QPA_PLATFORM").isEmpty() ? QByteArray("offscreen") : qgetenv("QT_QPA_PLATFORM"));
    QGuiApplication app(argc, argv);  // fonts for the lane labels and ruler
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

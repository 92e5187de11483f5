#include "core/demo/demo_model.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>

#include "core/demo/demo_simulation.h"
#include "core/util/half.h"

namespace dl::demo {

namespace {

// A probe run: the real network, SqrtGrad in fp32 so nothing overflows, up to the overflow iteration.
DemoProbe probeRun(const DemoOptions& o, const DemoCalibration& cal) {
    DemoOptions p = o;
    p.scenario = DemoScenario::NormHeadBackward;
    p.mode = OverflowMode::Saturation;  // keeps a badly guessed first pass finite
    DemoSimulation sim(p, cal, false, DType::Float32);
    sim.run(std::max(o.overflowIteration, o.decoyIteration) + 1);
    return sim.probe;
}

// Finds the initial norm of the culprit row so that the run hits
// the story's numbers: |dy| ~ 47580 at the overflow iteration. The forward is invariant to the
// row's norm, so dy scales as 1/norm and a few fixed-point passes converge.
DemoCalibration calibrate(const DemoOptions& o) {
    // Depends only on the two iteration numbers, so it is computed once per pair.
    static std::mutex mutex;
    static std::map<std::pair<int, int>, DemoCalibration> cache;
    const std::lock_guard<std::mutex> lock(mutex);
    const auto key = std::make_pair(o.overflowIteration, o.decoyIteration);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    DemoCalibration cal;
    const int it = o.overflowIteration;
    for (int pass = 0; pass < 4; ++pass) {
        const DemoProbe p = probeRun(o, cal);
        const float dy = std::fabs(p.culpritDy[std::size_t(it)]);
        if (!(dy > 0.0f) || !std::isfinite(dy)) break;
        cal.rowScale *= std::min(dy, kFp16Max) / kTargetDy;  // dy ~ 1/norm
    }
    cache[key] = cal;
    return cal;
}

}  // namespace

bool DemoModel::run(DemoTrace& trace, std::string& error) {
    if (m_options.iterations < 1 || m_options.iterations > 64) {
        error = "demo: iterations must be 1..64";
        return false;
    }
    if (m_options.overflowIteration < 1 || m_options.decoyIteration < 0) {
        error = "demo: overflowIteration must be >= 1 and decoyIteration >= 0";
        return false;
    }
    try {
        DemoCalibration cal = calibrate(m_options);
        if (m_options.scenario != DemoScenario::NormHeadBackward) cal.headDecay = 1.0f;  // no collapse
        if (m_options.scenario == DemoScenario::ForwardOrigin) {
            cal.forwardOrigin = true;
            cal.decoyValue = kFp16Max;
        }
        DemoSimulation sim(m_options, cal, true, m_options.sqrtGradPrecision);
        sim.run(m_options.iterations);
        if (std::getenv("DUMPLENS_DEMO_DEBUG")) {
            std::fprintf(stderr, "alpha=%g rowScale=%g decoy=%g\n", cal.alpha, cal.rowScale, sim.trace.decoyMaxAbs);
            for (std::size_t i = 0; i < sim.probe.culpritDy.size(); ++i)
                std::fprintf(stderr, "it %zu loss %g dy %g y %g S %g dx %g\n", i, sim.trace.lossPerIteration[i],
                             sim.probe.culpritDy[i], sim.probe.culpritY[i],
                             sim.probe.culpritDy[i] * sim.probe.culpritY[i],
                             sim.probe.culpritDy[i] * 0.5 / sim.probe.culpritY[i]);
        }
        trace = std::move(sim.trace);
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
    return true;
}

}  // namespace dl::demo

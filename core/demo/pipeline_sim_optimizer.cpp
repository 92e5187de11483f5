// The optimizer step that ends a simulated iteration: the gradients' AllReduce over the
// data-parallel replicas, the global-norm clip and the Momentum update. Apart from the units
// because it runs once per iteration over every stage.
#include <algorithm>
#include <cmath>

#include "core/demo/pipeline_model.h"
#include "core/demo/pipeline_sim.h"

namespace dl::demo {

using namespace pipeline_model;

void PipelineSim::optimizerStep() {
    const int n = ranks();
    const auto mul = [](float a, float b) { return a * b; };
    // Every rank's gradients: its layers' (chunk, layer, w2/w1/w3) and the head's.
    auto gradsOf = [&](int r) {
        std::vector<TensorP*> g;
        for (auto& [key, w] : m_weights[std::size_t(r)]) {
            g.push_back(&w.ad);
            g.push_back(&w.ag);
            g.push_back(&w.au);
        }
        if (m_head[std::size_t(r)].wh) g.push_back(&m_head[std::size_t(r)].ah);
        return g;
    };
    // Data parallel: each gradient summed over the replicas of its (stage, lane).
    if (m_dp > 1)
        for (int st = 0; st < m_pp; ++st)
            for (int ln = 0; ln < m_tp; ++ln) {
                std::vector<int> group;
                for (int rp = 0; rp < m_dp; ++rp) group.push_back(rankOf(rp, st, ln));
                const std::size_t count = gradsOf(group[0]).size();
                for (std::size_t k = 0; k < count; ++k) {
                    std::vector<TensorP> in;
                    for (int r : group) in.push_back(*gradsOf(r)[k]);
                    const auto outv = allReduce(group, in, kReducer);
                    for (std::size_t m = 0; m < group.size(); ++m) *gradsOf(group[m])[k] = outv[m];
                }
            }
    std::vector<std::vector<TensorP>> unscaled(static_cast<std::size_t>(n));
    const float inv = 1.0f / (kLossScale * float(m_spec.microBatches * m_dp));
    for (int r = 0; r < n; ++r) {
        auto s = scalar(DType::Float32, inv);
        for (TensorP* g : gradsOf(r))
            unscaled[std::size_t(r)].push_back(
                out(rec(r, kOptim, "Mul", {*g, s}, {m_k.binary(*g, s, DType::Float32, mul)})));
    }
    if (m_spec.globalNorm) {
        std::vector<TensorP> local(static_cast<std::size_t>(n));
        std::vector<int> all;
        for (int r = 0; r < n; ++r) {
            all.push_back(r);
            std::vector<TensorP> parts;
            for (const auto& g : unscaled[std::size_t(r)]) {
                auto sq = out(rec(r, kClip, "Square", {g}, {m_k.binary(g, g, DType::Float32, mul)}));
                float acc = 0;
                for (float x : sq->v) acc += x;
                parts.push_back(out(rec(r, kClip, "ReduceSum", {sq}, {scalar(DType::Float32, acc)})));
            }
            float acc = 0;
            for (const auto& p : parts) acc += p->v[0];
            local[std::size_t(r)] = out(rec(r, kClip, "AddN", parts, {scalar(DType::Float32, acc)}));
        }
        const auto total = allReduce(all, local, kClip);
        for (int r = 0; r < n; ++r) {
            const auto& t = total[std::size_t(r)];
            auto nn =
                out(rec(r, kClip, "Sqrt", {t}, {m_k.unary(t, DType::Float32, [](float a) { return std::sqrt(a); })}));
            auto clip = scalar(DType::Float32, kClipNorm);
            auto mx =
                out(rec(r, kClip, "Maximum", {nn, clip}, {m_k.binary(nn, clip, DType::Float32, [](float a, float b) {
                            return std::isnan(a) ? a : std::max(a, b);
                        })}));
            auto coef = out(rec(r, kClip, "RealDiv", {clip, mx},
                                {m_k.binary(clip, mx, DType::Float32, [](float a, float b) { return a / b; })}));
            for (auto& g : unscaled[std::size_t(r)])
                g = out(rec(r, kClip, "Mul", {g, coef}, {m_k.binary(g, coef, DType::Float32, mul)}));
        }
    }
    for (int r = 0; r < n; ++r) {
        auto lr = scalar(DType::Float32, kLr), mom = scalar(DType::Float32, kMomentum);
        std::size_t k = 0;
        auto update = [&](TensorP& var, TensorP& m) {
            const TensorP& g = unscaled[std::size_t(r)][k++];
            auto [nv, nm] = m_k.applyMomentum(var, m, lr, g, mom);
            rec(r, kOptim, "ApplyMomentum", {var, m, lr, g, mom}, {nv}, ClusterOpKind::Optimizer);
            m_producer[nm.get()] = int(trace.ops.size() - 1);  // the accumulation is updated in place
            var = nv;
            m = nm;
        };
        for (auto& [key, w] : m_weights[std::size_t(r)]) {
            update(w.wd, w.md);
            update(w.wg, w.mg);
            update(w.wu, w.mu);
        }
        if (m_head[std::size_t(r)].wh) update(m_head[std::size_t(r)].wh, m_head[std::size_t(r)].mh);
        // Gradient accumulators start the next iteration at zero.
        auto zeros = m_k.make(DType::Float32, {kHidden}, std::vector<float>(kHidden, 0.f));
        for (auto& [key, w] : m_weights[std::size_t(r)]) w.ad = w.ag = w.au = zeros;
        if (m_head[std::size_t(r)].wh) m_head[std::size_t(r)].ah = zeros;
    }
}

}  // namespace dl::demo

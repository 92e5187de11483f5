// One micro-batch's forward and backward on one stage (a chunk of it under the interleaved
// schedule): the decoder layers, the head and the loss, and their gradients into the accumulators.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/demo/pipeline_model.h"
#include "core/demo/pipeline_sim.h"

namespace dl::demo {

using namespace pipeline_model;

namespace {

float silu(float x) { return x / (1.f + std::exp(-x)); }
float siluGrad(float x) {
    const float s = 1.f / (1.f + std::exp(-x));
    return s * (1.f + x * (1.f - s));
}

}  // namespace

void PipelineSim::forwardUnit(int rp, int st, int mb, int c) {
    const int vs = virtualStage(st, c), last = m_pp * m_chunks - 1;
    const DType f16 = DType::Float16;
    std::vector<TensorP> x(static_cast<std::size_t>(m_tp));
    std::vector<int> group;
    for (int ln = 0; ln < m_tp; ++ln) {
        const int r = rankOf(rp, st, ln);
        group.push_back(r);
        if (vs == 0) {
            auto ids = m_k.make(DType::Int32, {kTokens}, m_tokens[flat(rp, m_spec.microBatches, mb)]);
            x[std::size_t(ln)] = out(
                rec(r, kModel + "/tok_embeddings-VocabEmbedding", "Gather", {m_emb, ids}, {m_k.gather(m_emb, ids)}));
        } else {
            x[std::size_t(ln)] = receive(r, mb, vs, false, layerScope(globalLayer(st, c, 0)));
        }
    }
    for (int l = 0; l < m_spec.layersPerStage; ++l) {
        const std::string s = layerScope(globalLayer(st, c, l));
        const std::string ff = s + "/feed_forward-FeedForward";
        std::vector<TensorP> partial(static_cast<std::size_t>(m_tp));
        for (int ln = 0; ln < m_tp; ++ln) {
            const int r = group[std::size_t(ln)];
            const Weights& w = m_weights[std::size_t(r)].at({c, l, 0});
            Saved& sv = m_saved[{r, mb, c, l}];
            sv.x = x[std::size_t(ln)];
            auto [n, rstd] = m_k.rmsNorm(sv.x, m_gamma, kNormEps);
            rec(r, s + "/ffn_norm-RMSNorm", "RmsNorm", {sv.x, m_gamma}, {n, rstd});
            sv.n = n;
            sv.rstd = rstd;
            sv.g = out(rec(r, ff + "/w1-Linear", "MatMul", {n, w.wg},
                           {m_k.binary(n, w.wg, f16, [](float a, float b) { return a * b; })}));
            sv.u = out(rec(r, ff + "/w3-Linear", "MatMul", {n, w.wu},
                           {m_k.binary(n, w.wu, f16, [](float a, float b) { return a * b; })}));
            sv.s = out(rec(r, ff + "/act-SiLU", "SiLU", {sv.g}, {m_k.unary(sv.g, f16, silu)}));
            sv.m = out(
                rec(r, ff, "Mul", {sv.s, sv.u}, {m_k.binary(sv.s, sv.u, f16, [](float a, float b) { return a * b; })}));
            partial[std::size_t(ln)] = out(rec(r, ff + "/w2-Linear", "MatMul", {sv.m, w.wd},
                                               {m_k.binary(sv.m, w.wd, f16, [](float a, float b) { return a * b; })}));
        }
        const auto o = m_tp > 1 ? allReduce(group, partial, ff + "/w2-Linear") : partial;
        for (int ln = 0; ln < m_tp; ++ln) {
            const int r = group[std::size_t(ln)];
            const auto& oo = o[std::size_t(ln)];
            x[std::size_t(ln)] =
                out(rec(r, s, "Add", {x[std::size_t(ln)], oo},
                        {m_k.binary(x[std::size_t(ln)], oo, f16, [](float a, float b) { return a + b; })}));
        }
    }
    for (int ln = 0; ln < m_tp; ++ln) {
        const int r = group[std::size_t(ln)];
        if (vs == last) {
            m_headIn[{r, mb, c}] = x[std::size_t(ln)];
            continue;
        }
        const int nextStage = st + 1 < m_pp ? st + 1 : 0, nextChunk = st + 1 < m_pp ? c : c + 1;
        send(r, rankOf(rp, nextStage, ln), mb, virtualStage(nextStage, nextChunk), false,
             layerScope(globalLayer(st, c, m_spec.layersPerStage - 1)), x[std::size_t(ln)]);
    }
    // The last virtual stage: final norm, head and loss, and the head's backward (dy).
    if (vs != last) return;
    for (int ln = 0; ln < m_tp; ++ln) {
        const int r = group[std::size_t(ln)];
        HeadState& h = m_head[std::size_t(r)];
        const TensorP hx = m_headIn.at({r, mb, c});
        auto [n, rstd] = m_k.rmsNorm(hx, m_gamma, kNormEps);
        rec(r, kModel + "/norm_out-RMSNorm", "RmsNorm", {hx, m_gamma}, {n, rstd});
        auto z =
            out(rec(r, kHead, "MatMul", {n, h.wh}, {m_k.binary(n, h.wh, f16, [](float a, float b) { return a * b; })}));
        auto zf = out(rec(r, kLoss, "Cast", {z}, {m_k.cast(z, DType::Float32)}));
        // Softmax cross-entropy over the 8 values of each token against its label.
        const auto& lab = m_labels[flat(rp, m_spec.microBatches, mb)];
        std::vector<float> loss(kTokens), g(std::size_t(kTokens * kHidden));
        for (int t = 0; t < kTokens; ++t) {
            float mx = -std::numeric_limits<float>::infinity(), sum = 0;
            for (int j = 0; j < kHidden; ++j) mx = std::max(mx, zf->v[flat(t, kHidden, j)]);
            for (int j = 0; j < kHidden; ++j) sum += std::exp(zf->v[flat(t, kHidden, j)] - mx);
            const int y = int(lab[std::size_t(t)]);
            loss[std::size_t(t)] = m_k.round(DType::Float32, std::log(sum) + mx - zf->v[flat(t, kHidden, y)]);
            for (int j = 0; j < kHidden; ++j)
                g[flat(t, kHidden, j)] =
                    m_k.round(DType::Float32, std::exp(zf->v[flat(t, kHidden, j)] - mx) / sum - (j == y ? 1.f : 0.f));
        }
        auto labels = m_k.make(DType::Int32, {kTokens}, lab);
        const int ce =
            rec(r, kLoss, "SoftmaxCrossEntropyWithLogits", {zf, labels},
                {m_k.make(DType::Float32, {kTokens}, loss), m_k.make(DType::Float32, {kTokens, kHidden}, g)});
        if (ln == 0 && rp == 0) {
            float l = 0;
            for (float v : loss) l += v;
            m_lossSum += l / float(kTokens);
        }
        auto sens = scalar(DType::Float32, kLossScale);
        auto gs = out(rec(r, grad(kLoss, "SoftmaxCrossEntropyWithLogits"), "Mul", {out(ce, 1), sens},
                          {m_k.binary(out(ce, 1), sens, DType::Float32, [](float a, float b) { return a * b; })}));
        auto gh = out(rec(r, grad(kLoss, "Cast"), "Cast", {gs}, {m_k.cast(gs, f16)}));
        auto dn = out(rec(r, grad(kHead, "MatMul"), "MatMul", {gh, h.wh},
                          {m_k.binary(gh, h.wh, f16, [](float a, float b) { return a * b; })}));
        auto dwh = out(rec(r, grad(kHead, "MatMul"), "MatMul", {gh, n}, {reduceTokens(gh, n)}));
        h.ah = out(rec(r, kAccu, "AssignAdd", {h.ah, dwh}, {accumulate(h.ah, dwh)}));
        auto [dx, dgamma] = m_k.rmsNormGrad(dn, hx, rstd, m_gamma);
        rec(r, grad(kModel + "/norm_out-RMSNorm", "RmsNorm"), "RmsNormGrad", {dn, hx, rstd, m_gamma}, {dx, dgamma});
        m_dyOf[{r, mb, c}] = dx;
    }
}

TensorP PipelineSim::reduceTokens(const TensorP& a, const TensorP& b) {
    // A weight's gradient: sum over the tokens of a * b, in fp32 (the accumulation's type).
    std::vector<float> r(kHidden, 0.f);
    for (int t = 0; t < kTokens; ++t)
        for (int j = 0; j < kHidden; ++j) r[std::size_t(j)] += a->v[flat(t, kHidden, j)] * b->v[flat(t, kHidden, j)];
    for (auto& x : r) x = m_k.round(DType::Float32, x);
    return m_k.make(DType::Float32, {kHidden}, r);
}

TensorP PipelineSim::accumulate(const TensorP& acc, const TensorP& g) {
    return m_k.binary(acc, g, DType::Float32, [](float a, float b) { return a + b; });
}

void PipelineSim::backwardUnit(int rp, int st, int mb, int c) {
    const int vs = virtualStage(st, c);
    const DType f16 = DType::Float16;
    std::vector<TensorP> dy(static_cast<std::size_t>(m_tp));
    std::vector<int> group;
    for (int ln = 0; ln < m_tp; ++ln) {
        const int r = rankOf(rp, st, ln);
        group.push_back(r);
        if (vs == m_pp * m_chunks - 1) {
            dy[std::size_t(ln)] = m_dyOf.at({r, mb, c});
            m_dyOf.erase({r, mb, c});
            m_headIn.erase({r, mb, c});
        } else {
            // The bprop of the forward Send is a Receive of the gradient, named after it.
            dy[std::size_t(ln)] =
                receive(r, mb, vs, true,
                        "Gradients/" + layerScope(globalLayer(st, c, m_spec.layersPerStage - 1)) + "/gradSend");
        }
    }
    const auto mul = [](float a, float b) { return a * b; };
    for (int l = m_spec.layersPerStage - 1; l >= 0; --l) {
        const std::string s = layerScope(globalLayer(st, c, l));
        const std::string ff = s + "/feed_forward-FeedForward";
        std::vector<TensorP> dn(static_cast<std::size_t>(m_tp));
        std::vector<TensorP> dgs(static_cast<std::size_t>(m_tp)), dus(static_cast<std::size_t>(m_tp));
        for (int ln = 0; ln < m_tp; ++ln) {
            const int r = group[std::size_t(ln)];
            Weights& w = m_weights[std::size_t(r)].at({c, l, 0});
            const Saved& sv = m_saved.at({r, mb, c, l});
            const TensorP& d = dy[std::size_t(ln)];
            auto dm =
                out(rec(r, grad(ff + "/w2-Linear", "MatMul"), "MatMul", {d, w.wd}, {m_k.binary(d, w.wd, f16, mul)}));
            if (m_iter == m_spec.originIteration && rp == 0 && st == m_spec.originStage && ln == m_spec.originLane &&
                c == m_chunks - 1 && l == m_originLayer && mb == m_originMb) {
                float mx = 0;
                for (int t = 0; t < kTokens; ++t)
                    mx = std::max(
                        mx, std::fabs(dm->v[flat(t, kHidden, kOutlierDim)] * sv.u->v[flat(t, kHidden, kOutlierDim)]));
                dgateProbe = mx;
            }
            // SwiGLU backward: dgate = dm * up (the overflow), dup = dm * SiLU(gate).
            auto ds = out(rec(r, grad(ff, "Mul"), "Mul", {dm, sv.u}, {m_k.binary(dm, sv.u, f16, mul)}));
            auto du = out(rec(r, grad(ff, "Mul"), "Mul", {dm, sv.s}, {m_k.binary(dm, sv.s, f16, mul)}));
            auto dg = out(rec(r, grad(ff + "/act-SiLU", "SiLU"), "SiLUGrad", {ds, sv.g},
                              {m_k.binary(ds, sv.g, f16, [](float a, float x) { return a * siluGrad(x); })}));
            auto dn1 =
                out(rec(r, grad(ff + "/w1-Linear", "MatMul"), "MatMul", {dg, w.wg}, {m_k.binary(dg, w.wg, f16, mul)}));
            auto dn2 =
                out(rec(r, grad(ff + "/w3-Linear", "MatMul"), "MatMul", {du, w.wu}, {m_k.binary(du, w.wu, f16, mul)}));
            dn[std::size_t(ln)] = out(rec(r, "Gradients/" + ff, "AddN", {dn1, dn2},
                                          {m_k.binary(dn1, dn2, f16, [](float a, float b) { return a + b; })}));
            dgs[std::size_t(ln)] = dg;
            dus[std::size_t(ln)] = du;
        }
        // Column-parallel w1/w3: the input gradient is the sum of the lanes' partial products.
        const auto dnt = m_tp > 1 ? allReduce(group, dn, grad(ff + "/w1-Linear", "MatMul")) : dn;
        for (int ln = 0; ln < m_tp; ++ln) {
            const int r = group[std::size_t(ln)];
            Weights& w = m_weights[std::size_t(r)].at({c, l, 0});
            const Saved& sv = m_saved.at({r, mb, c, l});
            const TensorP d = dy[std::size_t(ln)];
            auto [dxp, dgamma] = m_k.rmsNormGrad(dnt[std::size_t(ln)], sv.x, sv.rstd, m_gamma);
            rec(r, grad(s + "/ffn_norm-RMSNorm", "RmsNorm"), "RmsNormGrad",
                {dnt[std::size_t(ln)], sv.x, sv.rstd, m_gamma}, {dxp, dgamma});
            dy[std::size_t(ln)] = out(rec(r, "Gradients/" + s, "AddN", {d, dxp},
                                          {m_k.binary(d, dxp, f16, [](float a, float b) { return a + b; })}));
            // Weight gradients, accumulated over the micro-batches in fp32.
            auto dwd = out(rec(r, grad(ff + "/w2-Linear", "MatMul"), "MatMul", {d, sv.m}, {reduceTokens(d, sv.m)}));
            auto dwg = out(rec(r, grad(ff + "/w1-Linear", "MatMul"), "MatMul", {dgs[std::size_t(ln)], sv.n},
                               {reduceTokens(dgs[std::size_t(ln)], sv.n)}));
            auto dwu = out(rec(r, grad(ff + "/w3-Linear", "MatMul"), "MatMul", {dus[std::size_t(ln)], sv.n},
                               {reduceTokens(dus[std::size_t(ln)], sv.n)}));
            w.ad = out(rec(r, kAccu, "AssignAdd", {w.ad, dwd}, {accumulate(w.ad, dwd)}));
            w.ag = out(rec(r, kAccu, "AssignAdd", {w.ag, dwg}, {accumulate(w.ag, dwg)}));
            w.au = out(rec(r, kAccu, "AssignAdd", {w.au, dwu}, {accumulate(w.au, dwu)}));
            m_saved.erase({r, mb, c, l});
        }
    }
    if (vs == 0) return;
    for (int ln = 0; ln < m_tp; ++ln) {
        const int r = group[std::size_t(ln)];
        const int prevStage = st > 0 ? st - 1 : m_pp - 1, prevChunk = st > 0 ? c : c - 1;
        send(r, rankOf(rp, prevStage, ln), mb, virtualStage(prevStage, prevChunk), true,
             "Gradients/" + layerScope(globalLayer(st, c, 0)) + "/gradReceive", dy[std::size_t(ln)]);
    }
}

}  // namespace dl::demo

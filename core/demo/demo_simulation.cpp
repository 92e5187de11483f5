#include "core/demo/demo_simulation.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "core/demo/demo_model.h"
#include "core/demo/demo_random.h"

namespace dl::demo {

namespace {

const std::string kBase = "Default/network-PipelineCell/_backbone-Baichuan2";
const std::string kModel = kBase + "/model-Baichuan2Model";
const std::string kHead = kBase + "/lm_head-NormHead";
const std::string kLoss = kBase + "/loss-CrossEntropyLoss";
const std::string kOptim = "Default/optimizer-Momentum";
constexpr float kLr = 0.004f, kHeadLr = 0.0005f, kMomentum = 0.9f, kNormEps = 1e-6f, kHeadEps = 1e-5f;
constexpr std::int64_t kIterationPeriodUs = 60000, kHcclLatencyUs = 37;
// Row-major index row * cols + col, computed in size_t (not in int, then widened).
constexpr std::size_t flat(int row, int cols, int col) {
    return std::size_t(row) * std::size_t(cols) + std::size_t(col);
}

std::string layerScope(int rank, int l) {
    return kModel + "/layers-CellList/" + std::to_string(rank * kLayersPerStage + l) + "-Baichuan2DecodeLayer";
}
std::string gradScope(const std::string& scope, const std::string& fwdType) {
    return "Gradients/" + scope + "/grad" + fwdType;
}
std::string commScope(bool backward, bool isSend, int tag) {
    // Forward Send/Receive carry activations r->r+1; their gradients use the same sr_tag, the
    // bprop of a Send being a Receive and vice versa.
    const std::string cell =
        std::string(isSend != backward ? "_pipeline_send" : "_pipeline_receive") + "_sr_tag_" + std::to_string(tag);
    const std::string fwd = "Default/network-PipelineCell/" + cell;
    return backward ? "Gradients/" + fwd + (isSend ? "/gradReceive" : "/gradSend") : fwd;
}

std::uint32_t mix(int rank, std::uint32_t pos) {
    Rng r{std::uint64_t(rank) * 1000003u + pos};
    return std::uint32_t(r.next() % 5u);
}

}  // namespace

DemoSimulation::DemoSimulation(const DemoOptions& options, const DemoCalibration& calib, bool record,
                               DType sqrtPrecision)
    : m_o(options), m_cal(calib), m_record(record), m_sqrtPrec(sqrtPrecision), m_k(options.mode) {
    trace.ranks = kRanks;
    m_graph.resize(kRanks);
    trace.execOrder.resize(kRanks);
    trace.maxComputeTaskId.assign(kRanks, 0);
    for (int r = 0; r < kRanks; ++r) m_opCounter.push_back(std::uint32_t(23 + 11 * r));
    m_taskCounter.assign(kRanks, {2u, 2u});
    m_now.assign(kRanks, 0);
    m_pos.assign(kRanks, 0);
    initParams();
}

TensorP DemoSimulation::scalar(DType t, float v) { return m_k.make(t, {}, {m_k.round(t, v)}); }

void DemoSimulation::initParams() {
    Rng rng{20240229};
    auto randn = [&](std::vector<std::int64_t> shape, float scale, DType t = DType::Float16) {
        std::int64_t n = 1;
        for (auto d : shape) n *= d;
        std::vector<float> v(static_cast<std::size_t>(n));
        for (auto& x : v) x = m_k.round(t, rng.normal() * scale);
        return m_k.make(t, std::move(shape), std::move(v));
    };
    // Embeddings share a common direction c (so final hidden states agree on a mean direction);
    // the massive dimension is almost unused except by the decoy token.
    std::vector<float> c(kHidden);
    for (auto& x : c) x = rng.normal() * 1.2f;
    c[kMassiveDim] = 0;
    std::vector<float> e(static_cast<std::size_t>(kVocab * kHidden));
    for (int t = 0; t < kVocab; ++t)
        for (int j = 0; j < kHidden; ++j) {
            float v = c[std::size_t(j)] + 0.6f * rng.normal();
            if (j == kMassiveDim) v = 0.05f * rng.normal();
            if (t == kDecoyToken && j == kMassiveDim) v = m_cal.decoyValue;
            e[flat(t, kHidden, j)] = m_k.round(DType::Float16, v);
        }
    m_emb = m_k.make(DType::Float16, {kVocab, kHidden}, std::move(e));
    const float ws = 1.0f / std::sqrt(float(kHidden));
    for (int r = 0; r < kRanks; ++r)
        for (int l = 0; l < kLayersPerStage; ++l) {
            Layer& L = m_layers[std::size_t(r)][std::size_t(l)];
            L.gamma = m_k.make(DType::Float16, {kHidden}, std::vector<float>(kHidden, 1.0f));
            auto w1 = randn({kHidden, kHidden}, ws), w2 = randn({kHidden, kHidden}, 0.5f * ws);
            auto w1v = w1->v, w2v = w2->v;
            const bool origin = m_cal.forwardOrigin && r == 0 && l == 0;
            for (int j = 0; j < kHidden; ++j) {
                // The massive dimension is barely read or written; in ForwardOrigin the first layer
                // writes a positive value there, which tips the outlier past 65504 in the residual Add.
                w1v[flat(kMassiveDim, kHidden, j)] = origin ? 0.5f : w1v[flat(kMassiveDim, kHidden, j)] * 0.001f;
                w2v[flat(j, kHidden, kMassiveDim)] = origin ? 1.0f : w2v[flat(j, kHidden, kMassiveDim)] * 0.01f;
            }
            for (auto& x : w1v) x = m_k.round(DType::Float16, x);
            for (auto& x : w2v) x = m_k.round(DType::Float16, x);
            L.w1 = m_k.make(DType::Float16, {kHidden, kHidden}, std::move(w1v));
            L.w2 = m_k.make(DType::Float16, {kHidden, kHidden}, std::move(w2v));
            L.acc1 = m_k.make(DType::Float16, {kHidden, kHidden}, std::vector<float>(flat(kHidden, kHidden, 0), 0.f));
            L.acc2 = L.acc1;
        }
    m_normF = m_k.make(DType::Float16, {kHidden}, std::vector<float>(kHidden, 1.0f));
    auto head = randn({kVocab, kHidden}, ws, DType::Float32);
    auto hv = head->v;
    // Culprit row: partly along the common direction, with a calibrated norm.
    std::vector<float> row(kHidden);
    float n2 = 0, c2 = 0;
    for (int j = 0; j < kHidden; ++j) c2 += c[std::size_t(j)] * c[std::size_t(j)];
    for (int j = 0; j < kHidden; ++j) {
        row[std::size_t(j)] =
            m_cal.alpha * c[std::size_t(j)] / std::sqrt(c2) + (1 - m_cal.alpha) * hv[flat(kCulpritToken, kHidden, j)];
        n2 += row[std::size_t(j)] * row[std::size_t(j)];
    }
    for (int j = 0; j < kHidden; ++j)
        hv[flat(kCulpritToken, kHidden, j)] = row[std::size_t(j)] * m_cal.rowScale / std::sqrt(n2);
    for (auto& x : hv) x = m_k.round(DType::Float16, x);
    m_head = m_k.make(DType::Float16, {kVocab, kHidden}, std::move(hv));
    m_headAcc = m_k.make(DType::Float16, {kVocab, kHidden}, std::vector<float>(flat(kVocab, kHidden, 0), 0.f));
    m_k.takeOverflow();  // initialisation is not an operator
}

TensorP DemoSimulation::rec(int rank, const std::string& scope, const std::string& type, std::vector<TensorP> in,
                            std::vector<TensorP> out, StreamKind stream) {
    const bool overflow = m_k.takeOverflow();
    const std::uint32_t pos = m_pos[std::size_t(rank)]++;
    auto& g = m_graph[std::size_t(rank)];
    if (pos == g.size()) {  // first iteration builds the static graph
        m_opCounter[std::size_t(rank)] += 1 + mix(rank, pos);
        const std::string shortName = type + "-op" + std::to_string(m_opCounter[std::size_t(rank)]);
        auto& task = m_taskCounter[std::size_t(rank)][std::size_t(stream)];
        g.push_back({type, scope + "/" + shortName, shortName, stream, task});
        task += stream == StreamKind::Comm ? 3 : 1;  // HCCL ops come with event record/wait tasks
        trace.execOrder[std::size_t(rank)].push_back(g.back().fullName);
        if (stream == StreamKind::Compute) trace.maxComputeTaskId[std::size_t(rank)] = g.back().task;
    } else if (pos > g.size() || g[pos].fullName.rfind(scope + "/" + type + "-op", 0) != 0) {
        throw std::logic_error("demo: graph differs between iterations at " + scope + "/" + type);
    }
    std::uint64_t elems = 0;
    for (const auto& t : in) elems += t->size();
    for (const auto& t : out) elems += t->size();
    m_now[std::size_t(rank)] += 5 + std::int64_t(elems / 256);
    if (m_record) {
        const Node& n = g[pos];
        DemoOp op;
        op.rank = rank;
        op.iteration = m_iter;
        op.position = pos;
        op.type = type;
        op.fullName = n.fullName;
        op.shortName = n.shortName;
        op.stream = n.stream;
        op.taskId = n.task;
        op.trueEndUs = m_now[std::size_t(rank)];
        op.inputs = std::move(in);
        op.outputs = out;
        op.overflow = overflow;
        trace.ops.push_back(std::move(op));
    }
    return out.empty() ? nullptr : out.front();
}

void DemoSimulation::send(int rank, int tag, bool backward, const TensorP& t) {
    rec(rank, commScope(backward, true, tag), "Send", {t}, {}, StreamKind::Comm);
    m_inFlight[{tag, backward}] = {m_now[std::size_t(rank)], t};
}

TensorP DemoSimulation::receive(int rank, int tag, bool backward) {
    const auto it = m_inFlight.find({tag, backward});
    if (it == m_inFlight.end()) throw std::logic_error("demo: receive before send");
    auto& now = m_now[std::size_t(rank)];
    now = std::max(now, it->second.first + kHcclLatencyUs);  // causality: wait for the peer's Send
    return rec(rank, commScope(backward, false, tag), "Receive", {}, {it->second.second}, StreamKind::Comm);
}

TensorP DemoSimulation::layerForward(int rank, int l, const TensorP& x) {
    Layer& L = m_layers[std::size_t(rank)][std::size_t(l)];
    const std::string s = layerScope(rank, l);
    auto [n, rstd] = m_k.rmsNorm(x, L.gamma, kNormEps);
    rec(rank, s + "/ffn_norm-RMSNorm", "RmsNorm", {x, L.gamma}, {n, rstd});
    auto h = rec(rank, s + "/feed_forward-FeedForward/w1-Linear", "MatMul", {n, L.w1},
                 {m_k.matmul(n, L.w1, false, false, DType::Float16)});
    auto a = rec(rank, s + "/feed_forward-FeedForward/act-FastGelu", "FastGeLU", {h}, {m_k.fastGelu(h)});
    auto o = rec(rank, s + "/feed_forward-FeedForward/w2-Linear", "MatMul", {a, L.w2},
                 {m_k.matmul(a, L.w2, false, false, DType::Float16)});
    L.c = {x, n, rstd, h, a};
    auto add = [](float p, float q) { return p + q; };
    return rec(rank, s, "Add", {x, o}, {m_k.binary(x, o, DType::Float16, add)});
}

TensorP DemoSimulation::layerBackward(int rank, int l, const TensorP& dOut) {
    Layer& L = m_layers[std::size_t(rank)][std::size_t(l)];
    const std::string s = layerScope(rank, l);
    const std::string w2 = gradScope(s + "/feed_forward-FeedForward/w2-Linear", "MatMul");
    const std::string w1 = gradScope(s + "/feed_forward-FeedForward/w1-Linear", "MatMul");
    auto da = rec(rank, w2, "MatMul", {dOut, L.w2}, {m_k.matmul(dOut, L.w2, false, true, DType::Float16)});
    L.dw2 = rec(rank, w2, "MatMul", {L.c.a, dOut}, {m_k.matmul(L.c.a, dOut, true, false, DType::Float16)});
    auto dh = rec(rank, gradScope(s + "/feed_forward-FeedForward/act-FastGelu", "FastGeLU"), "FastGeLUGrad",
                  {da, L.c.h}, {m_k.fastGeluGrad(da, L.c.h)});
    auto dn = rec(rank, w1, "MatMul", {dh, L.w1}, {m_k.matmul(dh, L.w1, false, true, DType::Float16)});
    L.dw1 = rec(rank, w1, "MatMul", {L.c.n, dh}, {m_k.matmul(L.c.n, dh, true, false, DType::Float16)});
    auto [dx, dgamma] = m_k.rmsNormGrad(dn, L.c.x, L.c.rstd, L.gamma);
    rec(rank, gradScope(s + "/ffn_norm-RMSNorm", "RmsNorm"), "RmsNormGrad", {dn, L.c.x, L.c.rstd, L.gamma},
        {dx, dgamma});
    auto add = [](float p, float q) { return p + q; };
    return rec(rank, "Gradients/" + s, "AddN", {dOut, dx}, {m_k.binary(dOut, dx, DType::Float16, add)});
}

TensorP DemoSimulation::forwardStage(int rank) {
    TensorP x;
    if (rank == 0) {
        auto ids = m_k.make(DType::Int32, {kBatch}, m_ids);
        x = rec(rank, kModel + "/tok_embeddings-VocabEmbedding", "Gather", {m_emb, ids}, {m_k.gather(m_emb, ids)});
        if (m_iter == m_o.decoyIteration) {
            trace.decoyFullName = m_graph[0][m_pos[0] - 1].fullName;
            trace.decoyRank = 0;
            for (float v : x->v) trace.decoyMaxAbs = std::max(trace.decoyMaxAbs, std::fabs(v));
        }
    } else {
        x = receive(rank, rank - 1, false);
    }
    for (int l = 0; l < kLayersPerStage; ++l) x = layerForward(rank, l, x);
    if (rank + 1 < kRanks) send(rank, rank, false, x);
    return x;
}

TensorP DemoSimulation::sqrtGradChain(const std::string& head, const TensorP& y, const TensorP& dy, const TensorP& w) {
    const int r = kRanks - 1;
    const DType p = m_sqrtPrec;
    const bool fix = p != DType::Float16;
    auto mul = [](float a, float b) { return a * b; };
    // The fix runs SqrtGrad (and the square-grad Muls it feeds) in bf16/fp32 with Casts around.
    TensorP yc = y, dyc = dy, wc = w;
    if (fix) {
        yc = rec(r, gradScope(head, "Sqrt"), "Cast", {y}, {m_k.cast(y, p)});
        dyc = rec(r, gradScope(head, "Sqrt"), "Cast", {dy}, {m_k.cast(dy, p)});
    }
    probe.culpritDy.push_back(dy->v[kCulpritToken]);
    probe.culpritY.push_back(y->v[kCulpritToken]);
    auto dx = rec(r, gradScope(head, "Sqrt"), "SqrtGrad", {yc, dyc},
                  {m_k.binary(yc, dyc, p, [](float yy, float g) { return g * 0.5f / yy; })});
    auto bd = rec(r, gradScope(head, "ReduceSum"), "BroadcastTo", {dx}, {m_k.broadcastTo(dx, w->shape)});
    if (fix) wc = rec(r, gradScope(head, "Square"), "Cast", {w}, {m_k.cast(w, p)});
    auto m1 = rec(r, gradScope(head, "Square"), "Mul", {bd, wc}, {m_k.binary(bd, wc, p, mul)});
    auto two = scalar(p, 2.0f);
    auto m2 = rec(r, gradScope(head, "Square"), "Mul", {m1, two}, {m_k.binary(m1, two, p, mul)});
    if (fix) m2 = rec(r, gradScope(head, "Square"), "Cast", {m2}, {m_k.cast(m2, DType::Float16)});
    return m2;
}

TensorP DemoSimulation::headForwardBackward(const TensorP& x) {
    const int r = kRanks - 1;
    const DType f16 = DType::Float16, f32 = DType::Float32;
    auto mul = [](float a, float b) { return a * b; };
    auto [h, rstd] = m_k.rmsNorm(x, m_normF, kNormEps);
    rec(r, kModel + "/norm_out-RMSNorm", "RmsNorm", {x, m_normF}, {h, rstd});
    m_finalNorm = {x, h, rstd, nullptr, nullptr};
    // NormHead: W / sqrt(sum(W^2) + eps), then logits = h @ Wn^T.
    auto sq = rec(r, kHead, "Square", {m_head}, {m_k.binary(m_head, m_head, f16, mul)});
    auto ss = rec(r, kHead, "ReduceSum", {sq}, {m_k.reduceSumLast(sq)});
    auto eps = scalar(f16, kHeadEps);
    auto se = rec(r, kHead, "Add", {ss, eps}, {m_k.binary(ss, eps, f16, [](float a, float b) { return a + b; })});
    auto y = rec(r, kHead, "Sqrt", {se}, {m_k.unary(se, f16, [](float a) { return std::sqrt(a); })});
    auto wn =
        rec(r, kHead, "RealDiv", {m_head, y}, {m_k.binary(m_head, y, f16, [](float a, float b) { return a / b; })});
    auto logits = rec(r, kHead, "MatMul", {h, wn}, {m_k.matmul(h, wn, false, true, f16)});
    auto lf = rec(r, kLoss, "Cast", {logits}, {m_k.cast(logits, f32)});
    auto lab = m_k.make(DType::Int32, {kBatch}, m_labels);
    auto on = scalar(f32, 1.0f), off = scalar(f32, 0.0f);
    auto onehot = rec(r, kLoss, "OneHot", {lab, on, off}, {m_k.oneHot(lab, kVocab, on, off)});
    auto [loss, back] = m_k.softmaxCrossEntropy(lf, onehot);
    rec(r, kLoss, "SoftmaxCrossEntropyWithLogits", {lf, onehot}, {loss, back});
    m_lossMean = rec(r, kLoss, "ReduceMean", {loss}, {m_k.reduceMeanAll(loss)});
    // Backward: the loss-scale sens reaches the logits as sens/B.
    auto sens = scalar(f32, kLossScale / float(kBatch));
    auto g = rec(r, gradScope(kLoss, "SoftmaxCrossEntropyWithLogits"), "Mul", {back, sens},
                 {m_k.binary(back, sens, f32, mul)});
    auto dlog = rec(r, gradScope(kLoss, "Cast"), "Cast", {g}, {m_k.cast(g, f16)});
    auto dwn = rec(r, gradScope(kHead, "MatMul"), "MatMul", {dlog, h}, {m_k.matmul(dlog, h, true, false, f16)});
    auto dh = rec(r, gradScope(kHead, "MatMul"), "MatMul", {dlog, wn}, {m_k.matmul(dlog, wn, false, false, f16)});
    auto bcx = rec(r, gradScope(kHead, "RealDiv"), "RealDiv", {dwn, y},
                   {m_k.binary(dwn, y, f16, [](float a, float b) { return a / b; })});
    auto t = rec(r, gradScope(kHead, "RealDiv"), "Mul", {bcx, wn}, {m_k.binary(bcx, wn, f16, mul)});
    auto nt = rec(r, gradScope(kHead, "RealDiv"), "Neg", {t}, {m_k.unary(t, f16, [](float a) { return -a; })});
    auto dy = rec(r, gradScope(kHead, "RealDiv"), "ReduceSum", {nt}, {m_k.reduceSumLast(nt)});
    auto sqg = sqrtGradChain(kHead, y, dy, m_head);
    m_headGrad = rec(r, "Gradients/" + kHead, "AddN", {bcx, sqg},
                     {m_k.binary(bcx, sqg, f16, [](float a, float b) { return a + b; })});
    auto [dx, dgamma] = m_k.rmsNormGrad(dh, x, rstd, m_normF);
    return rec(r, gradScope(kModel + "/norm_out-RMSNorm", "RmsNorm"), "RmsNormGrad", {dh, x, rstd, m_normF},
               {dx, dgamma});
}

void DemoSimulation::update(int rank, TensorP& w, TensorP& acc, const TensorP& grad, bool decay) {
    auto mul = [](float a, float b) { return a * b; };
    auto inv = scalar(DType::Float16, 1.0f / kLossScale);
    auto g = rec(rank, kOptim, "Mul", {grad, inv}, {m_k.binary(grad, inv, DType::Float16, mul)});
    TensorP var = w;
    if (decay) {
        auto d = scalar(DType::Float16, m_cal.headDecay);
        var = rec(rank, kOptim, "Mul", {w, d}, {m_k.binary(w, d, DType::Float16, mul)});
    }
    auto lr = scalar(DType::Float32, decay ? kHeadLr : kLr), mom = scalar(DType::Float32, kMomentum);
    auto [nw, nacc] = m_k.applyMomentum(var, acc, lr, g, mom);
    rec(rank, kOptim, "ApplyMomentum", {var, acc, lr, g, mom}, {nw});
    w = nw;
    acc = nacc;
}

void DemoSimulation::optimizer(int rank) {
    for (int l = 0; l < kLayersPerStage; ++l) {
        Layer& L = m_layers[std::size_t(rank)][std::size_t(l)];
        update(rank, L.w1, L.acc1, L.dw1, false);
        update(rank, L.w2, L.acc2, L.dw2, false);
    }
    if (rank == kRanks - 1) update(rank, m_head, m_headAcc, m_headGrad, true);
}

void DemoSimulation::run(int iterations) {
    trace.iterations = iterations;
    for (m_iter = 0; m_iter < iterations; ++m_iter) {
        Rng rng{std::uint64_t(7919 * (m_iter + 1))};
        m_ids.assign(kBatch, 0);
        m_labels.assign(kBatch, float(kCulpritToken));
        for (int b = 0; b < kBatch; ++b) {
            int t;
            do t = int(rng.next() % kVocab);
            while (t == kCulpritToken || t == kDecoyToken);
            m_ids[std::size_t(b)] = float(t);
        }
        m_labels[kBatch - 1] = float(m_ids[0]);  // one label differs from the frequent token
        if (m_iter == m_o.decoyIteration) m_ids[1] = float(kDecoyToken);
        for (int r = 0; r < kRanks; ++r) {
            m_now[std::size_t(r)] = m_iter * kIterationPeriodUs + 13 * std::int64_t(r);
            m_pos[std::size_t(r)] = 0;
        }
        TensorP x;
        for (int r = 0; r < kRanks; ++r) x = forwardStage(r);
        TensorP d = headForwardBackward(x);
        for (int r = kRanks - 1; r >= 0; --r) {
            if (r < kRanks - 1) d = receive(r, r, true);
            for (int l = kLayersPerStage - 1; l >= 0; --l) d = layerBackward(r, l, d);
            if (r > 0) send(r, r - 1, true, d);
            optimizer(r);
        }
        trace.lossPerIteration.push_back(m_lossMean->v[0]);
    }
}

}  // namespace dl::demo

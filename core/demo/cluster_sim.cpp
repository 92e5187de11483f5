#include "core/demo/cluster_sim.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/demo/demo_random.h"

namespace dl::demo {

namespace {

constexpr int kBatch = 4, kHidden = 8, kFfn = 16, kVocab = 16;
constexpr int kCulpritToken = 3;   // the frequent label whose head row's norm collapses (lane 0's shard)
constexpr int kOutlierToken = 12;  // fed in ForwardResidual's origin iteration
constexpr int kMassiveDim = 5, kMassiveFfn = 9;
constexpr float kOutlierValue = 30000.f;
constexpr float kLossScale = 1024.f, kLr = 0.01f, kHeadLr = 1e-5f, kMomentum = 0.9f, kHeadDecay = 0.6f;
constexpr float kNormEps = 1e-6f, kHeadEps = 1e-5f, kClipNorm = 1.0f;
constexpr std::int64_t kSendRecvLatencyUs = 37, kCollectiveLatencyUs = 25, kIterationGapUs = 200;
// Row-major index row * cols + col, computed in size_t (not in int, then widened).
constexpr std::size_t flat(int row, int cols, int col) {
    return std::size_t(row) * std::size_t(cols) + std::size_t(col);
}

const std::string kBase = "Default/network-PipelineCell/_backbone-LlamaForCausalLM";
const std::string kModel = kBase + "/model-LlamaModel";
const std::string kHead = kBase + "/lm_head-NormHead";
const std::string kLoss = kBase + "/loss-CrossEntropyLoss";
const std::string kOptim = "Default/optimizer-Momentum";
const std::string kClip = "Default/optimizer-Momentum/clip_grad-ClipByGlobalNorm";

std::string layerScope(int stage) { return kModel + "/layers-CellList/" + std::to_string(stage) + "-LlamaDecodeLayer"; }
std::string gradScope(const std::string& scope, const std::string& fwdType) {
    return "Gradients/" + scope + "/grad" + fwdType;
}
// Forward Send/Receive carry activations s->s+1 under `_pipeline_{send,receive}_sr_tag_s`; their
// gradients use the same sr_tag, the bprop of a Send being a Receive and vice versa.
std::string commScope(bool backward, bool isSend, int tag) {
    const std::string cell =
        std::string(isSend != backward ? "_pipeline_send" : "_pipeline_receive") + "_sr_tag_" + std::to_string(tag);
    const std::string fwd = "Default/network-PipelineCell/" + cell;
    return backward ? "Gradients/" + fwd + (isSend ? "/gradReceive" : "/gradSend") : fwd;
}

float add(float a, float b) { return a + b; }
float mul(float a, float b) { return a * b; }
float divide(float a, float b) { return a / b; }

}  // namespace

bool isBad(const DemoTensor& t) {
    return std::any_of(t.v.begin(), t.v.end(), [](float x) { return !std::isfinite(x); });
}

ClusterSim::ClusterSim(const ClusterSpec& spec) : m_s(spec), m_k(OverflowMode::InfNan) {
    const int ranks = m_s.pipelineStages * m_s.tensorParallel;
    if (m_s.pipelineStages < 2 || m_s.tensorParallel < 1 || kVocab % m_s.tensorParallel || kFfn % m_s.tensorParallel)
        throw std::logic_error("cluster sim: unsupported PP x TP");
    trace.pipelineStages = m_s.pipelineStages;
    trace.tensorParallel = m_s.tensorParallel;
    trace.ranks = ranks;
    m_graph.resize(std::size_t(m_s.pipelineStages));
    for (int st = 0; st < m_s.pipelineStages; ++st) m_opCounter.push_back(std::uint32_t(17 + 13 * st));
    m_now.assign(std::size_t(ranks), 0);
    m_pos.assign(std::size_t(ranks), 0);
    m_lanes.resize(std::size_t(ranks));
    m_stageOut.resize(std::size_t(ranks));
    m_pendingGrad.resize(std::size_t(ranks));
    initParams();
}

TensorP ClusterSim::scalar(DType t, float v) { return m_k.make(t, {}, {m_k.round(t, v)}); }

void ClusterSim::initParams() {
    Rng rng{20250611};
    auto randn = [&](const std::vector<std::int64_t>& shape, float scale) {
        std::int64_t n = 1;
        for (auto d : shape) n *= d;
        std::vector<float> v(static_cast<std::size_t>(n));
        for (auto& x : v) x = rng.normal() * scale;
        return v;
    };
    auto f16 = [&](std::vector<std::int64_t> shape, std::vector<float> v) {
        for (auto& x : v) x = m_k.round(DType::Float16, x);
        return m_k.make(DType::Float16, std::move(shape), std::move(v));
    };
    // Embeddings share a common direction (so the last stage's hidden states agree on a mean
    // direction the culprit head row points along); the massive dimension is quiet except for
    // the outlier token.
    std::vector<float> dir(kHidden);
    for (auto& x : dir) x = rng.normal();
    dir[kMassiveDim] = 0;
    std::vector<float> e(std::size_t(kVocab * kHidden));
    for (int t = 0; t < kVocab; ++t)
        for (int j = 0; j < kHidden; ++j)
            e[flat(t, kHidden, j)] =
                j == kMassiveDim ? 0.05f * rng.normal() : dir[std::size_t(j)] + 0.5f * rng.normal();
    e[flat(kOutlierToken, kHidden, kMassiveDim)] = kOutlierValue;
    m_emb = f16({kVocab, kHidden}, std::move(e));
    m_normF = f16({kHidden}, std::vector<float>(kHidden, 1.0f));

    const int tp = m_s.tensorParallel, fl = kFfn / tp, vl = kVocab / tp;
    const bool fwdOrigin = m_s.origin == ClusterOrigin::ForwardResidual;
    for (int st = 0; st < m_s.pipelineStages; ++st)
        for (int ln = 0; ln < tp; ++ln) {
            Lane& L = m_lanes[std::size_t(rankOf(st, ln))];
            auto w1 = randn({kHidden, fl}, 1.0f / std::sqrt(float(kHidden)));
            auto w2 = randn({fl, kHidden}, 0.5f / std::sqrt(float(kFfn)));
            for (int j = 0; j < fl; ++j) {
                const bool massiveCol = ln * fl + j == kMassiveFfn;
                // Only the outlier's dimension is read and written strongly, and only by stage 1
                // in ForwardResidual: its residual Add then passes 65504.
                float& in = w1[flat(kMassiveDim, fl, j)];
                in = massiveCol && fwdOrigin && st == 1 ? 1.0f : in * 0.001f;
                for (int k = 0; k < kHidden; ++k) {
                    float& o = w2[flat(j, kHidden, k)];
                    if (k == kMassiveDim)
                        o = massiveCol && fwdOrigin && st == 1 ? 1.25f : o * 0.01f;
                    else if (massiveCol)
                        o *= 0.001f;
                }
            }
            L.w1 = f16({kHidden, fl}, std::move(w1));
            L.w2 = f16({fl, kHidden}, std::move(w2));
            L.acc1 = f16({kHidden, fl}, std::vector<float>(std::size_t(kHidden * fl), 0.f));
            L.acc2 = f16({fl, kHidden}, std::vector<float>(std::size_t(fl * kHidden), 0.f));
            if (st != m_s.pipelineStages - 1) continue;
            auto head = randn({vl, kHidden}, 1.0f / std::sqrt(float(kHidden)));
            if (kCulpritToken / vl == ln) {
                // The culprit row points mostly along the hidden states' mean direction, with a
                // calibrated norm: weight decay shrinks it until SqrtGrad's dy*0.5/y passes 65504.
                float dn = 0, rn = 0;
                for (float x : dir) dn += x * x;
                std::vector<float> row(kHidden);
                for (int j = 0; j < kHidden; ++j) {
                    row[std::size_t(j)] =
                        0.8f * dir[std::size_t(j)] / std::sqrt(dn) + 0.2f * head[flat(kCulpritToken % vl, kHidden, j)];
                    rn += row[std::size_t(j)] * row[std::size_t(j)];
                }
                for (int j = 0; j < kHidden; ++j)
                    head[flat(kCulpritToken % vl, kHidden, j)] = row[std::size_t(j)] * m_s.headRowScale / std::sqrt(rn);
            }
            L.head = f16({vl, kHidden}, std::move(head));
            L.headAcc = f16({vl, kHidden}, std::vector<float>(std::size_t(vl * kHidden), 0.f));
        }
    m_k.takeOverflow();  // initialisation is not an operator
}

int ClusterSim::place(int rank, const std::string& scope, const std::string& type) {
    const int stage = rank / m_s.tensorParallel;
    auto& g = m_graph[std::size_t(stage)];
    const std::uint32_t pos = m_pos[std::size_t(rank)]++;
    if (pos == g.size()) {  // the first lane to get here in iteration 0 compiles the stage graph
        m_opCounter[std::size_t(stage)] += 1 + std::uint32_t((pos * 7 + std::uint32_t(stage)) % 4);
        g.emplace_back(type, scope + "/" + type + "-op" + std::to_string(m_opCounter[std::size_t(stage)]));
    } else if (pos > g.size() || g[pos].first != type || g[pos].second.rfind(scope + "/" + type + "-op", 0) != 0) {
        throw std::logic_error("cluster sim: stage graph differs between ranks or iterations at " + scope + "/" + type);
    }
    return int(pos);
}

void ClusterSim::link(ClusterOp& op, const std::vector<TensorP>& candidates) {
    for (const auto& t : op.inputs) op.badInput = op.badInput || isBad(*t);
    for (const auto& t : op.outputs) op.badOutput = op.badOutput || isBad(*t);
    for (const auto& t : candidates) {
        if (!isBad(*t)) continue;
        const auto it = m_producer.find(t.get());
        if (it == m_producer.end()) continue;
        if (std::find(op.badFrom.begin(), op.badFrom.end(), it->second) == op.badFrom.end())
            op.badFrom.push_back(it->second);
    }
    // The cause is the bad value that existed first (earliest end on the common clock).
    for (int from : op.badFrom) {
        const auto& f = trace.ops[std::size_t(from)];
        if (op.cause < 0 || f.trueEndUs < trace.ops[std::size_t(op.cause)].trueEndUs ||
            (f.trueEndUs == trace.ops[std::size_t(op.cause)].trueEndUs && from < op.cause))
            op.cause = from;
    }
}

int ClusterSim::rec(int rank, const std::string& scope, const std::string& type, std::vector<TensorP> in,
                    std::vector<TensorP> out, ClusterOpKind kind, const std::vector<TensorP>& alsoProduced) {
    m_k.takeOverflow();  // badness is read from the values themselves
    const bool comm =
        kind == ClusterOpKind::Send || kind == ClusterOpKind::Receive || kind == ClusterOpKind::Collective;
    ClusterOp op;
    op.rank = rank;
    op.stage = rank / m_s.tensorParallel;
    op.lane = rank % m_s.tensorParallel;
    op.iteration = m_iter;
    op.type = type;
    op.kind = kind;
    op.stream = comm ? StreamKind::Comm : StreamKind::Compute;
    op.position = std::uint32_t(place(rank, scope, type));
    op.fullName = m_graph[std::size_t(op.stage)][op.position].second;
    op.backward = scope.rfind("Gradients/", 0) == 0;
    std::uint64_t elems = 0;
    for (const auto& t : in) elems += t->size();
    for (const auto& t : out) elems += t->size();
    auto& now = m_now[std::size_t(rank)];
    op.trueStartUs = now;
    op.trueEndUs = now += 6 + std::int64_t(elems / 32);
    op.inputs = std::move(in);
    op.outputs = std::move(out);
    link(op, op.inputs);
    trace.ops.push_back(std::move(op));
    const int idx = int(trace.ops.size() - 1);
    for (const auto& t : trace.ops.back().outputs) m_producer[t.get()] = idx;
    for (const auto& t : alsoProduced) m_producer[t.get()] = idx;
    return idx;
}

void ClusterSim::send(int rank, int tag, bool backward, const TensorP& t) {
    const int dest = rank + (backward ? -1 : 1) * m_s.tensorParallel;
    const int op = rec(rank, commScope(backward, true, tag), "Send", {t}, {}, ClusterOpKind::Send);
    trace.ops[std::size_t(op)].tag = tag;
    trace.ops[std::size_t(op)].peer = dest;
    m_inFlight[{dest, tag, backward}] = op;
}

TensorP ClusterSim::receive(int rank, int tag, bool backward) {
    const auto it = m_inFlight.find({rank, tag, backward});
    if (it == m_inFlight.end()) throw std::logic_error("cluster sim: receive before send");
    const int sendOp = it->second;
    m_inFlight.erase(it);
    // Copied out before rec(): recording the Receive may reallocate trace.ops.
    const ClusterOp& s = trace.ops[std::size_t(sendOp)];
    auto value = std::make_shared<DemoTensor>(*s.inputs.at(0));     // the receiver's own buffer
    const std::int64_t ready = s.trueStartUs + kSendRecvLatencyUs;  // data there no earlier
    const int sender = s.rank;
    const int op = rec(rank, commScope(backward, false, tag), "Receive", {}, {value}, ClusterOpKind::Receive);
    ClusterOp& r = trace.ops[std::size_t(op)];
    if (r.trueEndUs < ready) m_now[std::size_t(rank)] = r.trueEndUs = ready;
    r.tag = tag;
    r.peer = sender;
    if (r.badOutput) {
        r.badFrom = {sendOp};
        r.cause = sendOp;
    }
    return value;
}

std::vector<TensorP> ClusterSim::allReduce(const std::vector<int>& ranks, const std::vector<TensorP>& in,
                                           const std::string& scope) {
    // Sum in fp32 in member order, one rounding to the tensors' dtype (HCCL reduces on the device).
    std::vector<float> sum(in.at(0)->size(), 0.f);
    for (const auto& t : in)
        for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += t->v[i];
    for (auto& x : sum) x = m_k.round(in[0]->dtype, x);
    std::int64_t end = 0;
    std::vector<TensorP> outs;
    std::vector<int> members;
    const auto instance = int(trace.collectives.size());
    for (std::size_t m = 0; m < ranks.size(); ++m) {
        auto o = m_k.make(in[0]->dtype, in[0]->shape, sum);
        const int op = rec(ranks[m], scope, "AllReduce", {in[m]}, {o}, ClusterOpKind::Collective);
        end = std::max(end, trace.ops[std::size_t(op)].trueEndUs);
        members.push_back(op);
        outs.push_back(o);
    }
    // Every member ends when the last one arrived (plus the ring's latency); every member's result
    // depends on every member's contribution.
    end += kCollectiveLatencyUs;
    for (int op : members) {
        ClusterOp& c = trace.ops[std::size_t(op)];
        c.trueEndUs = end;
        m_now[std::size_t(c.rank)] = end;
        c.collective = instance;
        c.badFrom.clear();
        c.cause = -1;
        link(c, in);
    }
    trace.collectives.push_back(members);
    return outs;
}

void ClusterSim::forwardStage(int st) {
    const int tp = m_s.tensorParallel;
    const std::string s = layerScope(st);
    std::vector<TensorP> partial(static_cast<std::size_t>(tp));
    std::vector<int> ranks;
    for (int ln = 0; ln < tp; ++ln) {
        const int r = rankOf(st, ln);
        ranks.push_back(r);
        Lane& L = m_lanes[std::size_t(r)];
        if (st == 0) {
            auto ids = m_k.make(DType::Int32, {kBatch}, m_ids);
            L.x = out(
                rec(r, kModel + "/tok_embeddings-VocabEmbedding", "Gather", {m_emb, ids}, {m_k.gather(m_emb, ids)}));
        } else {
            L.x = receive(r, st - 1, false);
        }
        L.h = out(rec(r, s + "/feed_forward-FeedForward/w1-Linear", "MatMul", {L.x, L.w1},
                      {m_k.matmul(L.x, L.w1, false, false, DType::Float16)}));
        L.a = out(rec(r, s + "/feed_forward-FeedForward/act-FastGelu", "FastGeLU", {L.h}, {m_k.fastGelu(L.h)}));
        partial[std::size_t(ln)] = out(rec(r, s + "/feed_forward-FeedForward/w2-Linear", "MatMul", {L.a, L.w2},
                                           {m_k.matmul(L.a, L.w2, false, false, DType::Float16)}));
    }
    // Row-parallel w2: the lanes' partial sums meet in the TP group's AllReduce.
    const auto o = tp > 1 ? allReduce(ranks, partial, s + "/feed_forward-FeedForward/w2-Linear") : partial;
    for (int ln = 0; ln < tp; ++ln) {
        const int r = rankOf(st, ln);
        Lane& L = m_lanes[std::size_t(r)];
        const auto& oo = o[std::size_t(ln)];
        m_stageOut[std::size_t(r)] = out(rec(r, s, "Add", {L.x, oo}, {m_k.binary(L.x, oo, DType::Float16, add)}));
        if (st + 1 < m_s.pipelineStages) send(r, st, false, m_stageOut[std::size_t(r)]);
    }
}

void ClusterSim::headForward(int st) {
    const int tp = m_s.tensorParallel, vl = kVocab / tp;
    const DType f16 = DType::Float16, f32 = DType::Float32;
    std::vector<TensorP> sums(static_cast<std::size_t>(tp));
    std::vector<int> ranks;
    for (int ln = 0; ln < tp; ++ln) {
        const int r = rankOf(st, ln);
        ranks.push_back(r);
        Lane& L = m_lanes[std::size_t(r)];
        L.hx = m_stageOut[std::size_t(r)];
        auto [n, rstd] = m_k.rmsNorm(L.hx, m_normF, kNormEps);
        rec(r, kModel + "/norm_out-RMSNorm", "RmsNorm", {L.hx, m_normF}, {n, rstd});
        L.hn = n;
        L.hrstd = rstd;
        // NormHead: each row of this lane's vocabulary shard divided by its norm.
        auto sq = out(rec(r, kHead, "Square", {L.head}, {m_k.binary(L.head, L.head, f16, mul)}));
        auto ss = out(rec(r, kHead, "ReduceSum", {sq}, {m_k.reduceSumLast(sq)}));
        auto eps = scalar(f16, kHeadEps);
        auto se = out(rec(r, kHead, "Add", {ss, eps}, {m_k.binary(ss, eps, f16, add)}));
        L.y = out(rec(r, kHead, "Sqrt", {se}, {m_k.unary(se, f16, [](float a) { return std::sqrt(a); })}));
        L.wn = out(rec(r, kHead, "RealDiv", {L.head, L.y}, {m_k.binary(L.head, L.y, f16, divide)}));
        auto logits = out(rec(r, kHead, "MatMul", {n, L.wn}, {m_k.matmul(n, L.wn, false, true, f16)}));
        auto lf = out(rec(r, kLoss, "Cast", {logits}, {m_k.cast(logits, f32)}));
        L.e = out(rec(r, kLoss, "Exp", {lf}, {m_k.unary(lf, f32, [](float a) { return std::exp(a); })}));
        sums[std::size_t(ln)] = out(rec(r, kLoss, "ReduceSum", {L.e}, {m_k.reduceSumLast(L.e)}));
    }
    // Vocabulary-parallel softmax: the sum of exponentials is reduced over the TP group.
    const auto total = tp > 1 ? allReduce(ranks, sums, kLoss) : sums;
    float loss = 0;
    for (int ln = 0; ln < tp; ++ln) {
        const int r = rankOf(st, ln);
        Lane& L = m_lanes[std::size_t(r)];
        L.p = out(rec(r, kLoss, "RealDiv", {L.e, total[std::size_t(ln)]},
                      {m_k.binary(L.e, total[std::size_t(ln)], f32, divide)}));
        std::vector<float> oh(std::size_t(kBatch * vl), 0.f);
        for (int b = 0; b < kBatch; ++b) {
            const int lab = int(m_labels[std::size_t(b)]) - ln * vl;
            if (lab >= 0 && lab < vl) oh[flat(b, vl, lab)] = 1.f;
        }
        auto lab = m_k.make(DType::Int32, {kBatch}, m_labels);
        auto on = scalar(f32, 1.f), off = scalar(f32, 0.f);
        L.onehot = out(rec(r, kLoss, "OneHot", {lab, on, off}, {m_k.make(f32, {kBatch, vl}, oh)}));
        auto lp = out(rec(r, kLoss, "Log", {L.p}, {m_k.unary(L.p, f32, [](float a) { return std::log(a); })}));
        auto t = out(rec(r, kLoss, "Mul", {lp, L.onehot}, {m_k.binary(lp, L.onehot, f32, mul)}));
        auto rs = out(rec(r, kLoss, "ReduceSum", {t}, {m_k.reduceSumLast(t)}));
        auto nl = out(rec(r, kLoss, "Neg", {rs}, {m_k.unary(rs, f32, [](float a) { return -a; })}));
        auto lm = out(rec(r, kLoss, "ReduceMean", {nl}, {m_k.reduceMeanAll(nl)}));
        loss += lm->v[0];
    }
    trace.lossPerIteration.push_back(loss);
}

void ClusterSim::headBackward(int st) {
    const int tp = m_s.tensorParallel, vl = kVocab / tp;
    const DType f16 = DType::Float16, f32 = DType::Float32;
    std::vector<TensorP> dhPartial(static_cast<std::size_t>(tp));
    std::vector<int> ranks;
    for (int ln = 0; ln < tp; ++ln) {
        const int r = rankOf(st, ln);
        ranks.push_back(r);
        Lane& L = m_lanes[std::size_t(r)];
        auto g = out(rec(r, gradScope(kLoss, "Log"), "Sub", {L.p, L.onehot},
                         {m_k.binary(L.p, L.onehot, f32, [](float a, float b) { return a - b; })}));
        auto sens = scalar(f32, kLossScale / float(kBatch));
        auto gs = out(rec(r, gradScope(kLoss, "Log"), "Mul", {g, sens}, {m_k.binary(g, sens, f32, mul)}));
        auto dlog = out(rec(r, gradScope(kLoss, "Cast"), "Cast", {gs}, {m_k.cast(gs, f16)}));
        auto dwn =
            out(rec(r, gradScope(kHead, "MatMul"), "MatMul", {dlog, L.hn}, {m_k.matmul(dlog, L.hn, true, false, f16)}));
        dhPartial[std::size_t(ln)] = out(
            rec(r, gradScope(kHead, "MatMul"), "MatMul", {dlog, L.wn}, {m_k.matmul(dlog, L.wn, false, false, f16)}));
        auto bcx = out(rec(r, gradScope(kHead, "RealDiv"), "RealDiv", {dwn, L.y}, {m_k.binary(dwn, L.y, f16, divide)}));
        auto t = out(rec(r, gradScope(kHead, "RealDiv"), "Mul", {bcx, L.wn}, {m_k.binary(bcx, L.wn, f16, mul)}));
        auto nt = out(rec(r, gradScope(kHead, "RealDiv"), "Neg", {t}, {m_k.unary(t, f16, [](float a) { return -a; })}));
        L.dy = out(rec(r, gradScope(kHead, "RealDiv"), "ReduceSum", {nt}, {m_k.reduceSumLast(nt)}));
        if (kCulpritToken / vl == ln) {
            const auto row = std::size_t(kCulpritToken % vl);
            sqrtGradProbe.push_back(std::fabs(L.dy->v[row] * 0.5f / L.y->v[row]));
        }
        auto dx = out(rec(r, gradScope(kHead, "Sqrt"), "SqrtGrad", {L.y, L.dy},
                          {m_k.binary(L.y, L.dy, f16, [](float yy, float gg) { return gg * 0.5f / yy; })}));
        auto bd = out(rec(r, gradScope(kHead, "ReduceSum"), "BroadcastTo", {dx}, {m_k.broadcastTo(dx, L.head->shape)}));
        auto m1 = out(rec(r, gradScope(kHead, "Square"), "Mul", {bd, L.head}, {m_k.binary(bd, L.head, f16, mul)}));
        auto two = scalar(f16, 2.f);
        auto m2 = out(rec(r, gradScope(kHead, "Square"), "Mul", {m1, two}, {m_k.binary(m1, two, f16, mul)}));
        L.headGrad = out(rec(r, "Gradients/" + kHead, "AddN", {bcx, m2}, {m_k.binary(bcx, m2, f16, add)}));
    }
    const auto dh = tp > 1 ? allReduce(ranks, dhPartial, gradScope(kHead, "MatMul")) : dhPartial;
    for (int ln = 0; ln < tp; ++ln) {
        const int r = rankOf(st, ln);
        Lane& L = m_lanes[std::size_t(r)];
        auto [dx, dgamma] = m_k.rmsNormGrad(dh[std::size_t(ln)], L.hx, L.hrstd, m_normF);
        rec(r, gradScope(kModel + "/norm_out-RMSNorm", "RmsNorm"), "RmsNormGrad",
            {dh[std::size_t(ln)], L.hx, L.hrstd, m_normF}, {dx, dgamma});
        m_stageOut[std::size_t(r)] = dx;
    }
}

void ClusterSim::backwardStage(int st) {
    const int tp = m_s.tensorParallel;
    const std::string s = layerScope(st);
    const std::string w2 = gradScope(s + "/feed_forward-FeedForward/w2-Linear", "MatMul");
    const std::string w1 = gradScope(s + "/feed_forward-FeedForward/w1-Linear", "MatMul");
    std::vector<TensorP> dn(static_cast<std::size_t>(tp)), dOut(static_cast<std::size_t>(tp));
    std::vector<int> ranks;
    for (int ln = 0; ln < tp; ++ln) {
        const int r = rankOf(st, ln);
        ranks.push_back(r);
        Lane& L = m_lanes[std::size_t(r)];
        auto& d = dOut[std::size_t(ln)];
        d = st == m_s.pipelineStages - 1 ? m_stageOut[std::size_t(r)] : receive(r, st, true);
        auto da = out(rec(r, w2, "MatMul", {d, L.w2}, {m_k.matmul(d, L.w2, false, true, DType::Float16)}));
        L.dw2 = out(rec(r, w2, "MatMul", {L.a, d}, {m_k.matmul(L.a, d, true, false, DType::Float16)}));
        auto dh = out(rec(r, gradScope(s + "/feed_forward-FeedForward/act-FastGelu", "FastGeLU"), "FastGeLUGrad",
                          {da, L.h}, {m_k.fastGeluGrad(da, L.h)}));
        dn[std::size_t(ln)] =
            out(rec(r, w1, "MatMul", {dh, L.w1}, {m_k.matmul(dh, L.w1, false, true, DType::Float16)}));
        L.dw1 = out(rec(r, w1, "MatMul", {L.x, dh}, {m_k.matmul(L.x, dh, true, false, DType::Float16)}));
    }
    // Column-parallel w1: the input gradient is the sum of the lanes' partial products.
    const auto dx = tp > 1 ? allReduce(ranks, dn, w1) : dn;
    for (int ln = 0; ln < tp; ++ln) {
        const int r = rankOf(st, ln);
        const auto& d = dOut[std::size_t(ln)];
        auto g = out(rec(r, "Gradients/" + s, "AddN", {d, dx[std::size_t(ln)]},
                         {m_k.binary(d, dx[std::size_t(ln)], DType::Float16, add)}));
        if (st > 0) send(r, st - 1, true, g);
    }
}

std::vector<TensorP> ClusterSim::unscale(int rank) {
    Lane& L = m_lanes[std::size_t(rank)];
    std::vector<TensorP> grads = {L.dw1, L.dw2};
    if (L.head) grads.push_back(L.headGrad);
    auto inv = scalar(DType::Float16, 1.0f / kLossScale);
    for (auto& g : grads) g = out(rec(rank, kOptim, "Mul", {g, inv}, {m_k.binary(g, inv, DType::Float16, mul)}));
    return grads;
}

void ClusterSim::optimizer(int rank, const std::vector<TensorP>& grads) {
    Lane& L = m_lanes[std::size_t(rank)];
    auto mom = scalar(DType::Float32, kMomentum);
    auto update = [&](TensorP& w, TensorP& acc, const TensorP& g, bool head) {
        TensorP var = w;
        if (head) {
            auto d = scalar(DType::Float16, kHeadDecay);
            var = out(rec(rank, kOptim, "Mul", {w, d}, {m_k.binary(w, d, DType::Float16, mul)}));
        }
        auto lr = scalar(DType::Float32, head ? kHeadLr : kLr);
        auto [nw, nacc] = m_k.applyMomentum(var, acc, lr, g, mom);
        // ApplyMomentum updates the accumulation in place; its dumped output is the new weight.
        rec(rank, kOptim, "ApplyMomentum", {var, acc, lr, g, mom}, {nw}, ClusterOpKind::Optimizer, {nacc});
        w = nw;
        acc = nacc;
    };
    update(L.w1, L.acc1, grads.at(0), false);
    update(L.w2, L.acc2, grads.at(1), false);
    if (L.head) update(L.head, L.headAcc, grads.at(2), true);
}

void ClusterSim::run() {
    const int pp = m_s.pipelineStages, ranks = trace.ranks;
    trace.iterations = m_s.iterations;
    for (m_iter = 0; m_iter < m_s.iterations; ++m_iter) {
        Rng rng{std::uint64_t(7919 * (m_iter + 1))};
        m_ids.assign(kBatch, 0);
        m_labels.assign(kBatch, float(kCulpritToken));
        for (int b = 0; b < kBatch; ++b) {
            int t;
            do t = int(rng.next() % kVocab);
            while (t == kCulpritToken || t == kOutlierToken);
            m_ids[std::size_t(b)] = float(t);
        }
        m_labels[kBatch - 1] = m_ids[0];  // one label differs from the frequent token
        if (m_s.origin == ClusterOrigin::ForwardResidual && m_iter == m_s.originIteration)
            m_ids[1] = float(kOutlierToken);
        for (int r = 0; r < ranks; ++r) {
            m_now[std::size_t(r)] += kIterationGapUs;  // data loading between steps
            m_pos[std::size_t(r)] = 0;
        }
        for (int st = 0; st < pp; ++st) forwardStage(st);
        headForward(pp - 1);
        for (int st = pp - 1; st >= 0; --st) {
            if (st == pp - 1) headBackward(st);
            backwardStage(st);
            for (int ln = 0; ln < m_s.tensorParallel; ++ln) {
                const int r = rankOf(st, ln);
                m_pendingGrad[std::size_t(r)] = {};
                auto grads = unscale(r);
                if (m_s.globalNorm)
                    m_pendingGrad[std::size_t(r)] = grads;
                else
                    optimizer(r, grads);
            }
        }
        if (!m_s.globalNorm) continue;
        // Clip by global norm: every rank's squared gradient norm, summed over all ranks.
        std::vector<TensorP> local(static_cast<std::size_t>(ranks));
        std::vector<int> all;
        for (int r = 0; r < ranks; ++r) {
            all.push_back(r);
            std::vector<TensorP> parts;
            for (const auto& g : m_pendingGrad[std::size_t(r)]) {
                auto c = out(rec(r, kClip, "Cast", {g}, {m_k.cast(g, DType::Float32)}));
                auto sq = out(rec(r, kClip, "Square", {c}, {m_k.binary(c, c, DType::Float32, mul)}));
                float acc = 0;
                for (float x : sq->v) acc += x;
                parts.push_back(out(rec(r, kClip, "ReduceSum", {sq}, {scalar(DType::Float32, acc)})));
            }
            float acc = 0;
            for (const auto& p : parts) acc += p->v[0];
            local[std::size_t(r)] = out(rec(r, kClip, "AddN", parts, {scalar(DType::Float32, acc)}));
        }
        const auto total = allReduce(all, local, kClip);
        for (int r = 0; r < ranks; ++r) {
            const auto& t = total[std::size_t(r)];
            auto n =
                out(rec(r, kClip, "Sqrt", {t}, {m_k.unary(t, DType::Float32, [](float a) { return std::sqrt(a); })}));
            auto clip = scalar(DType::Float32, kClipNorm);
            auto mx =
                out(rec(r, kClip, "Maximum", {n, clip}, {m_k.binary(n, clip, DType::Float32, [](float a, float b) {
                            return std::isnan(a) ? a : std::max(a, b);
                        })}));
            auto coef = out(rec(r, kClip, "RealDiv", {clip, mx}, {m_k.binary(clip, mx, DType::Float32, divide)}));
            auto grads = m_pendingGrad[std::size_t(r)];
            for (auto& g : grads) g = out(rec(r, kClip, "Mul", {g, coef}, {m_k.binary(g, coef, DType::Float16, mul)}));
            optimizer(r, grads);
        }
    }
    trace.execOrder.clear();
    for (const auto& g : m_graph) {
        trace.execOrder.emplace_back();
        for (const auto& [type, name] : g) trace.execOrder.back().push_back(name);
    }
    stampTimestamps();
}

void ClusterSim::stampTimestamps() {
    // MindSpore's kernel-by-kernel dump takes a fresh clock reading per tensor after the kernel ran.
    std::vector<std::int64_t> last(std::size_t(trace.ranks), 0);
    for (auto& op : trace.ops) {
        const auto r = std::size_t(op.rank);
        const std::int64_t off = r < m_s.rankClockOffsetUs.size() ? m_s.rankClockOffsetUs[r] : 0;
        const std::int64_t base = m_s.baseTimestampUs + op.trueEndUs + off;
        op.tensorTimestampUs.clear();
        for (std::size_t i = 0; i < op.inputs.size() + op.outputs.size(); ++i) {
            last[r] = std::max(base + std::int64_t(i), last[r] + 1);
            op.tensorTimestampUs.push_back(last[r]);
        }
    }
}

}  // namespace dl::demo

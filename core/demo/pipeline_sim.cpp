#include "core/demo/pipeline_sim.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/demo/demo_random.h"

namespace dl::demo {

namespace {

constexpr int kTokens = 2, kHidden = 8, kVocab = 64;
constexpr int kOutlierToken = kVocab - 1;  // fed once, in the origin micro-batch
constexpr int kOutlierDim = 7;             // quiet in every other token
constexpr float kLossScale = 1024.f, kLr = 1e-4f, kMomentum = 0.9f, kNormEps = 1e-6f, kClipNorm = 1.0f;
constexpr std::int64_t kSendRecvLatencyUs = 37, kCollectiveLatencyUs = 25, kIterationGapUs = 200;
// Row-major index row * cols + col, computed in size_t (not in int, then widened).
constexpr std::size_t flat(int row, int cols, int col) {
    return std::size_t(row) * std::size_t(cols) + std::size_t(col);
}

const std::string kBase = "Default/network-PipelineCell/_backbone-LlamaForCausalLM";
const std::string kModel = kBase + "/model-LlamaModel";
const std::string kHead = kBase + "/lm_head-Linear";
const std::string kLoss = kBase + "/loss-CrossEntropyLoss";
const std::string kAccu = "Default/network-PipelineCell/accu_grads";
const std::string kReducer = "Default/grad_reducer-DistributedGradReducer";
const std::string kOptim = "Default/optimizer-Momentum";
const std::string kClip = "Default/optimizer-Momentum/clip_grad-ClipByGlobalNorm";

std::string layerScope(int layer) { return kModel + "/layers-CellList/" + std::to_string(layer) + "-LlamaDecodeLayer"; }
std::string grad(const std::string& scope, const std::string& fwdType) {
    return "Gradients/" + scope + "/grad" + fwdType;
}

float silu(float x) { return x / (1.f + std::exp(-x)); }
float siluGrad(float x) {
    const float s = 1.f / (1.f + std::exp(-x));
    return s * (1.f + x * (1.f - s));
}

}  // namespace

const char* pipelineScheduleName(PipelineSchedule s) {
    switch (s) {
        case PipelineSchedule::GPipe:
            return "gpipe";
        case PipelineSchedule::OneFOneB:
            return "1f1b";
        case PipelineSchedule::Interleaved:
            return "interleaved";
    }
    return "?";
}

PipelineSim::PipelineSim(const PipelineSpec& spec)
    : m_spec(spec),
      m_pp(spec.pipelineStages),
      m_tp(spec.tensorParallel),
      m_dp(spec.dataParallel),
      m_chunks(spec.schedule == PipelineSchedule::Interleaved ? spec.chunks : 1),
      m_k(OverflowMode::InfNan) {
    if (m_pp < 2 || m_tp < 1 || m_dp < 1 || m_chunks < 1 || spec.layersPerStage < 1 || spec.microBatches < 1)
        throw std::logic_error("pipeline sim: unsupported PP x TP x DP");
    if (spec.schedule == PipelineSchedule::Interleaved && spec.microBatches % m_pp)
        throw std::logic_error("pipeline sim: the interleaved schedule needs micro-batches divisible by the stages");
    const int n = ranks();
    trace.pipelineStages = m_pp;
    trace.tensorParallel = m_tp;
    trace.ranks = n;
    for (int r = 0; r < n; ++r) trace.stageOfRank.push_back(r / (m_dp * m_tp));
    m_graph.resize(std::size_t(m_pp));
    for (int st = 0; st < m_pp; ++st) m_opCounter.push_back(std::uint32_t(23 + 17 * st));
    m_now.assign(std::size_t(n), 0);
    m_pos.assign(std::size_t(n), 0);
    m_weights.resize(std::size_t(n));
    m_head.resize(std::size_t(n));

    Rng rng{20261203};
    std::vector<float> e(std::size_t(kVocab * kHidden));
    for (int t = 0; t < kVocab; ++t)
        for (int j = 0; j < kHidden; ++j) {
            float v = j == kOutlierDim ? 1e-4f * rng.normal() : rng.normal();
            if (t == kOutlierToken && j == kOutlierDim) v = 3.0f;
            e[flat(t, kHidden, j)] = m_k.round(DType::Float16, v);
        }
    m_emb = m_k.make(DType::Float16, {kVocab, kHidden}, e);
    m_gamma = m_k.make(DType::Float16, {kHidden}, std::vector<float>(kHidden, 1.f));
    auto vec = [&](float scale, DType t = DType::Float16) {
        std::vector<float> v(kHidden);
        for (auto& x : v) x = m_k.round(t, scale * rng.normal());
        return m_k.make(t, {kHidden}, v);
    };
    auto zeros = [&] { return m_k.make(DType::Float32, {kHidden}, std::vector<float>(kHidden, 0.f)); };
    const int originLayer = spec.originLayer >= 0 ? spec.originLayer : spec.layersPerStage / 2;
    for (int rp = 0; rp < m_dp; ++rp)
        for (int st = 0; st < m_pp; ++st)
            for (int ln = 0; ln < m_tp; ++ln) {
                const int r = rankOf(rp, st, ln);
                for (int c = 0; c < m_chunks; ++c)
                    for (int l = 0; l < spec.layersPerStage; ++l) {
                        Weights w;
                        w.wg = vec(0.2f);
                        w.wu = vec(0.2f);
                        w.wd = vec(0.2f);
                        if (rp == 0 && st == spec.originStage && ln == spec.originLane && c == m_chunks - 1 &&
                            l == originLayer) {
                            // The outlier dimension: a large up weight, a down weight of 1 and a
                            // gate weight that keeps SiLU(gate) near 0, so the dgate Mul overflows
                            // while the down weight's gradient (dy * SiLU(gate) * up) stays finite.
                            auto set = [&](TensorP& t, float v) {
                                auto copy = std::make_shared<DemoTensor>(*t);
                                copy->v[kOutlierDim] = m_k.round(DType::Float16, v);
                                t = copy;
                            };
                            set(w.wu, spec.upWeightSpike);
                            set(w.wd, 1.0f);
                            set(w.wg, -6.0f);
                        }
                        w.ag = w.au = w.ad = zeros();
                        w.mg = w.mu = w.md = zeros();
                        m_weights[std::size_t(r)][{c, l, 0}] = w;
                    }
                if (st == m_pp - 1) {
                    Rng hr{777};  // the head is replicated over the TP lanes: same start on each
                    std::vector<float> v(kHidden);
                    for (auto& x : v) x = m_k.round(DType::Float16, hr.normal());
                    v[kOutlierDim] = -1.f;  // the outlier's logit on its own dimension is low: a large gradient there
                    m_head[std::size_t(r)].wh = m_k.make(DType::Float16, {kHidden}, v);
                    m_head[std::size_t(r)].ah = zeros();
                    m_head[std::size_t(r)].mh = zeros();
                }
            }
    m_k.takeOverflow();
    buildSchedules();
}

void PipelineSim::buildSchedules() {
    const int n = m_spec.microBatches, v = m_chunks;
    m_schedule.assign(std::size_t(m_pp), {});
    for (int s = 0; s < m_pp; ++s) {
        auto& out = m_schedule[std::size_t(s)];
        switch (m_spec.schedule) {
            case PipelineSchedule::GPipe:
                for (int m = 0; m < n; ++m) out.push_back({false, m, 0});
                for (int m = 0; m < n; ++m) out.push_back({true, m, 0});
                break;
            case PipelineSchedule::OneFOneB: {
                const int warm = std::min(m_pp - s - 1, n);
                for (int m = 0; m < warm; ++m) out.push_back({false, m, 0});
                for (int i = 0; i + warm < n; ++i) {
                    out.push_back({false, warm + i, 0});
                    out.push_back({true, i, 0});
                }
                for (int m = n - warm; m < n; ++m) out.push_back({true, m, 0});
                break;
            }
            case PipelineSchedule::Interleaved: {
                // Megatron's interleaved 1F1B: the k-th forward unit runs chunk (k mod pp*v) / pp of
                // micro-batch (k / (pp*v)) * pp + k mod pp; backward units visit the chunks in reverse.
                const int total = n * v;
                auto mbOf = [&](int k) { return (k / (m_pp * v)) * m_pp + k % m_pp; };
                auto chunkOf = [&](int k, bool fwd) {
                    const int c = (k % (m_pp * v)) / m_pp;
                    return fwd ? c : v - 1 - c;
                };
                const int warm = std::min((m_pp - s - 1) * 2 + (v - 1) * m_pp, total);
                for (int k = 0; k < warm; ++k) out.push_back({false, mbOf(k), chunkOf(k, true)});
                for (int i = 0; i + warm < total; ++i) {
                    out.push_back({false, mbOf(warm + i), chunkOf(warm + i, true)});
                    out.push_back({true, mbOf(i), chunkOf(i, false)});
                }
                for (int k = total - warm; k < total; ++k) out.push_back({true, mbOf(k), chunkOf(k, false)});
                break;
            }
        }
    }
}

int PipelineSim::place(int rank, const std::string& scope, const std::string& type) {
    const int stage = trace.stageOfRank[std::size_t(rank)];
    auto& g = m_graph[std::size_t(stage)];
    const std::uint32_t pos = m_pos[std::size_t(rank)]++;
    if (pos == g.size()) {
        m_opCounter[std::size_t(stage)] += 1 + std::uint32_t((pos * 7 + std::uint32_t(stage)) % 4);
        g.emplace_back(type, scope + "/" + type + "-op" + std::to_string(m_opCounter[std::size_t(stage)]));
    } else if (pos > g.size() || g[pos].first != type ||
               g[pos].second.compare(0, scope.size() + type.size() + 4, scope + "/" + type + "-op") != 0) {
        throw std::logic_error("pipeline sim: stage graph differs between ranks or iterations at " + scope + "/" +
                               type);
    }
    return int(pos);
}

void PipelineSim::link(ClusterOp& op, const std::vector<TensorP>& candidates) {
    for (const auto& t : op.inputs) op.badInput = op.badInput || isBad(*t);
    for (const auto& t : op.outputs) op.badOutput = op.badOutput || isBad(*t);
    for (const auto& t : candidates) {
        if (!isBad(*t)) continue;
        const auto it = m_producer.find(t.get());
        if (it == m_producer.end()) continue;
        if (std::find(op.badFrom.begin(), op.badFrom.end(), it->second) == op.badFrom.end())
            op.badFrom.push_back(it->second);
    }
    for (int from : op.badFrom) {
        const auto& f = trace.ops[std::size_t(from)];
        if (op.cause < 0 || f.trueEndUs < trace.ops[std::size_t(op.cause)].trueEndUs ||
            (f.trueEndUs == trace.ops[std::size_t(op.cause)].trueEndUs && from < op.cause))
            op.cause = from;
    }
}

int PipelineSim::rec(int rank, const std::string& scope, const std::string& type, std::vector<TensorP> in,
                     std::vector<TensorP> out, ClusterOpKind kind) {
    m_k.takeOverflow();
    const bool comm =
        kind == ClusterOpKind::Send || kind == ClusterOpKind::Receive || kind == ClusterOpKind::Collective;
    ClusterOp op;
    op.rank = rank;
    op.stage = trace.stageOfRank[std::size_t(rank)];
    op.lane = rank % m_tp;
    op.replica = (rank / m_tp) % m_dp;
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
    return idx;
}

void PipelineSim::send(int rank, int dest, int mb, int destVs, bool backward, const std::string& scope,
                       const TensorP& t) {
    const int op = rec(rank, scope, "Send", {t}, {}, ClusterOpKind::Send);
    trace.ops[std::size_t(op)].peer = dest;
    m_inFlight[{dest, mb, destVs, backward}] = op;
    m_sentOn[{rank, dest, backward}].push_back(op);
}

TensorP PipelineSim::receive(int rank, int mb, int vs, bool backward, const std::string& scope) {
    const auto it = m_inFlight.find({rank, mb, vs, backward});
    if (it == m_inFlight.end()) throw std::logic_error("pipeline sim: receive before send");
    const int sendOp = it->second;
    m_inFlight.erase(it);
    const ClusterOp& s = trace.ops[std::size_t(sendOp)];
    // HCCL matches a rank pair's messages in order (these names carry no sr_tag to tell streams
    // apart): a schedule that receives out of order would hang or mix up data on real hardware.
    auto& queue = m_sentOn[{s.rank, rank, backward}];
    if (queue.empty() || queue.front() != sendOp)
        throw std::logic_error("pipeline sim: the schedule receives out of order between ranks " +
                               std::to_string(s.rank) + " and " + std::to_string(rank));
    queue.pop_front();
    auto value = std::make_shared<DemoTensor>(*s.inputs.at(0));  // the receiver's own buffer, the same bytes
    const std::int64_t ready = s.trueStartUs + kSendRecvLatencyUs;
    const int sender = s.rank;
    const int op = rec(rank, scope, "Receive", {}, {value}, ClusterOpKind::Receive);
    ClusterOp& r = trace.ops[std::size_t(op)];
    if (r.trueEndUs < ready) m_now[std::size_t(rank)] = r.trueEndUs = ready;
    r.peer = sender;
    if (r.badOutput) {
        r.badFrom = {sendOp};
        r.cause = sendOp;
    }
    pairs.push_back({sendOp, op});
    return value;
}

std::vector<TensorP> PipelineSim::allReduce(const std::vector<int>& ranks, const std::vector<TensorP>& in,
                                            const std::string& scope) {
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

bool PipelineSim::ready(int replica, int stage) const {
    const auto& list = m_schedule[std::size_t(stage)];
    const std::size_t k = m_next[flat(replica, m_pp, stage)];
    if (k >= list.size()) return false;
    const Unit& u = list[k];
    const int vs = virtualStage(stage, u.chunk), last = m_pp * m_chunks - 1;
    const int r = rankOf(replica, stage, 0);
    if (!u.backward) return vs == 0 || m_inFlight.count({r, u.mb, vs, false}) > 0;
    return vs == last ? m_headIn.count({r, u.mb, u.chunk}) > 0 : m_inFlight.count({r, u.mb, vs, true}) > 0;
}

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

void PipelineSim::run() {
    const int n = ranks(), mbs = m_spec.microBatches;
    m_originLayer = m_spec.originLayer >= 0 ? m_spec.originLayer : m_spec.layersPerStage / 2;
    m_originMb = m_spec.originMicroBatch >= 0 ? m_spec.originMicroBatch : mbs / 2;
    const int lastIteration =
        m_spec.killedIteration >= 0 ? std::min(m_spec.killedIteration, m_spec.iterations - 1) : m_spec.iterations - 1;
    trace.iterations = lastIteration + 1;
    for (m_iter = 0; m_iter <= lastIteration; ++m_iter) {
        Rng rng{std::uint64_t(104729 * (m_iter + 1))};
        m_tokens.assign(std::size_t(m_dp) * std::size_t(mbs), std::vector<float>(kTokens));
        m_labels = m_tokens;
        for (auto& t : m_tokens)
            for (auto& x : t) x = float(rng.next() % (kVocab - 1));
        for (auto& t : m_labels)
            for (auto& x : t) x = float(rng.next() % kHidden);
        if (m_iter == m_spec.originIteration) {
            m_tokens[std::size_t(m_originMb)][0] = float(kOutlierToken);
            m_labels[std::size_t(m_originMb)][0] = float(kOutlierDim);
        }
        for (int r = 0; r < n; ++r) {
            m_now[std::size_t(r)] = *std::max_element(m_now.begin(), m_now.end()) + kIterationGapUs;
            m_pos[std::size_t(r)] = 0;
        }
        m_lossSum = 0;
        m_next.assign(std::size_t(m_dp) * std::size_t(m_pp), 0);
        for (;;) {
            int best = -1;
            std::int64_t bestClock = 0;
            bool left = false;
            for (int rp = 0; rp < m_dp; ++rp)
                for (int st = 0; st < m_pp; ++st) {
                    if (m_next[flat(rp, m_pp, st)] < m_schedule[std::size_t(st)].size()) left = true;
                    if (!ready(rp, st)) continue;
                    std::int64_t clock = 0;
                    for (int ln = 0; ln < m_tp; ++ln) clock = std::max(clock, m_now[std::size_t(rankOf(rp, st, ln))]);
                    if (best < 0 || clock < bestClock) {
                        best = rp * m_pp + st;
                        bestClock = clock;
                    }
                }
            if (!left) break;
            if (best < 0) throw std::logic_error("pipeline sim: the schedule deadlocks");
            const int rp = best / m_pp, st = best % m_pp;
            // TP lanes start a unit together.
            for (int ln = 0; ln < m_tp; ++ln) m_now[std::size_t(rankOf(rp, st, ln))] = bestClock;
            const Unit u = m_schedule[std::size_t(st)][m_next[std::size_t(best)]++];
            if (u.backward)
                backwardUnit(rp, st, u.mb, u.chunk);
            else
                forwardUnit(rp, st, u.mb, u.chunk);
        }
        trace.lossPerIteration.push_back(m_lossSum / float(mbs));
        optimizerStep();
    }
    trace.execOrder.clear();
    for (const auto& g : m_graph) {
        trace.execOrder.emplace_back();
        for (const auto& [type, name] : g) trace.execOrder.back().push_back(name);
    }
    if (m_spec.killedIteration >= 0 && m_spec.killedIteration < m_spec.iterations) cutKilledIteration();
    stampTimestamps();
}

void PipelineSim::cutKilledIteration() {
    const int k = m_spec.killedIteration;
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = 0;
    for (const ClusterOp& o : trace.ops)
        if (o.iteration == k) {
            lo = std::min(lo, o.trueStartUs);
            hi = std::max(hi, o.trueEndUs);
        }
    const std::int64_t cut = lo + std::int64_t(double(hi - lo) * m_spec.killedFraction);
    std::vector<int> newIndex(trace.ops.size(), -1);
    std::vector<ClusterOp> kept;
    for (std::size_t i = 0; i < trace.ops.size(); ++i) {
        const ClusterOp& o = trace.ops[i];
        if (o.iteration == k && o.trueEndUs > cut) continue;
        newIndex[i] = int(kept.size());
        kept.push_back(std::move(trace.ops[i]));
    }
    for (ClusterOp& o : kept) {
        std::vector<int> from;
        for (int f : o.badFrom)
            if (newIndex[std::size_t(f)] >= 0) from.push_back(newIndex[std::size_t(f)]);
        o.badFrom = from;
        o.cause = o.cause >= 0 ? newIndex[std::size_t(o.cause)] : -1;
        if (o.cause < 0 && !o.badFrom.empty()) o.cause = o.badFrom.front();
    }
    for (auto& members : trace.collectives) {
        std::vector<int> m;
        for (int op : members)
            if (newIndex[std::size_t(op)] >= 0) m.push_back(newIndex[std::size_t(op)]);
        members = m;
    }
    std::vector<PipelinePair> p;
    for (const PipelinePair& x : pairs)
        if (newIndex[std::size_t(x.sendOp)] >= 0 && newIndex[std::size_t(x.recvOp)] >= 0)
            p.push_back({newIndex[std::size_t(x.sendOp)], newIndex[std::size_t(x.recvOp)]});
    pairs = p;
    trace.ops = std::move(kept);
    m_producer.clear();
}

void PipelineSim::stampTimestamps() {
    std::vector<std::int64_t> last(std::size_t(trace.ranks), 0);
    for (auto& op : trace.ops) {
        const auto r = std::size_t(op.rank);
        const std::int64_t off = r < m_spec.rankClockOffsetUs.size() ? m_spec.rankClockOffsetUs[r] : 0;
        const std::int64_t base = m_spec.baseTimestampUs + op.trueEndUs + off;
        op.tensorTimestampUs.clear();
        for (std::size_t i = 0; i < op.inputs.size() + op.outputs.size(); ++i) {
            last[r] = std::max(base + std::int64_t(i), last[r] + 1);
            op.tensorTimestampUs.push_back(last[r]);
        }
    }
}

}  // namespace dl::demo

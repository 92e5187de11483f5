#include "core/demo/pipeline_sim.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/demo/demo_random.h"
#include "core/demo/pipeline_model.h"

namespace dl::demo {

using namespace pipeline_model;

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

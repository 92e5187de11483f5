// How the simulator records an op on a rank (its place in the stage graph, its inputs' links) and
// the messages between ranks (Send/Receive in flight, the AllReduce over a group); apart from the
// units that call them so the model's maths reads without the bookkeeping.
#include <algorithm>
#include <stdexcept>

#include "core/demo/pipeline_model.h"
#include "core/demo/pipeline_sim.h"

namespace dl::demo {

using namespace pipeline_model;

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

}  // namespace dl::demo

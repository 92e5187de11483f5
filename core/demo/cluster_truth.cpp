#include "core/demo/cluster_truth.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <tuple>

namespace dl::demo {

namespace {

struct Deriver {
    const ClusterTrace& t;
    int origin = -1;
    std::vector<int> first;                    // [rank] first anomalous op, -1 none
    std::map<std::pair<int, int>, int> entry;  // (rank, iteration) -> first anomalous op
    std::vector<char> kept;
    std::vector<int> causeStep;  // [op] nearest kept op walking back, -1 none

    const ClusterOp& op(int i) const { return t.ops[std::size_t(i)]; }
    bool crossing(int cur, int p) const { return op(p).rank == op(cur).rank && op(p).iteration < op(cur).iteration; }
    int entryOf(int cur) const { return entry.at({op(cur).rank, op(cur).iteration}); }

    // Walks back along causes to the first kept op; an iteration crossing leads to the first
    // anomaly of the later iteration on that rank, and from that one to the optimizer op.
    int walk(int e) const {
        int cur = e;
        for (;;) {
            const int p = op(cur).cause;
            if (p < 0) return -1;
            if (crossing(cur, p)) {
                const int en = entryOf(cur);
                return en != cur ? en : p;
            }
            if (kept[std::size_t(p)]) return p;
            cur = p;
        }
    }

    std::set<int> possible(int e) const {
        std::set<int> found, seen;
        std::vector<int> stack = {e};
        while (!stack.empty()) {
            const int cur = stack.back();
            stack.pop_back();
            for (int p : op(cur).badFrom) {
                if (crossing(cur, p)) {
                    const int en = entryOf(cur);
                    if (en != cur && en != e && kept[std::size_t(en)]) {
                        found.insert(en);
                        continue;
                    }
                }
                if (kept[std::size_t(p)]) {
                    found.insert(p);
                    continue;
                }
                if (seen.insert(p).second) stack.push_back(p);
            }
        }
        found.erase(e);
        return found;
    }
};

ClusterAnomaly anomalyOf(const ClusterOp& o) {
    ClusterAnomaly a;
    a.rank = o.rank;
    a.iteration = o.iteration;
    a.opType = o.type;
    a.fullName = o.fullName;
    a.trueUs = o.trueEndUs;
    a.rawTimestampUs = o.tensorTimestampUs.empty() ? 0 : o.tensorTimestampUs.front();
    return a;
}

}  // namespace

bool deriveClusterTruth(const ClusterTrace& trace, ClusterScenarioTruth& truth, std::string& error) {
    Deriver d{trace};
    const auto n = trace.ops.size();
    d.first.assign(std::size_t(trace.ranks), -1);
    truth.pipelineStages = trace.pipelineStages;
    truth.tensorParallel = trace.tensorParallel;
    truth.ranks = trace.ranks;
    truth.iterations = trace.iterations;
    truth.stageOfRank.clear();
    for (int r = 0; r < trace.ranks; ++r) truth.stageOfRank.push_back(trace.stageOf(r));
    truth.opsPerRankIteration.assign(std::size_t(trace.ranks),
                                     std::vector<std::size_t>(std::size_t(trace.iterations), 0));
    truth.tensorsPerRankIteration = truth.opsPerRankIteration;
    truth.spontaneousOverflows = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const ClusterOp& o = trace.ops[i];
        ++truth.opsPerRankIteration[std::size_t(o.rank)][std::size_t(o.iteration)];
        truth.tensorsPerRankIteration[std::size_t(o.rank)][std::size_t(o.iteration)] +=
            o.inputs.size() + o.outputs.size();
        if (!o.anomalous()) continue;
        if (d.first[std::size_t(o.rank)] < 0) d.first[std::size_t(o.rank)] = int(i);
        d.entry.emplace(std::pair(o.rank, o.iteration), int(i));
        if (o.spontaneous()) {
            ++truth.spontaneousOverflows;
            if (d.origin < 0 || o.trueEndUs < d.op(d.origin).trueEndUs) d.origin = int(i);
        }
    }
    if (d.origin < 0) {
        error = "the simulated run has no overflow";
        return false;
    }
    truth.origin = anomalyOf(d.op(d.origin));
    truth.firstAnomaly.assign(std::size_t(trace.ranks), ClusterAnomaly{});
    for (int r = 0; r < trace.ranks; ++r)
        if (d.first[std::size_t(r)] >= 0) truth.firstAnomaly[std::size_t(r)] = anomalyOf(d.op(d.first[std::size_t(r)]));

    // Kept ops: the origin, first anomalies, and whatever the walks back from them add.
    d.kept.assign(n, 0);
    d.causeStep.assign(n, -1);
    std::deque<int> queue;
    auto keep = [&](int i) {
        if (!d.kept[std::size_t(i)]) {
            d.kept[std::size_t(i)] = 1;
            queue.push_back(i);
        }
    };
    keep(d.origin);
    for (int f : d.first)
        if (f >= 0) keep(f);
    while (!queue.empty()) {
        const int e = queue.front();
        queue.pop_front();
        const int c = e == d.origin ? -1 : d.walk(e);
        d.causeStep[std::size_t(e)] = c;
        if (c >= 0) keep(c);
    }

    // Group kept ops into steps: one collective instance, or TP peers at the same op and hop.
    struct Via {
        ClusterVia kind;
        std::string op;
        int tag;
        std::vector<int> ranks;
    };
    auto viaOf = [&](int e) {
        const ClusterOp& o = d.op(e);
        if (o.cause < 0) return Via{ClusterVia::Origin, "", -1, {}};
        const ClusterOp& c = d.op(o.cause);
        if (o.kind == ClusterOpKind::Receive) return Via{ClusterVia::SendReceive, c.fullName, o.tag, {c.rank}};
        if (o.kind == ClusterOpKind::Collective) {
            std::vector<int> members;
            for (int m : trace.collectives[std::size_t(o.collective)]) members.push_back(d.op(m).rank);
            return Via{ClusterVia::Collective, o.fullName, -1, members};
        }
        if (d.crossing(e, o.cause)) return Via{ClusterVia::WeightUpdate, c.fullName, -1, {c.rank}};
        return Via{ClusterVia::SameRank, "", -1, {}};
    };
    using Key = std::tuple<int, std::string, int, int, int, std::string, int>;
    std::map<Key, std::vector<int>> groups;
    for (std::size_t i = 0; i < n; ++i) {
        if (!d.kept[i]) continue;
        const ClusterOp& o = trace.ops[i];
        const Via v = viaOf(int(i));
        const Key k = o.kind == ClusterOpKind::Collective
            ? Key{o.collective, "", 0, 0, 0, "", 0}
            : Key{-1, o.fullName, o.iteration, o.stage * 4096 + o.replica, int(v.kind), v.op, v.tag};
        groups[k].push_back(int(i));
    }
    std::vector<std::vector<int>> steps;
    for (auto& [k, members] : groups) {
        std::sort(members.begin(), members.end(), [&](int a, int b) {
            return std::pair(d.op(a).trueEndUs, d.op(a).rank) < std::pair(d.op(b).trueEndUs, d.op(b).rank);
        });
        steps.push_back(members);
    }
    std::sort(steps.begin(), steps.end(), [&](const auto& a, const auto& b) {
        return std::pair(d.op(a[0]).trueEndUs, d.op(a[0]).rank) < std::pair(d.op(b[0]).trueEndUs, d.op(b[0]).rank);
    });
    std::vector<int> stepOf(n, -1);
    for (std::size_t s = 0; s < steps.size(); ++s)
        for (int m : steps[s]) stepOf[std::size_t(m)] = int(s);

    truth.chain.clear();
    for (std::size_t s = 0; s < steps.size(); ++s) {
        const auto& members = steps[s];
        const ClusterOp& rep = d.op(members[0]);  // the earliest member
        ClusterChainStep st;
        std::vector<int> byRank = members;
        std::sort(byRank.begin(), byRank.end(), [&](int a, int b) { return d.op(a).rank < d.op(b).rank; });
        for (int m : byRank) {
            const ClusterOp& o = d.op(m);
            st.ranks.push_back(o.rank);
            st.fullNames.push_back(o.fullName);
            st.rawTimestampUs.push_back(o.tensorTimestampUs.empty() ? 0 : o.tensorTimestampUs.front());
            if (d.first[std::size_t(o.rank)] == m) st.firstReached.push_back(o.rank);
        }
        st.opType = rep.type;
        st.fullName = rep.fullName;
        st.iteration = rep.iteration;
        st.trueUs = rep.trueEndUs;
        const Via v = viaOf(members[0]);
        st.via = v.kind;
        st.viaOp = v.op;
        st.tag = v.tag;
        st.viaRanks = v.ranks;
        if (v.kind == ClusterVia::SendReceive && members.size() > 1) {  // TP peers: every lane's sender
            st.viaRanks.clear();
            for (int m : byRank) st.viaRanks.push_back(d.op(d.op(m).cause).rank);
        }
        const int c = d.causeStep[std::size_t(members[0])];
        st.causedBy = c < 0 ? -1 : stepOf[std::size_t(c)];
        std::set<int> possible;
        for (int m : members)
            for (int p : d.possible(m))
                if (stepOf[std::size_t(p)] != int(s)) possible.insert(stepOf[std::size_t(p)]);
        st.possibleCauses.assign(possible.begin(), possible.end());
        if (st.causedBy >= int(s) || (!possible.empty() && *possible.rbegin() >= int(s))) {
            error = "cluster truth: step " + std::to_string(s) + " (" + st.fullName + ") is caused by a later step";
            return false;
        }
        truth.chain.push_back(std::move(st));
    }
    truth.lossPerIteration = trace.lossPerIteration;
    return true;
}

}  // namespace dl::demo

#include "core/analysis/comm_matcher.h"

#include <map>
#include <vector>

#include "core/analysis/comm_match_detail.h"
#include "core/util/parallel_for.h"

namespace dl {

using namespace comm_detail;

namespace {

CommMatch match(const DumpIndex& index, const std::vector<CommOp>& comm, const StageMap& stages, bool collectives) {
    CommMatch m;
    m.partner.assign(index.ops.size(), -1);
    m.group.assign(index.ops.size(), -1);
    std::map<std::uint32_t, std::vector<const CommOp*>> byIteration;
    for (const CommOp& c : comm) byIteration[index.ops[c.op].iteration].push_back(&c);
    const auto by = ranksByStage(stages);
    std::vector<P2p> p2p(comm.size());
    for (std::size_t i = 0; i < comm.size(); ++i)
        if (comm[i].kind == CommKind::Send || comm[i].kind == CommKind::Receive)
            p2p[i] = {signatureOf(index, index.ops[comm[i].op], comm[i].kind == CommKind::Send),
                      candidatePeers(index, comm[i], stages, by)};
    std::vector<std::pair<std::uint32_t, const std::vector<const CommOp*>*>> iterations;
    for (const auto& [iteration, ops] : byIteration) iterations.push_back({iteration, &ops});
    std::vector<IterationMatch> parts(iterations.size());
    std::vector<IterationEnds> ends(iterations.size());
    std::vector<Votes> senders(iterations.size()), receivers(iterations.size());
    parallelFor(std::size_t(0), iterations.size(), [&](std::size_t i) {
        findAnchors(index, *iterations[i].second, comm.data(), p2p, ends[i], senders[i], receivers[i]);
    });
    Votes senderVotes, receiverVotes;  // of the whole run
    for (std::size_t i = 0; i < iterations.size(); ++i) {
        for (const auto& [k, v] : senders[i])
            for (const auto& [r, n] : v) senderVotes[k][r] += n;
        for (const auto& [k, v] : receivers[i])
            for (const auto& [r, n] : v) receiverVotes[k][r] += n;
    }
    parallelFor(std::size_t(0), iterations.size(), [&](std::size_t i) {
        const auto& [iteration, ops] = iterations[i];
        pairIteration(comm.data(), p2p, ends[i], senderVotes, receiverVotes, parts[i], m.partner);
        if (collectives) groupCollectives(index, *ops, iteration, parts[i], m.group);
    });
    for (IterationMatch& part : parts) {
        const auto offset = std::int32_t(m.groups.size());
        for (CollectiveGroup& g : part.groups) {
            for (std::uint32_t op : g.ops) m.group[op] += offset;
            m.groups.push_back(std::move(g));
        }
        m.pairs.insert(m.pairs.end(), part.pairs.begin(), part.pairs.end());
        m.unmatchedSends.insert(m.unmatchedSends.end(), part.unmatchedSends.begin(), part.unmatchedSends.end());
        m.unmatchedReceives.insert(m.unmatchedReceives.end(), part.unmatchedReceives.begin(),
                                   part.unmatchedReceives.end());
        m.ambiguous += part.ambiguous;
        m.statisticsDiffer += part.statisticsDiffer;
    }
    if (collectives) splitByLearnedPartition(index, m);
    return m;
}

}  // namespace

CommMatch matchCommunication(const DumpIndex& index, const std::vector<CommOp>& comm, const StageMap& stages) {
    return match(index, comm, stages, true);
}

CommMatch matchSendReceive(const DumpIndex& index, const std::vector<CommOp>& comm, const StageMap& stages) {
    return match(index, comm, stages, false);
}

}  // namespace dl

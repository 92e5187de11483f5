#include "core/analysis/rank_dataflow.h"

#include <algorithm>
#include <filesystem>

namespace dl {

namespace {

std::string shortName(const std::string& n) { return n.substr(n.rfind('/') + 1); }

std::string edgeText(const DataflowEdge& e) {
    return shortName(e.producer) + " output." + std::to_string(e.outputSlot) + " -> " + shortName(e.consumer) +
        " input." + std::to_string(e.inputSlot);
}

}  // namespace

std::string graphsFolderOf(const DumpIndex& index, std::uint32_t rank) {
    for (const RankInfo& r : index.ranks)
        if (r.rank == rank) return index.root + (r.folder.empty() ? "" : "/" + r.folder) + "/graphs";
    return index.root + "/graphs";
}

RankDataflow::Rank& RankDataflow::rank(std::uint32_t r) {
    auto [it, inserted] = m_ranks.try_emplace(r);
    if (inserted) {
        const std::string dir = graphsFolderOf(m_index, r);
        std::error_code ec;
        if (std::filesystem::is_directory(dir, ec)) {
            auto flow = std::make_unique<IrDataflow>();
            if (readGraphIrFolder(dir, *flow, it->second.error) || !flow->kernels.empty())
                it->second.flow = std::move(flow);
        } else {
            it->second.error = "no graph IR for rank " + std::to_string(r) + " (" + dir + ")";
        }
    }
    return it->second;
}

const IrDataflow* RankDataflow::graphOf(std::uint32_t r) { return rank(r).flow.get(); }
const std::string& RankDataflow::error(std::uint32_t r) { return rank(r).error; }

std::int64_t RankDataflow::kernelOf(std::uint32_t op) {
    if (auto it = m_kernelOf.find(op); it != m_kernelOf.end()) return it->second;
    const OpRecord& o = m_index.ops[op];
    const IrDataflow* g = graphOf(o.rank);
    std::int64_t k = -1;
    if (g) {
        // The full scope (from the execution order) is exact; the file name is the fallback.
        if (o.scope) k = g->find(o.graph, m_index.strings.view(o.scope));
        if (k < 0) k = g->find(o.graph, m_index.strings.view(o.name));
    }
    m_kernelOf.emplace(op, k);
    return k;
}

std::uint32_t RankDataflow::opOf(std::uint32_t r, std::uint32_t iteration, std::uint32_t kernel, std::uint32_t before) {
    Rank& rk = rank(r);
    if (!rk.flow) return kNoIndex;
    auto it = rk.opsOf.find(iteration);
    if (it == rk.opsOf.end()) {
        // Ops are sorted by (rank, iteration, ...): the iteration's run of this rank.
        const auto lo = std::lower_bound(m_index.ops.begin(), m_index.ops.end(), std::pair{r, iteration},
                                         [](const OpRecord& o, std::pair<std::uint32_t, std::uint32_t> v) {
                                             return std::pair{o.rank, o.iteration} < v;
                                         });
        std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> ops;
        for (auto p = lo; p != m_index.ops.end() && p->rank == r && p->iteration == iteration; ++p) {
            const auto i = std::uint32_t(p - m_index.ops.begin());
            if (const std::int64_t k = kernelOf(i); k >= 0) ops[std::uint32_t(k)].push_back(i);
        }
        it = rk.opsOf.emplace(iteration, std::move(ops)).first;
    }
    auto f = it->second.find(kernel);
    if (f == it->second.end() || f->second.empty()) return kNoIndex;
    std::uint32_t best = f->second.front();
    for (std::uint32_t op : f->second)
        if (op < before) best = op;
    return best;
}

std::uint32_t RankDataflow::tensorOf(std::uint32_t op, Io io, std::uint16_t slot) const {
    const OpRecord& o = m_index.ops[op];
    for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t)
        if (m_index.tensors[t].io == io && m_index.tensors[t].slot == slot) return t;
    return kNoIndex;
}

namespace {

void explainHop(const DumpIndex& index, RankDataflow& flow, const ChainStep& from, ChainStep& s) {
    const std::uint32_t rank = s.at.rank;
    const IrDataflow* g = flow.graphOf(rank);
    if (!g) return;
    const std::string fromName = index.strings.str(index.ops[from.at.op].name);
    const std::string toName = index.strings.str(index.ops[s.at.op].name);
    const auto say = [&](const std::string& why) { s.note += (s.note.empty() ? "" : "; ") + why; };
    if (from.at.iteration != s.at.iteration) {
        say("the graph IR links ops of one iteration only: no dataflow path claimed");
        return;
    }
    const std::int64_t a = flow.kernelOf(from.at.op), b = flow.kernelOf(s.at.op);
    if (a < 0 || b < 0) {
        say((a < 0 ? fromName : toName) + " is not in the graph IR: no dataflow path known");
        return;
    }
    const std::vector<IrEdge> path = g->path(std::uint32_t(a), std::uint32_t(b));
    if (path.empty()) {
        say("no data path from " + fromName + " in the graph IR: only later on the same rank");
        return;
    }
    s.via = ChainVia::Dataflow;
    s.path.clear();
    for (const IrEdge& e : path) {
        DataflowEdge d;
        d.producer = g->kernels[e.from].name;
        d.consumer = g->kernels[e.to].name;
        d.producerOp = flow.opOf(rank, s.at.iteration, e.from, s.at.op);
        d.consumerOp = flow.opOf(rank, s.at.iteration, e.to, s.at.op + 1);
        d.outputSlot = e.fromSlot;
        d.inputSlot = e.toSlot;
        s.path.push_back(std::move(d));
    }
    std::string text;
    for (const DataflowEdge& d : s.path) text += (text.empty() ? "" : ", ") + edgeText(d);
    say("graph IR data path: " + text);
}

void findOriginInputs(RankDataflow& flow, AnalysisResult& res) {
    const OverflowPoint& p = *res.firstOverflow;
    const IrDataflow* g = flow.graphOf(p.rank);
    const std::int64_t k = g ? flow.kernelOf(p.op) : -1;
    if (k < 0) return;
    for (std::uint32_t e : g->inEdges(std::uint32_t(k))) {
        const IrEdge& edge = g->edges[e];
        OriginInput in;
        in.slot = edge.toSlot;
        in.tensor = flow.tensorOf(p.op, Io::Input, edge.toSlot);
        in.source = "kernel";
        in.producer = g->kernels[edge.from].name;
        in.producerOp = flow.opOf(p.rank, p.iteration, edge.from, p.op);
        in.outputSlot = edge.fromSlot;
        if (in.producerOp != kNoIndex) in.producerTensor = flow.tensorOf(in.producerOp, Io::Output, edge.fromSlot);
        res.originInputs.push_back(std::move(in));
    }
    for (const IrSourceInput* s : g->sourcesOf(std::uint32_t(k))) {
        OriginInput in;
        in.slot = s->toSlot;
        in.tensor = flow.tensorOf(p.op, Io::Input, s->toSlot);
        in.source = s->kind == IrSourceInput::Kind::Parameter ? "parameter" : "constant";
        in.producer = s->label;
        res.originInputs.push_back(std::move(in));
    }
    std::stable_sort(res.originInputs.begin(), res.originInputs.end(),
                     [](const OriginInput& a, const OriginInput& b) { return a.slot < b.slot; });
}

}  // namespace

void explainByDataflow(const DumpIndex& index, RankDataflow& flow, AnalysisResult& res) {
    for (ChainStep& s : res.chain) {
        if (s.via != ChainVia::SameRank || s.causedBy < 0) continue;
        const ChainStep& from = res.chain[std::size_t(s.causedBy)];
        if (from.at.rank != s.at.rank || from.at.op == kNoIndex || s.at.op == kNoIndex) continue;
        if (flow.graphOf(s.at.rank)) res.graphIrRead = true;
        explainHop(index, flow, from, s);
    }
    if (res.firstOverflow && res.firstOverflow->op != kNoIndex) {
        findOriginInputs(flow, res);
        if (flow.graphOf(res.firstOverflow->rank)) res.graphIrRead = true;
    }
}

}  // namespace dl

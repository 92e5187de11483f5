#include "core/formats/msprobe/msprobe_shard.h"
#include "core/util/read_file.h"

#include <algorithm>
#include <fstream>
#include <unordered_map>

#include "core/formats/msprobe/msprobe_dump.h"
#include "core/index/dump_layout.h"
#include "core/index/run_framework.h"

namespace dl {
namespace {

std::string dirOf(const std::string& rel) {
    const auto slash = rel.rfind('/');
    return slash == std::string::npos ? std::string() : rel.substr(0, slash);
}
std::string baseOf(const std::string& rel) {
    const auto slash = rel.rfind('/');
    return slash == std::string::npos ? rel : rel.substr(slash + 1);
}
// msprobe's folder for one process when it does not know the rank: "proc" + pid.
bool isProcFolder(std::string_view name) {
    if (name.size() <= 4 || !name.starts_with("proc")) return false;
    return std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string joinRel(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

bool readText(const std::string& path, std::string& text) {
    std::string error;
    return readFileText(path, text, error);
}

std::string_view opTypeOf(const MsprobeEntry& e) {
    switch (e.kind) {
        case MsprobeEntryKind::ParamGrad:
            return "parameters_grad";
        case MsprobeEntryKind::Debug:
            return "debug";
        default:
            return e.op;
    }
}

// "P2POp isend peer=3 tag=0" when every P2POp among the entry's inputs goes one way (the peer and
// tag when they agree too), "" otherwise: a batch that sends and receives is no single Send or
// Receive (comm_matcher's p2pKindOfScope reads this text).
std::string p2pScopeOf(const MsprobeEntry& e) {
    const MsprobeTensor* first = nullptr;
    bool samePeer = true, sameTag = true;
    for (const MsprobeTensor& t : e.tensors) {
        if (t.io != Io::Input || t.p2pOp.empty()) continue;
        if (!first) {
            first = &t;
            continue;
        }
        if (t.p2pOp != first->p2pOp) return {};
        samePeer &= t.p2pPeer == first->p2pPeer;
        sameTag &= t.p2pTag == first->p2pTag;
    }
    if (!first || (first->p2pOp != "isend" && first->p2pOp != "irecv")) return {};
    std::string s = "P2POp " + first->p2pOp;
    if (samePeer && first->p2pPeer >= 0) s += " peer=" + std::to_string(first->p2pPeer);
    if (sameTag && first->p2pTag >= 0) s += " tag=" + std::to_string(first->p2pTag);
    return s;
}

}  // namespace

bool MsprobeShard::owns(const std::string& rel) const {
    for (const Dir& d : m_dirs) {
        const std::string prefix = d.rel.empty() ? std::string() : d.rel + "/";
        if (!rel.starts_with(prefix)) continue;
        const std::string rest = rel.substr(prefix.size());
        if (rest == "dump.json" || rest == "stack.json" || rest == "construct.json" || rest == "debug.json" ||
            rest == "dump_error_info.log" || rest == "free_benchmark.csv" || rest.starts_with("dump_tensor_data/"))
            return true;
    }
    return false;
}

void MsprobeShard::collect(const std::string& rootAbs, const std::vector<const ScannedFile*>& files, DumpIndex& out,
                           std::vector<StatsJob>& jobs, std::vector<IndexWarning>& warnings) {
    std::vector<std::string> procs;  // proc{pid} folder names seen, for their stand-in rank numbers
    for (const ScannedFile* f : files) {
        const std::string base = baseOf(f->rel);
        if (base != "dump.json" && base != "debug.json") continue;
        Dir d;
        d.rel = dirOf(f->rel);
        // {dump_path}/step{N}/rank{M}/dump.json; "rank" alone when not distributed, proc{pid} for
        // a single process whose rank msprobe did not know.
        const std::string abs = rootAbs + "/" + d.rel;  // splitPath returns views into it
        bool ranked = false;
        for (std::string_view part : splitPath(abs)) {
            if (auto r = rankFromFolderName(part)) {
                d.rank = *r;
                d.proc.clear();
                ranked = true;
            } else if (isProcFolder(part) && !ranked) {
                d.proc = std::string(part);
            }
            if (auto s = stepFromFolderName(part)) d.step = *s;
        }
        // The rank as the index names it: the dump folder without its step folders, so that
        // step0/rank1 and step1/rank1 are one rank "rank1".
        std::string folder;
        for (std::string_view part : splitPath(d.rel))
            if (!stepFromFolderName(part)) folder += (folder.empty() ? "" : "/") + std::string(part);
        d.rankFolder = folder.empty() && !d.proc.empty() ? d.proc : folder;
        if (!d.proc.empty() && std::find(procs.begin(), procs.end(), d.proc) == procs.end()) procs.push_back(d.proc);
        m_dirs.push_back(d);
    }
    // Processes of unknown rank get stand-in rank numbers 0, 1, ... in the order of their names.
    std::sort(procs.begin(), procs.end());
    for (Dir& d : m_dirs)
        if (!d.proc.empty()) d.rank = std::uint32_t(std::find(procs.begin(), procs.end(), d.proc) - procs.begin());
    for (const Dir& d : m_dirs) readDir(rootAbs, d, files, out, jobs, warnings);
}

void MsprobeShard::readDir(const std::string& rootAbs, const Dir& dir, const std::vector<const ScannedFile*>& files,
                           DumpIndex& out, std::vector<StatsJob>& jobs, std::vector<IndexWarning>& warnings) {
    const std::string base = rootAbs + "/" + (dir.rel.empty() ? std::string() : dir.rel + "/");
    std::string text, error;
    MsprobeDump dump;
    const std::string dumpRel = joinRel(dir.rel, "dump.json");
    if (!readText(base + "dump.json", text) && !readText(base + "debug.json", text)) {
        warnings.push_back({dumpRel, "cannot read dump.json", WarningSeverity::Unreadable});
        return;
    }
    if (!parseMsprobeDumpJson(text, dump, error)) {
        warnings.push_back({dumpRel, error, WarningSeverity::Unreadable});
        return;
    }
    // Task and level, for the report's framework line (the framework itself is each op's net).
    if (out.meta.dumpMode.empty()) out.meta.dumpMode = msprobeDumpMode(dump.task, dump.level);
    std::unordered_map<std::string, std::string> stacks, parents;
    if (readText(base + "stack.json", text) && !parseMsprobeStackJson(text, stacks, error))
        warnings.push_back({joinRel(dir.rel, "stack.json"), error, WarningSeverity::Unreadable});
    if (readText(base + "construct.json", text) && !parseMsprobeConstructJson(text, parents, error))
        warnings.push_back({joinRel(dir.rel, "construct.json"), error, WarningSeverity::Unreadable});
    // Saved tensors present on disk (a crash can leave dump.json and the files out of step).
    std::unordered_map<std::string, const ScannedFile*> saved;
    const std::string dataPrefix = joinRel(dir.rel, "dump_tensor_data/");
    for (const ScannedFile* f : files)
        if (f->rel.starts_with(dataPrefix)) saved.emplace(f->rel.substr(dataPrefix.size()), f);

    // Module chain of a node: root first, '/'-joined; memoised because chains share prefixes.
    std::unordered_map<std::string, StrId> chains;
    auto chainOf = [&](const std::string& node, auto&& self) -> StrId {
        if (auto it = chains.find(node); it != chains.end()) return it->second;
        chains[node] = 0;  // cycle guard
        const auto p = parents.find(node);
        std::string s = p == parents.end() ? node : std::string(out.strings.view(self(p->second, self))) + "/" + node;
        return chains[node] = out.strings.intern(s);
    };

    const StrId net = out.strings.intern(dump.framework);
    const StrId noFormat = out.strings.intern("");
    out.ops.reserve(out.ops.size() + dump.entries.size());
    std::size_t tensorCount = 0;
    for (const MsprobeEntry& e : dump.entries) tensorCount += e.tensors.size();
    out.tensors.reserve(out.tensors.size() + tensorCount);
    out.dims.reserve(out.dims.size() + 4 * tensorCount);
    std::uint32_t pos = 0;
    std::vector<const MsprobeTensor*> order;
    std::string names;
    for (const MsprobeEntry& e : dump.entries) {
        OpRecord op;
        op.type = out.strings.intern(opTypeOf(e));
        op.name = out.strings.intern(e.name);
        op.rank = dir.rank;
        op.iteration = dir.step;
        op.net = net;
        op.execPos = pos++;
        op.firstTensor = std::uint32_t(out.tensors.size());
        op.tensorCount = std::uint32_t(e.tensors.size());
        if (auto s = stacks.find(e.name); s != stacks.end()) op.stack = out.strings.intern(s->second);
        if (auto p = parents.find(e.name); p != parents.end()) {
            op.parent = out.strings.intern(p->second);
            op.scope = chainOf(e.name, chainOf);
        }
        // batch_isend_irecv: its P2POps' direction and peer, where the comm matcher reads them.
        if (const std::string p2p = p2pScopeOf(e); !p2p.empty())
            op.scope = out.strings.intern(op.scope ? std::string(out.strings.view(op.scope)) + "/" + p2p : p2p);
        const auto opIndex = std::uint32_t(out.ops.size());
        // Tensors in the index's order (inputs by slot, then outputs by slot; the walk numbered
        // each io in file order), with msprobe's names for them in the same order.
        order.clear();
        for (int io = 0; io < 2; ++io)
            for (const MsprobeTensor& mt : e.tensors)
                if (int(mt.io) == io) order.push_back(&mt);
        names.clear();
        bool firstOutput = true;
        for (std::size_t k = 0; k < order.size(); ++k) {
            if (order[k]->io == Io::Output && firstOutput) {
                names += '\x1e';
                firstOutput = false;
            } else if (k > 0) {
                names += '\x1f';
            }
            for (char c : order[k]->label) names += c == '\x1e' || c == '\x1f' ? '_' : c;  // keep the separators unique
        }
        if (firstOutput) names += '\x1e';
        op.tensorNames = order.empty() ? 0 : out.strings.intern(names);
        for (const MsprobeTensor* mtp : order) {
            const MsprobeTensor& mt = *mtp;
            TensorRecord t;
            t.op = opIndex;
            t.io = mt.io;
            t.slot = mt.slot;
            t.dtype = mt.dtype;
            t.origDtype = mt.dtype;
            t.format = noFormat;
            t.flags = HasCsvStats;
            out.setStats(t, mt.stats);
            t.shapeOffset = std::uint32_t(out.dims.size());
            t.ndim = std::uint8_t(std::min<std::size_t>(mt.shape.size(), 255));
            out.dims.insert(out.dims.end(), mt.shape.begin(), mt.shape.begin() + t.ndim);
            if (!mt.dataName.empty()) {
                if (auto f = saved.find(mt.dataName); f != saved.end()) {
                    out.editSide(t).file = out.strings.intern(f->second->rel);
                    out.editSide(t).fileSize = f->second->size;
                    out.editSide(t).fileStamp = f->second->stamp;
                    const bool npy = mt.dataName.ends_with(".npy"), pt = mt.dataName.ends_with(".pt");
                    if (npy || pt) {
                        jobs.push_back({std::uint32_t(m_linked.size()), rootAbs + "/" + f->second->rel, f->second->size,
                                        mt.dtype});
                        m_linked.push_back({std::uint32_t(out.tensors.size()), f->second->rel, {}});
                    } else {
                        t.flags |= ListedOnly;  // an unknown payload format: figures from dump.json
                    }
                } else {
                    warnings.push_back({dumpRel,
                                        e.name + ": data_name '" + mt.dataName + "' not found in dump_tensor_data/",
                                        WarningSeverity::Unreadable});
                }
            }
            out.tensors.push_back(t);
        }
        out.ops.push_back(op);
    }
}

void MsprobeShard::apply(const StatsJob& job, StatsJobResult&& result) {
    m_linked[job.draft].result = std::move(result);
}

void MsprobeShard::finish(DumpIndex& out) {
    for (Linked& l : m_linked) {
        TensorRecord& t = out.tensors[l.tensor];
        StatsJobResult& r = l.result;
        if (!r.ok) {
            t.flags |= ReadError;
            out.warnings.push_back({l.rel, r.error.empty() ? "not read" : r.error, WarningSeverity::Unreadable});
            continue;
        }
        t.flags |= HasData;
        if (r.bigEndian) t.flags |= BigEndian;
        if (r.fortranOrder) t.flags |= FortranOrder;
        t.dtype = r.dtype;  // bf16 tensors are saved as float32; origDtype keeps bf16
        out.editSide(t).dataOffset = r.dataOffset;
        out.editSide(t).dataBytes = r.dataBytes;
        out.setStats(t, r.stats);
        if (out.shape(t) != r.shape) {
            out.warnings.push_back(
                {l.rel, "the file's shape differs from dump.json; using the file's", WarningSeverity::Note});
            t.shapeOffset = std::uint32_t(out.dims.size());
            t.ndim = std::uint8_t(std::min<std::size_t>(r.shape.size(), 255));
            out.dims.insert(out.dims.end(), r.shape.begin(), r.shape.begin() + t.ndim);
        }
        if (r.stats.has(stat::Histogram)) {
            out.editSide(t).histOffset = std::uint32_t(out.histBytes.size());
            r.hist.encode(out.histBytes);
            t.flags |= HasHistogram;
        }
    }
}

void MsprobeShard::fillRankInfo(const std::string& shardRel, DumpIndex& out) const {
    for (const Dir& d : m_dirs) {
        // One entry per rank: the shard's generic entry for it (folder = shardRel, from the ops)
        // is renamed; steps of the same rank find the entry already renamed.
        auto it = std::find_if(out.ranks.begin(), out.ranks.end(), [&](const RankInfo& r) {
            return r.rank == d.rank &&
                (r.folder == d.rankFolder || (r.folder == shardRel && r.format != DumpFormat::Msprobe));
        });
        if (it == out.ranks.end()) {
            out.ranks.push_back({});
            it = out.ranks.end() - 1;
            it->rank = d.rank;
        }
        it->folder = d.rankFolder;
        it->format = DumpFormat::Msprobe;
    }
}

}  // namespace dl

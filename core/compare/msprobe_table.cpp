// msprobe's compare table (msprobe_table.h): pairs the dump.json files, builds one row per argument
// of run A with its bench match, lets the generation judge each entry's rows
// (msprobe_table_v8.cpp, msprobe_table_v26.cpp) and writes the CSV.
#include "core/compare/msprobe_table.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <system_error>
#include <tuple>
#include <unordered_map>

#include "core/compare/msprobe_dump_files.h"
#include "core/compare/msprobe_table_row.h"
#include "core/compare/msprobe_table_text.h"
#include "core/formats/msprobe/msprobe_dump.h"
#include "core/index/dump_layout.h"
#include "core/util/read_file.h"

namespace dl {

namespace msprobe_table {

std::string statText(const MsprobeValue& v) {
    if (v.kind == MsprobeValue::Kind::Float && std::isnan(v.number)) return kNan;
    return v.text;
}

}  // namespace msprobe_table

namespace {

namespace fs = std::filesystem;
using namespace msprobe_table;
using msprobe_text::csvCell;
using msprobe_text::pyList;
using DumpFile = MsprobeDumpFile;

// msprobe core/common/const.py, CompareConst: the header columns and the texts it writes.
const std::vector<std::string> kBasicInfo = {"NPU Name",          "Bench Name",         "NPU Dtype",
                                             "Bench Dtype",       "NPU Tensor Shape",   "Bench Tensor Shape",
                                             "NPU Requires_grad", "Bench Requires_grad"};
const std::vector<std::string> kAllCompareIndex = {
    "Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio", "Five Thousandths Err Ratio"};
const std::vector<std::string> kSummaryCompareIndex = {"Max diff",        "Min diff",       "Mean diff",
                                                       "L2norm diff",     "MaxRelativeErr", "MinRelativeErr",
                                                       "MeanRelativeErr", "NormRelativeErr"};
const std::vector<std::string> kSummaryInfo = {"NPU max",   "NPU min",   "NPU mean",   "NPU l2norm",
                                               "Bench max", "Bench min", "Bench mean", "Bench l2norm"};

// (rank, step, entry name) -> op, as the msprobe shard names ops.
using OpKey = std::tuple<std::uint32_t, std::uint32_t, StrId>;
std::map<OpKey, std::uint32_t> opMap(const DumpIndex& idx) {
    std::map<OpKey, std::uint32_t> m;
    for (std::uint32_t i = 0; i < idx.ops.size(); ++i)
        m.emplace(OpKey{idx.ops[i].rank, idx.ops[i].iteration, idx.ops[i].name}, i);
    return m;
}

const TensorRecord* findTensor(const DumpIndex& idx, const std::map<OpKey, std::uint32_t>& ops, const DumpFile& f,
                               const MsprobeEntry& e, const MsprobeTensor& mt) {
    const StrId name = idx.strings.find(e.name);
    const auto op = ops.find({f.rank, f.step, name});
    if (op == ops.end()) return nullptr;
    const OpRecord& o = idx.ops[op->second];
    for (std::uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t)
        if (idx.tensors[t].io == mt.io && idx.tensors[t].slot == mt.slot) return &idx.tensors[t];
    return nullptr;
}

// DTYPE_MATCH_GROUPS: equal dtypes, or both in one of msprobe's float groups.
bool dtypesMatch(const std::string& x, const std::string& y) {
    if (x == y) return true;
    auto in = [](const std::string& d, std::initializer_list<const char*> g) {
        return std::any_of(g.begin(), g.end(), [&](const char* s) { return d == s; });
    };
    return (in(x, {"Float16", "Float32", "BFloat16"}) && in(y, {"Float16", "Float32", "BFloat16"})) ||
        (in(x, {"torch.float16", "torch.float32", "torch.bfloat16"}) &&
         in(y, {"torch.float16", "torch.float32", "torch.bfloat16"}));
}

std::string fullName(const MsprobeEntry& e, const MsprobeArg& a) {
    return a.label.empty() ? e.name : e.name + "." + a.label;
}

struct Side {
    const DumpIndex& idx;
    std::map<OpKey, std::uint32_t> ops;
};

ArgData argData(const Side& s, const DumpFile& f, const MsprobeEntry& e, const MsprobeArg& a) {
    return {&s.idx, a.tensor >= 0 ? findTensor(s.idx, s.ops, f, e, e.tensors[std::size_t(a.tensor)]) : nullptr};
}

// A float statistic as 26.x's CSV holds it: pandas writes a float inf as " inf" (its Excel guard).
std::string statCellV26(const MsprobeValue& v) {
    if (v.kind == MsprobeValue::Kind::Float && std::isinf(v.number)) return v.number > 0 ? " inf" : " -inf";
    return statText(v);
}
std::string metricCellV26(const std::string& c) { return c == "inf" || c == "-inf" ? " " + c : c; }

MsprobeTableMode modeOf(const MsprobeDump& d) {
    if (d.task == "tensor") return MsprobeTableMode::Tensor;
    for (const MsprobeEntry& e : d.entries)
        for (const MsprobeTensor& t : e.tensors)
            if (!t.md5.empty()) return MsprobeTableMode::Md5;
    return MsprobeTableMode::Statistics;
}

// NPU_Stack_Info of an entry's first row: str() of its frame list; N/A when stack.json lacks it (msprobe's None after
// fillna).
std::string stackCell(const std::unordered_map<std::string, std::vector<std::string>>& stacks,
                      const std::string& entry) {
    const auto it = stacks.find(entry);
    return it == stacks.end() ? std::string(kNA) : pyList(it->second);
}

}  // namespace

const char* msprobeTableModeName(MsprobeTableMode m) {
    return m == MsprobeTableMode::Tensor ? "tensor" : m == MsprobeTableMode::Md5 ? "md5" : "statistics";
}

const char* msprobeGenerationName(MsprobeGeneration g) { return g == MsprobeGeneration::V8_3 ? "8.3" : "26"; }

bool parseMsprobeGeneration(std::string_view text, MsprobeGeneration& out) {
    const std::size_t dot = text.find('.');
    const std::string_view major = text.substr(0, dot);
    if (major == "26") {
        out = MsprobeGeneration::V26;
        return true;
    }
    if (major == "8" && (dot == std::string_view::npos || text.substr(dot + 1).substr(0, 1) <= "3")) {
        out = MsprobeGeneration::V8_3;
        return true;
    }
    return false;
}

std::vector<std::string> msprobeTableHeader(MsprobeTableMode mode, bool stack, MsprobeGeneration g) {
    const bool v26 = g == MsprobeGeneration::V26;
    std::vector<std::string> h = kBasicInfo;
    auto add = [&](const std::vector<std::string>& v) { h.insert(h.end(), v.begin(), v.end()); };
    if (mode == MsprobeTableMode::Tensor) {
        add(kAllCompareIndex);
        add(kSummaryInfo);
        add({"Requires_grad Consistent", v26 ? "Result" : "Accuracy Reached or Not", "Err_message"});
    } else if (mode == MsprobeTableMode::Statistics) {
        add(kSummaryCompareIndex);
        add(kSummaryInfo);
        add({"Requires_grad Consistent", "Result", "Err_message"});
    } else {
        add({"NPU MD5", "BENCH MD5", "Requires_grad Consistent", "Result"});
        if (v26) h.push_back("Err_message");
    }
    if (stack) h.push_back("NPU_Stack_Info");
    if (mode == MsprobeTableMode::Tensor) h.push_back("Data_name");
    return h;
}

bool writeMsprobeTableCsv(const DumpIndex& a, const DumpIndex& b, const MsprobeTableOptions& options, std::string& out,
                          MsprobeTableReport& report, std::string& error) {
    const IterationChoice& iterations = options.iterations;
    const MsprobeGeneration gen = options.generation;
    const bool v26 = gen == MsprobeGeneration::V26;
    report.generation = gen;
    std::string listError;
    const std::vector<DumpFile> filesA = msprobeDumpFiles(a, listError), filesB = msprobeDumpFiles(b, listError);
    if (!listError.empty()) {
        error = listError;
        return false;
    }
    if (filesA.empty() || filesB.empty()) {
        error = std::string("--format msprobe-csv needs two msprobe dumps: no dump.json under ") +
            (filesA.empty() ? a.root : b.root);
        return false;
    }
    // Pair the files: by rank, then by step (the chosen ones, the shared ones, or k-th with k-th).
    std::vector<std::pair<const DumpFile*, const DumpFile*>> pairs;
    std::map<std::uint32_t, std::vector<const DumpFile*>> byRankA, byRankB;
    for (const DumpFile& f : filesA) byRankA[f.rank].push_back(&f);
    for (const DumpFile& f : filesB) byRankB[f.rank].push_back(&f);
    for (const auto& [rank, fa] : byRankA) {
        const auto itB = byRankB.find(rank);
        if (itB == byRankB.end()) {
            report.warnings.push_back("rank " + std::to_string(rank) + " of run A has no dump.json in run B");
            continue;
        }
        const auto& fb = itB->second;
        auto stepIn = [](const std::vector<const DumpFile*>& v, std::uint32_t s) -> const DumpFile* {
            for (const DumpFile* f : v)
                if (f->step == s) return f;
            return nullptr;
        };
        if (iterations.a || iterations.b) {
            const std::uint32_t sa = iterations.a.value_or(*iterations.b), sb = iterations.b.value_or(*iterations.a);
            const DumpFile *x = stepIn(fa, sa), *y = stepIn(fb, sb);
            if (x && y) pairs.emplace_back(x, y);
            continue;
        }
        bool shared = false;
        for (const DumpFile* x : fa)
            if (const DumpFile* y = stepIn(fb, x->step)) {
                pairs.emplace_back(x, y);
                shared = true;
            }
        if (!shared) {
            for (std::size_t k = 0; k < std::min(fa.size(), fb.size()); ++k) pairs.emplace_back(fa[k], fb[k]);
            report.warnings.push_back("rank " + std::to_string(rank) + ": the runs share no step; step " +
                                      std::to_string(fa[0]->step) + " of run A is compared with step " +
                                      std::to_string(fb[0]->step) + " of run B, by name");
        }
    }
    if (pairs.empty()) {
        error = "no dump.json of run A pairs with one of run B (ranks and steps differ)";
        return false;
    }
    const Side sa{a, opMap(a)}, sb{b, opMap(b)};
    bool first = true;
    for (const auto& [fa, fb] : pairs) {
        MsprobeDump da, db;
        const std::string pa = (fa->dir / "dump.json").string(), pb = (fb->dir / "dump.json").string();
        if (!readMsprobeDumpJson(pa, da, error, true)) {
            error = pa + ": " + error;
            return false;
        }
        if (!readMsprobeDumpJson(pb, db, error, true)) {
            error = pb + ": " + error;
            return false;
        }
        const MsprobeTableMode mode = modeOf(da);
        std::unordered_map<std::string, std::vector<std::string>> stacks;
        std::error_code ec;
        const bool hasStack = fs::is_regular_file(fa->dir / "stack.json", ec);
        if (hasStack) {
            std::string text, e;
            if (!readFileText((fa->dir / "stack.json").string(), text, e) || !parseMsprobeStackFrames(text, stacks, e))
                report.warnings.push_back((fa->dir / "stack.json").string() + ": " + e);
        }
        if (first) {
            report.mode = mode;
            report.stack = hasStack;
            const std::vector<std::string> header = msprobeTableHeader(mode, hasStack, gen);
            for (std::size_t i = 0; i < header.size(); ++i) out += (i ? "," : "") + csvCell(header[i]);
            out += '\n';
            first = false;
        } else if (mode != report.mode || hasStack != report.stack) {
            report.warnings.push_back(pa + ": skipped, its mode or stack.json differs from the first dump.json's");
            continue;
        }
        if (modeOf(db) != mode)
            report.warnings.push_back(pb + ": its dump mode (" + msprobeTableModeName(modeOf(db)) +
                                      ") differs from run A's (" + msprobeTableModeName(mode) + ")");
        // Run B's arguments by (name, shape): msprobe merges on both.
        std::unordered_map<std::string, std::pair<const MsprobeEntry*, const MsprobeArg*>> bench;
        for (const MsprobeEntry& e : db.entries)
            for (const MsprobeArg& x : e.args) bench.try_emplace(fullName(e, x) + '\x1f' + x.shape, &e, &x);
        std::vector<Row> rows;
        std::vector<const MsprobeEntry*> benchEntry;
        for (const MsprobeEntry& e : da.entries) {
            rows.clear();
            benchEntry.clear();
            for (const MsprobeArg& n : e.args) {
                Row r;
                r.npu = &n;
                r.name = fullName(e, n);
                const auto it = bench.find(r.name + '\x1f' + n.shape);
                if (it != bench.end() && dtypesMatch(n.dtype, it->second.second->dtype))
                    r.bench = it->second.second;  // gen_dtype_condition
                benchEntry.push_back(r.bench ? it->second.first : nullptr);
                report.matched += r.bench != nullptr;
                r.reqA = n.requiresGrad.empty() ? kNA : n.requiresGrad;
                r.reqB = !r.bench || r.bench->requiresGrad.empty() ? kNA : r.bench->requiresGrad;
                r.reqConsistent = r.reqA == r.reqB;
                if (mode == MsprobeTableMode::Tensor)
                    tensorCells(gen, n, r.bench, argData(sa, *fa, e, n),
                                r.bench ? argData(sb, *fb, *benchEntry.back(), *r.bench) : ArgData{}, r);
                rows.push_back(std::move(r));
            }
            if (v26)
                judgeEntryV26(rows, mode);
            else
                judgeEntryV8(rows, mode, options.highlight);
            for (std::size_t k = 0; k < rows.size(); ++k) {
                const Row& r = rows[k];
                const MsprobeArg& n = *r.npu;
                const MsprobeArg* bm = r.bench;
                std::vector<std::string> c = {r.name,  bm ? fullName(*benchEntry[k], *bm) : kNA,
                                              n.dtype, bm ? bm->dtype : kNA,
                                              n.shape, bm ? bm->shape : kNA,
                                              r.reqA,  r.reqB};
                auto stats = [&](const MsprobeArg* x) {
                    for (int s = 0; s < 4; ++s)
                        c.push_back(!x ? kNA : v26 ? statCellV26(x->stats[s]) : statText(x->stats[s]));
                };
                const std::string consistent = r.reqConsistent ? "True" : "False";
                if (mode == MsprobeTableMode::Md5) {
                    // None arguments carry no md5: N/A, as both generations write it.
                    c.push_back(n.md5.empty() ? kNA : n.md5);
                    c.push_back(!bm || bm->md5.empty() ? kNA : bm->md5);
                    c.push_back(consistent);
                    c.push_back(r.result);
                    if (v26) c.push_back(r.err);
                } else if (mode == MsprobeTableMode::Statistics) {
                    c.insert(c.end(), std::begin(r.diff), std::end(r.diff));
                    c.insert(c.end(), std::begin(r.rel), std::end(r.rel));
                    stats(&n);
                    stats(bm);
                    c.insert(c.end(), {consistent, r.result, r.err});
                } else {
                    for (const std::string& m : r.metrics) c.push_back(v26 ? metricCellV26(m) : m);
                    stats(&n);
                    stats(bm);
                    c.insert(c.end(), {consistent, r.result, r.err});
                }
                // The stack on an entry's first row; msprobe's None on the others reads N/A after its fillna.
                if (hasStack) c.push_back(k == 0 ? stackCell(stacks, e.name) : kNA);
                if (mode == MsprobeTableMode::Tensor) c.push_back(pyList({n.dataName, bm ? bm->dataName : kNA}));
                for (std::size_t i = 0; i < c.size(); ++i) {
                    if (i) out += ',';
                    out += csvCell(c[i]);
                }
                out += '\n';
                ++report.rows;
            }
        }
    }
    return true;
}

}  // namespace dl

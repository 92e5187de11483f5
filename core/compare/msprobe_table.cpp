#include "core/compare/msprobe_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <system_error>
#include <tuple>
#include <unordered_map>

#include "core/compare/tensor_metrics.h"
#include "core/index/dump_layout.h"
#include "core/index/tensor_location.h"
#include "core/formats/msprobe/msprobe_dump.h"
#include "core/io/npy_file.h"
#include "core/util/read_file.h"

namespace dl {

namespace {

namespace fs = std::filesystem;

// msprobe core/common/const.py, CompareConst: the header columns and the texts it writes.
const std::vector<std::string> kBasicInfo = {"NPU Name", "Bench Name", "NPU Dtype", "Bench Dtype",
                                             "NPU Tensor Shape", "Bench Tensor Shape", "NPU Requires_grad",
                                             "Bench Requires_grad"};
const std::vector<std::string> kAllCompareIndex = {"Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr",
                                                   "One Thousandth Err Ratio", "Five Thousandths Err Ratio"};
const std::vector<std::string> kSummaryCompareIndex = {"Max diff", "Min diff", "Mean diff", "L2norm diff",
                                                       "MaxRelativeErr", "MinRelativeErr", "MeanRelativeErr",
                                                       "NormRelativeErr"};
const std::vector<std::string> kSummaryInfo = {"NPU max", "NPU min", "NPU mean", "NPU l2norm",
                                               "Bench max", "Bench min", "Bench mean", "Bench l2norm"};
constexpr const char* kNA = "N/A";
constexpr const char* kNan = "Nan";
constexpr const char* kUnsupported = "unsupported";
constexpr const char* kNoBench = "No bench data matched.";

struct DumpFile {
    std::uint32_t rank = 0, step = 0;
    fs::path dir;
};

// Every dump.json under the run's root (dump_tensor_data folders skipped), ordered by rank, step.
std::vector<DumpFile> dumpFiles(const DumpIndex& idx, std::string& error) {
    std::vector<DumpFile> out;
    std::error_code ec;
    fs::path root(idx.root);
    if (fs::is_regular_file(root, ec)) root = root.parent_path();
    auto add = [&](const fs::path& dir) {
        DumpFile f;
        f.dir = dir;
        const std::string dirText = dir.string();   // the parts are views into it
        for (std::string_view part : splitPath(dirText)) {
            if (auto r = rankFromFolderName(part)) f.rank = *r;
            if (auto s = stepFromFolderName(part)) f.step = *s;
        }
        out.push_back(std::move(f));
    };
    if (fs::is_regular_file(root / "dump.json", ec)) add(root);
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        if (it->is_directory(ec) && it->path().filename() == "dump_tensor_data") {
            it.disable_recursion_pending();
            continue;
        }
        if (it->path().filename() == "dump.json" && it->path().parent_path() != root) add(it->path().parent_path());
    }
    if (ec) error = "cannot list " + root.string() + ": " + ec.message();
    std::sort(out.begin(), out.end(), [](const DumpFile& x, const DumpFile& y) { return std::tie(x.rank, x.step) < std::tie(y.rank, y.step); });
    return out;
}

// (rank, step, entry name) -> op, as the msprobe shard names ops.
using OpKey = std::tuple<std::uint32_t, std::uint32_t, StrId>;
std::map<OpKey, std::uint32_t> opMap(const DumpIndex& idx) {
    std::map<OpKey, std::uint32_t> m;
    for (std::uint32_t i = 0; i < idx.ops.size(); ++i) m.emplace(OpKey{idx.ops[i].rank, idx.ops[i].iteration, idx.ops[i].name}, i);
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

std::string csvCell(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
}

// Python's float() of a cell, as check_accuracy calls it (accepts "nan", "inf", numbers).
std::optional<double> pyFloat(const std::string& s) {
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return std::nullopt;
    return v;
}

// msprobe's format_value: float('{:.12f}'.format(v)).
std::string formatValue(double v) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.12f", v);
    return pythonFloatText(std::strtod(buf, nullptr));
}

// GetCosineSimilarity.correct_data: above 0.9999 the cosine is rounded to 6 decimals.
std::string cosineText(double cos) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.12f", cos);
    double v = std::strtod(buf, nullptr);
    if (v > 0.9999) {
        std::snprintf(buf, sizeof buf, "%.6f", v);
        v = std::strtod(buf, nullptr);
    }
    return pythonFloatText(v);
}

// multiprocessing_compute.py check_accuracy.
std::string checkAccuracy(const std::string& cos, const std::string& maxAbs) {
    if (cos == "shape unmatched") return "Unmatched";
    if (cos == "None" || maxAbs == "None") return "None";
    if (cos == kNA || maxAbs == kNA) return "No";
    const auto c = pyFloat(cos), m = pyFloat(maxAbs);
    if (!c || !m) return "None";
    if (*c < 0.99 && *m > 0.001) return "No";
    if (*c < 0.9 || *m > 1) return "No";
    return "Yes";
}

// The statistic as the table shows it (set_summary: NaN reads "Nan").
std::string statText(const MsprobeValue& v) {
    if (v.kind == MsprobeValue::Kind::Float && std::isnan(v.number)) return kNan;
    return v.text;
}

// CalcStatsDiff.calc_summary_diff (acc_compare.py): value classes and the diff rules between them.
enum class ValType { Num, Nan, Inf, NegInf, NA, Other };
ValType classify(const MsprobeValue& v, bool na) {
    if (na) return ValType::NA;
    if (v.kind == MsprobeValue::Kind::Int || v.kind == MsprobeValue::Kind::Float) {
        if (std::isnan(v.number)) return ValType::Nan;
        if (std::isinf(v.number)) return v.number > 0 ? ValType::Inf : ValType::NegInf;
        return ValType::Num;
    }
    // Text: "nan"/"inf" spelled out count as those; anything else (None, True, strings) is other.
    if (v.text == "nan" || v.text == "Nan" || v.text == "NaN") return ValType::Nan;
    if (v.text == "inf") return ValType::Inf;
    if (v.text == "-inf") return ValType::NegInf;
    return ValType::Other;
}

std::pair<std::string, std::string> statDiff(const MsprobeValue& n, const MsprobeValue& b, bool noBench) {
    if (noBench) return {kNA, kNA};
    if (statText(n) == statText(b)) return {"0", "0"};
    const ValType tn = classify(n, false), tb = classify(b, false);
    if (tn == ValType::Num && tb == ValType::Num) {
        const double diff = n.number - b.number;
        if (b.number == 0) return {pythonFloatText(diff), "inf"};
        return {pythonFloatText(diff), pythonFloatText(std::fabs(diff / b.number * 100)) + "%"};
    }
    if (tn == ValType::Other || tb == ValType::Other) return {"Different", "Different"};
    if (tn == ValType::Nan || tb == ValType::Nan) return {kNan, kNan};
    if (tn == ValType::Inf || tb == ValType::NegInf) return {"inf", "inf"};
    return {"-inf", "-inf"};   // -inf on the left, or inf on the right
}

// The highlight messages (highlight.py): red rows (overflow, huge max diff, input/output rules)
// and yellow rows (magnitude jump, ratio or cosine drop, requires_grad).
struct Highlight {
    bool red = false, yellow = false;
    std::vector<std::string> redMsgs, yellowMsgs;
};

struct Row {
    std::vector<std::string> cells;
    MsprobeArgState state = MsprobeArgState::Input;
    // For the highlight rules: numbers where the cell holds a Python number.
    std::optional<double> npuMax, benchMax, maxDiff, oneThousandth, cosine, maxRelErr;
    bool overflow = false, reqGradConsistent = true;
    std::string errBase;
    Highlight hl;
};

void highlightRows(std::vector<Row>& rows, MsprobeTableMode mode) {
    if (mode == MsprobeTableMode::Md5) return;
    for (Row& r : rows) {
        if (r.overflow) {
            r.hl.red = true;
            r.hl.redMsgs.push_back("maximum or minimum is nan, -inf, or inf");
        } else if (r.maxDiff && std::fabs(*r.maxDiff) > 1e10) {
            r.hl.red = true;
            r.hl.redMsgs.push_back("maximum absolute error exceeds 1e+10");
        }
    }
    std::vector<Row*> inputs;
    for (Row& r : rows)
        if (r.state == MsprobeArgState::Input || r.state == MsprobeArgState::Parameters) inputs.push_back(&r);
    for (Row& out : rows) {
        if (out.state != MsprobeArgState::Output || out.hl.red) continue;
        if (!out.npuMax || !out.benchMax || !out.maxDiff) continue;
        for (Row* in : inputs) {
            if (!in->npuMax || !in->benchMax || !in->maxDiff) continue;
            const double dIn = std::fabs(*in->maxDiff), dOut = std::fabs(*out.maxDiff);
            if (!(dIn > dOut || dIn <= 1 || dOut <= 1) && std::log10(dOut) - std::log10(dIn) >= 1) {
                out.hl.yellow = true;
                out.hl.yellowMsgs.push_back("maximum absolute error of both input/parameters and output exceed 1, "
                                            "with the output larger by an order of magnitude");
            }
            if (mode == MsprobeTableMode::Tensor) {
                if (in->oneThousandth && out.oneThousandth) {
                    if (*in->oneThousandth > 0.9 && *out.oneThousandth < 0.6) {
                        out.hl.red = true;
                        out.hl.redMsgs.push_back("The input/parameter's one thousandth err ratio exceeds 0.9, "
                                                 "while the output's is below 0.6");
                    } else if (*in->oneThousandth - *out.oneThousandth > 0.1) {
                        out.hl.yellow = true;
                        out.hl.yellowMsgs.push_back("The output's one thousandth err ratio decreases by more than 0.1 "
                                                    "compared to the input/parameter's");
                    }
                }
                if (in->cosine && out.cosine && *in->cosine - *out.cosine > 0.1) {
                    out.hl.yellow = true;
                    out.hl.yellowMsgs.push_back("The output's cosine decreases by more than 0.1 compared to the "
                                                "input/parameter's");
                }
            } else if (out.maxRelErr) {
                if (*out.maxRelErr > 0.5) {
                    out.hl.red = true;
                    out.hl.redMsgs.push_back("maximum relative error exceeds 0.5");
                }
                if (in->maxRelErr && *out.maxRelErr > 0.1 && *in->maxRelErr < 0.01) {
                    out.hl.yellow = true;
                    out.hl.yellowMsgs.push_back("The output's maximum relative error exceeds 0.1, while the "
                                                "input/parameter's is below 0.01");
                }
            }
        }
    }
    for (Row& r : rows)
        if (!r.reqGradConsistent) {
            r.hl.yellow = true;
            r.hl.yellowMsgs.push_back("requires_grad is inconsistent");
        }
}

// update_highlight_err_msg: red messages always, yellow ones only on rows that are not red.
std::string finalErr(const Row& r) {
    std::string s = r.errBase;
    auto add = [&](const std::vector<std::string>& msgs) {
        for (const std::string& m : msgs) s += s.empty() ? m : "\n" + m;
    };
    add(r.hl.redMsgs);
    if (!r.hl.red) add(r.hl.yellowMsgs);
    return s;
}

std::string pyList(const std::vector<std::string>& items) {
    std::string s = "[";
    for (std::size_t i = 0; i < items.size(); ++i) s += (i ? ", '" : "'") + items[i] + "'";
    return s + "]";
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

std::string fullName(const MsprobeEntry& e, const MsprobeArg& a) { return a.label.empty() ? e.name : e.name + "." + a.label; }

struct Side {
    const DumpIndex& idx;
    std::map<OpKey, std::uint32_t> ops;
};

// The data metrics cells of one matched tensor pair (multiprocessing_compute.py compare_by_op,
// npy_compare.py get_error_flag_and_msg / compare_ops_apply): six metric cells and the message.
void tensorMetrics(const Side& sa, const Side& sb, const DumpFile& fa, const DumpFile& fb, const MsprobeEntry& ea,
                   const MsprobeEntry& eb, const MsprobeArg& na, const MsprobeArg* nb, std::vector<std::string>& cells,
                   std::string& err) {
    cells.assign(6, kNA);
    if (!nb) {
        err += "Bench api/module unmatched.";
        return;
    }
    // int/float/None arguments carry no data file; msprobe 8.3.3 marks their metric cells
    // "unsupported" (not N/A), as the real tables in tests/data/real/msprobe show.
    if (na.dataName == "-1") {
        cells.assign(6, kUnsupported);
        err += "NPU does not have data file.";
        return;
    }
    if (nb->dataName == "-1") {
        cells.assign(6, kUnsupported);
        err += "Bench does not have data file.";
        return;
    }
    const TensorRecord* ta = na.tensor >= 0 ? findTensor(sa.idx, sa.ops, fa, ea, ea.tensors[std::size_t(na.tensor)]) : nullptr;
    const TensorRecord* tb = nb->tensor >= 0 ? findTensor(sb.idx, sb.ops, fb, eb, eb.tensors[std::size_t(nb->tensor)]) : nullptr;
    std::vector<float> va, vb;
    std::string why;
    auto load = [&](const DumpIndex& idx, const TensorRecord* t, std::vector<float>& v) {
        if (!t || !(t->flags & HasData) || !tensorDataReachable(idx, *t, why)) return false;
        std::uint64_t n = 1;
        for (std::uint32_t d = 0; d < t->ndim; ++d) n *= std::uint64_t(std::max<std::int64_t>(0, idx.dims[t->shapeOffset + d]));
        return loadTensorAsFloat(tensorDataPath(idx, *t), idx.side(*t).dataOffset, n, t->dtype, (t->flags & BigEndian) != 0, v, why);
    };
    if (!load(sa.idx, ta, va) || !load(sb.idx, tb, vb)) {
        cells.assign(6, kUnsupported);
        err += "Dump file: " + pyList({na.dataName, nb->dataName}) + " not found.";
        return;
    }
    if (va.empty()) {
        cells.assign(6, "0");
        err += "This is empty data, can not compare.";
        return;
    }
    const bool zeroDim = ta->ndim == 0;
    TensorMetrics m;
    computeDataMetrics(va.data(), vb.data(), std::min(va.size(), vb.size()), zeroDim, m);
    if (m.nanInfMismatch) {
        err += "The position of inf or nan in NPU and bench Tensor do not match.";
        return;   // every metric N/A
    }
    if (zeroDim)
        err += "This is type of 0-d tensor, can not calculate 'Cosine', 'EucDist', 'One Thousandth Err Ratio' and "
               "'Five Thousandths Err Ratio'. ";
    else if (ta->dtype != tb->dtype)
        err += "Dtype of NPU and bench tensor do not match.";
    // Cosine and its messages.
    if (zeroDim) {
        cells[0] = kUnsupported;
    } else if (va.size() == 1) {
        cells[0] = kUnsupported;
        err += "This is a 1-d tensor of length 1.";
    } else if (std::isnan(m.cosine)) {
        double na2 = 0, nb2 = 0;
        for (std::size_t i = 0; i < va.size(); ++i) {
            const double x = std::isfinite(va[i]) ? va[i] : 0, y = std::isfinite(vb[i]) ? vb[i] : 0;
            na2 += x * x, nb2 += y * y;
        }
        cells[0] = kNan;
        if (std::sqrt(na2) <= 2.220446049250313e-16) err += "Cannot compare by Cosine Similarity, All the data is Zero in npu dump data.";
        else if (std::sqrt(nb2) <= 2.220446049250313e-16) err += "Cannot compare by Cosine Similarity, All the data is Zero in Bench dump data.";
        else err += "Cannot compare by Cosine Similarity, the dump data has NaN.";
    } else {
        cells[0] = cosineText(m.cosine);
    }
    cells[1] = zeroDim ? kUnsupported : formatValue(m.eucDist);
    cells[2] = formatValue(m.maxAbsErr);
    cells[3] = formatValue(m.maxRelErr);
    cells[4] = zeroDim ? kUnsupported : formatValue(m.oneThousandthRatio);
    cells[5] = zeroDim ? kUnsupported : formatValue(m.fiveThousandthRatio);
}

MsprobeTableMode modeOf(const MsprobeDump& d) {
    if (d.task == "tensor") return MsprobeTableMode::Tensor;
    for (const MsprobeEntry& e : d.entries)
        for (const MsprobeTensor& t : e.tensors)
            if (!t.md5.empty()) return MsprobeTableMode::Md5;
    return MsprobeTableMode::Statistics;
}

std::string stackCell(const std::unordered_map<std::string, std::string>& stacks, const std::string& entry) {
    const auto it = stacks.find(entry);
    if (it == stacks.end()) return "None";
    std::vector<std::string> frames;
    for (std::size_t p = 0; p <= it->second.size();) {
        const std::size_t e = std::min(it->second.find('\n', p), it->second.size());
        frames.push_back(it->second.substr(p, e - p));
        p = e + 1;
    }
    return pyList(frames);
}

}  // namespace

const char* msprobeTableModeName(MsprobeTableMode m) {
    return m == MsprobeTableMode::Tensor ? "tensor" : m == MsprobeTableMode::Md5 ? "md5" : "statistics";
}

std::vector<std::string> msprobeTableHeader(MsprobeTableMode mode, bool stack) {
    std::vector<std::string> h = kBasicInfo;
    auto add = [&](const std::vector<std::string>& v) { h.insert(h.end(), v.begin(), v.end()); };
    if (mode == MsprobeTableMode::Tensor) {
        add(kAllCompareIndex);
        add(kSummaryInfo);
        add({"Requires_grad Consistent", "Accuracy Reached or Not", "Err_message"});
    } else if (mode == MsprobeTableMode::Statistics) {
        add(kSummaryCompareIndex);
        add(kSummaryInfo);
        add({"Requires_grad Consistent", "Result", "Err_message"});
    } else {
        add({"NPU MD5", "BENCH MD5", "Requires_grad Consistent", "Result"});
    }
    if (stack) h.push_back("NPU_Stack_Info");
    if (mode == MsprobeTableMode::Tensor) h.push_back("Data_name");
    return h;
}

bool writeMsprobeTableCsv(const DumpIndex& a, const DumpIndex& b, const IterationChoice& iterations, std::string& out,
                          MsprobeTableReport& report, std::string& error) {
    std::string listError;
    const std::vector<DumpFile> filesA = dumpFiles(a, listError), filesB = dumpFiles(b, listError);
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
        std::unordered_map<std::string, std::string> stacks;
        std::error_code ec;
        const bool hasStack = fs::is_regular_file(fa->dir / "stack.json", ec);
        if (hasStack) {
            std::string text, e;
            if (!readFileText((fa->dir / "stack.json").string(), text, e) || !parseMsprobeStackJson(text, stacks, e))
                report.warnings.push_back((fa->dir / "stack.json").string() + ": " + e);
        }
        if (first) {
            report.mode = mode;
            report.stack = hasStack;
            const std::vector<std::string> header = msprobeTableHeader(mode, hasStack);
            for (std::size_t i = 0; i < header.size(); ++i) out += (i ? "," : "") + csvCell(header[i]);
            out += '\n';
            first = false;
        } else if (mode != report.mode || hasStack != report.stack) {
            report.warnings.push_back(pa + ": skipped, its mode or stack.json differs from the first dump.json's");
            continue;
        }
        if (modeOf(db) != mode)
            report.warnings.push_back(pb + ": its dump mode (" + msprobeTableModeName(modeOf(db)) + ") differs from run A's (" +
                                      msprobeTableModeName(mode) + ")");
        // Run B's arguments by (name, shape): msprobe merges on both.
        std::unordered_map<std::string, std::pair<const MsprobeEntry*, const MsprobeArg*>> bench;
        for (const MsprobeEntry& e : db.entries)
            for (const MsprobeArg& x : e.args) bench.try_emplace(fullName(e, x) + '\x1f' + x.shape, &e, &x);
        for (const MsprobeEntry& e : da.entries) {
            std::vector<Row> rows;
            rows.reserve(e.args.size());
            for (std::size_t k = 0; k < e.args.size(); ++k) {
                const MsprobeArg& n = e.args[k];
                const std::string name = fullName(e, n);
                const auto it = bench.find(name + '\x1f' + n.shape);
                const MsprobeEntry* eb = it == bench.end() ? nullptr : it->second.first;
                const MsprobeArg* bm = it == bench.end() ? nullptr : it->second.second;
                if (bm && !dtypesMatch(n.dtype, bm->dtype)) bm = nullptr, eb = nullptr;   // gen_dtype_condition
                const bool noBench = !bm;
                report.matched += !noBench;
                Row r;
                r.state = n.state;
                const std::string reqA = n.requiresGrad.empty() ? kNA : n.requiresGrad;
                const std::string reqB = noBench ? kNA : bm->requiresGrad.empty() ? kNA : bm->requiresGrad;
                r.reqGradConsistent = reqA == reqB;
                auto& c = r.cells;
                c = {name, noBench ? kNA : fullName(*eb, *bm), n.dtype, noBench ? kNA : bm->dtype, n.shape,
                     noBench ? kNA : bm->shape, reqA, reqB};
                std::vector<std::string> npuStats(4), benchStats(4, kNA);
                for (int s = 0; s < 4; ++s) {
                    npuStats[std::size_t(s)] = statText(n.stats[s]);
                    if (!noBench) benchStats[std::size_t(s)] = statText(bm->stats[s]);
                }
                auto number = [](const MsprobeValue& v) -> std::optional<double> {
                    if (v.numeric() && !std::isnan(v.number)) return v.number;
                    return std::nullopt;
                };
                r.npuMax = number(n.stats[0]);
                if (!noBench) r.benchMax = number(bm->stats[0]);
                r.overflow = npuStats[0] == "inf" || npuStats[0] == "-inf" || npuStats[1] == "inf" || npuStats[1] == "-inf";
                if (mode == MsprobeTableMode::Md5) {
                    // None arguments carry no md5; msprobe 8.3.3 writes N/A there (real md5_L1 tables).
                    c.push_back(n.md5.empty() ? kNA : n.md5);
                    c.push_back(noBench || bm->md5.empty() ? kNA : bm->md5);
                    c.push_back(r.reqGradConsistent ? "True" : "False");
                    c.push_back(noBench ? kNA : n.md5 == bm->md5 ? "pass" : "Different");
                } else if (mode == MsprobeTableMode::Statistics) {
                    std::string rel[4];
                    for (int s = 0; s < 4; ++s) {
                        auto [d, rr] = statDiff(n.stats[s], noBench ? MsprobeValue{} : bm->stats[s], noBench);
                        c.push_back(d);
                        rel[s] = rr;
                        if (s == 0) r.maxDiff = pyFloat(d);
                    }
                    for (const std::string& x : rel) c.push_back(x);
                    if (rel[0].size() > 1 && rel[0].back() == '%')
                        if (const auto v = pyFloat(rel[0].substr(0, rel[0].size() - 1))) r.maxRelErr = *v / 100;
                    c.insert(c.end(), npuStats.begin(), npuStats.end());
                    c.insert(c.end(), benchStats.begin(), benchStats.end());
                    c.push_back(r.reqGradConsistent ? "True" : "False");
                    c.push_back(noBench ? kNA : "");
                    r.errBase = noBench ? kNoBench : r.reqGradConsistent ? "" : "Requires_grad inconsistent. ";
                    c.push_back("");   // Err_message, after the highlight rules
                } else {
                    std::vector<std::string> metrics;
                    r.errBase = noBench ? kNoBench : r.reqGradConsistent ? "" : "Requires_grad inconsistent. ";
                    tensorMetrics(sa, sb, *fa, *fb, e, eb ? *eb : e, n, bm, metrics, r.errBase);
                    c.insert(c.end(), metrics.begin(), metrics.end());
                    c.insert(c.end(), npuStats.begin(), npuStats.end());
                    c.insert(c.end(), benchStats.begin(), benchStats.end());
                    c.push_back(r.reqGradConsistent ? "True" : "False");
                    c.push_back(checkAccuracy(metrics[0], metrics[2]));
                    c.push_back("");   // Err_message
                    r.maxDiff = pyFloat(metrics[2]);
                    r.cosine = pyFloat(metrics[0]);
                    r.oneThousandth = pyFloat(metrics[4]);
                    if (r.maxDiff && std::isnan(*r.maxDiff)) r.maxDiff.reset();
                }
                if (hasStack) c.push_back(k == 0 ? stackCell(stacks, e.name) : "");
                if (mode == MsprobeTableMode::Tensor) c.push_back(pyList({n.dataName, noBench ? kNA : bm->dataName}));
                rows.push_back(std::move(r));
            }
            highlightRows(rows, mode);
            const std::size_t errCol = mode == MsprobeTableMode::Md5 ? 0 : msprobeTableHeader(mode, false).size() - (mode == MsprobeTableMode::Tensor ? 2 : 1);
            for (Row& r : rows) {
                if (mode != MsprobeTableMode::Md5) r.cells[errCol] = finalErr(r);
                for (std::size_t i = 0; i < r.cells.size(); ++i) {
                    if (i) out += ',';
                    out += csvCell(r.cells[i]);
                }
                out += '\n';
                ++report.rows;
            }
        }
    }
    return true;
}

}  // namespace dl

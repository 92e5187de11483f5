#include "core/compare/compare_json.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace dl {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxListedOps = 1000;

json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string shapeText(const DumpIndex& idx, const TensorRecord& t) {
    std::string s = "[";
    for (std::uint32_t d = 0; d < t.ndim; ++d) {
        if (d) s += ',';
        s += std::to_string(idx.dims[t.shapeOffset + d]);
    }
    s += ']';
    return s;
}

std::string dtypeText(const TensorRecord& t) {
    return std::string(dtypeName(t.origDtype != DType::Unknown ? t.origDtype : t.dtype));
}

json metricsJson(const TensorMetrics& m) {
    return {{"from_data", m.fromData},
            {"cosine", num(m.cosine)},
            {"max_abs_err", num(m.maxAbsErr)},
            {"max_rel_err", num(m.maxRelErr)},
            {"one_thousandth_err_ratio", num(m.oneThousandthRatio)},
            {"five_thousandths_err_ratio", num(m.fiveThousandthRatio)},
            {"euc_dist", num(m.eucDist)},
            {"max_rel_diff", num(m.maxRelDiff)},
            {"min_rel_diff", num(m.minRelDiff)},
            {"mean_rel_diff", num(m.meanRelDiff)},
            {"l2_rel_diff", num(m.l2RelDiff)},
            {"nan_inf_mismatch", m.nanInfMismatch},
            {"shape_mismatch", m.shapeMismatch}};
}

json thresholdsJson(const CompareThresholds& t) {
    return {{"rules", compareRulesName(t.rules)},
            {"ulps", num(t.ulps)},
            {"precision", t.precision == DType::Unknown ? json("auto") : json(dtypeName(t.precision))},
            {"precision_cosine", num(t.precisionCosine)},
            {"cosine", num(t.minCosine)},
            {"cosine_alone", num(t.minCosineAlone)},
            {"abs_floor", num(t.absFloor)},
            {"max_abs", num(t.maxAbsErr)},
            {"max_rel", num(t.maxRelErr)},
            {"one_thousandth", t.minOneThousandth >= 0 ? json(t.minOneThousandth) : json(nullptr)},
            {"five_thousandth", t.minFiveThousandth >= 0 ? json(t.minFiveThousandth) : json(nullptr)},
            {"stats_rel", num(t.statsRel)},
            {"nan_inf", t.nanInf}};
}

json opList(const DumpIndex& idx, const std::vector<std::uint32_t>& ops) {
    json out = json::array();
    for (std::size_t k = 0; k < ops.size() && k < kMaxListedOps; ++k) {
        const OpRecord& o = idx.ops[ops[k]];
        out.push_back({{"rank", o.rank},
                       {"iteration", o.iteration},
                       {"graph", o.graph},
                       {"op_type", idx.strings.str(o.type)},
                       {"op_name", idx.strings.str(o.name)}});
    }
    return out;
}

// Rows are written as text, not built as a DOM: 100,000 rows of nlohmann objects took seconds
// and gigabytes; the field order and values are the ones the DOM gave.
void putString(std::string& out, std::string_view v) {
    out += '"';
    for (const char ch : v) {
        const auto u = static_cast<unsigned char>(ch);
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (u < 0x20) {
            fmt::format_to(std::back_inserter(out), "\\u{:04x}", unsigned(u));
        } else {
            out += ch;
        }
    }
    out += '"';
}

void putNum(std::string& out, double v) {
    if (std::isfinite(v))
        fmt::format_to(std::back_inserter(out), "{}", v);
    else
        out += "null";
}

void putKey(std::string& out, const char* key) {
    out += '"';
    out += key;
    out += "\":";
}

void putStats(std::string& out, const TensorStats& s) {
    auto fig = [&](const char* k, std::uint32_t bit, double v, bool first = false) {
        if (!first) out += ',';
        putKey(out, k);
        if (s.has(bit))
            putNum(out, v);
        else
            out += "null";
    };
    out += '{';
    fig("max", stat::Max, s.max, true);
    fig("min", stat::Min, s.min);
    fig("mean", stat::Mean, s.mean);
    fig("l2", stat::L2, s.l2);
    // A count the dump only bounds ("at least 1") is no count: null, with the bound beside it.
    const bool bound = s.nonFiniteCountsAreLowerBounds();
    const bool nanKnown = s.has(stat::NanCount), infKnown = s.known & (stat::PosInfCount | stat::NegInfCount);
    out += ",\"nan\":";
    out += nanKnown && !(bound && s.nanCount) ? std::to_string(s.nanCount) : "null";
    out += ",\"inf\":";
    out += s.has(stat::PosInfCount | stat::NegInfCount) && !(bound && s.infCount()) ? std::to_string(s.infCount())
                                                                                    : "null";
    if (bound && nanKnown && s.nanCount) out += ",\"nan_at_least\":" + std::to_string(s.nanCount);
    if (bound && infKnown && s.infCount()) out += ",\"inf_at_least\":" + std::to_string(s.infCount());
    out += '}';
}

void putMetrics(std::string& out, const TensorMetrics& m) {
    out += "{\"from_data\":";
    out += m.fromData ? "true" : "false";
    const std::pair<const char*, double> nums[] = {{"cosine", m.cosine},
                                                   {"max_abs_err", m.maxAbsErr},
                                                   {"max_rel_err", m.maxRelErr},
                                                   {"one_thousandth_err_ratio", m.oneThousandthRatio},
                                                   {"five_thousandths_err_ratio", m.fiveThousandthRatio},
                                                   {"euc_dist", m.eucDist},
                                                   {"max_rel_diff", m.maxRelDiff},
                                                   {"min_rel_diff", m.minRelDiff},
                                                   {"mean_rel_diff", m.meanRelDiff},
                                                   {"l2_rel_diff", m.l2RelDiff}};
    for (const auto& [k, v] : nums) {
        out += ',';
        putKey(out, k);
        putNum(out, v);
    }
    out += ",\"nan_inf_mismatch\":";
    out += m.nanInfMismatch ? "true" : "false";
    out += ",\"shape_mismatch\":";
    out += m.shapeMismatch ? "true" : "false";
    out += '}';
}

void putRow(std::string& out, const RunComparison& c, std::size_t r, const DumpIndex& a, const DumpIndex& b) {
    const TensorPair& p = c.alignment.tensors[r];
    const TensorRecord &ta = a.tensors[p.a], &tb = b.tensors[p.b];
    const OpRecord &oa = a.ops[ta.op], &ob = b.ops[tb.op];
    const TensorComparison& row = c.rows[r];
    auto str = [&](const char* k, std::string_view v) {
        out += ',';
        putKey(out, k);
        putString(out, v);
    };
    fmt::format_to(std::back_inserter(out), "{{\"rank\":{},\"iteration\":{}", oa.rank, oa.iteration);
    str("op_type", a.strings.view(oa.type));
    str("op_name_a", a.strings.view(oa.name));
    str("op_name_b", b.strings.view(ob.name));
    str("tensor", a.tensorLabel(ta));
    str("match", matchKindName(c.alignment.ops[p.opPair].kind));
    str("dtype_a", dtypeText(ta));
    str("dtype_b", dtypeText(tb));
    str("shape_a", shapeText(a, ta));
    str("shape_b", shapeText(b, tb));
    out += ",\"stats_a\":";
    putStats(out, a.stats(ta));
    out += ",\"stats_b\":";
    putStats(out, b.stats(tb));
    out += ",\"metrics\":";
    putMetrics(out, row.metrics);
    for (const auto& [k, md5] : {std::pair{"md5_a", &c.md5A}, std::pair{"md5_b", &c.md5B}}) {
        const std::uint32_t t = k[4] == 'a' ? p.a : p.b;
        if (md5->empty() || (*md5)[t].empty())
            fmt::format_to(std::back_inserter(out), ",\"{}\":null", k);
        else
            str(k, (*md5)[t]);
    }
    str("class", verdictName(row.verdict));
    out += ",\"diverged\":";
    out += row.diverged ? "true" : "false";
    str("reason", row.reason);
    out += '}';
}

// {"rank","iteration","op_type","op_name","tensor","class"} of one row, null for -1.
json rowRef(const RunComparison& c, std::int64_t row, const DumpIndex& a) {
    if (row < 0) return nullptr;
    const TensorRecord& ta = a.tensors[c.alignment.tensors[std::size_t(row)].a];
    const OpRecord& oa = a.ops[ta.op];
    return {{"rank", oa.rank},
            {"iteration", oa.iteration},
            {"op_type", a.strings.str(oa.type)},
            {"op_name", a.strings.str(oa.name)},
            {"tensor", a.tensorLabel(ta)},
            {"class", verdictName(c.rows[std::size_t(row)].verdict)}};
}

json countsJson(const RunComparison& c) {
    json j = json::object();
    for (int v = 0; v < kVerdictCount; ++v) j[verdictName(Verdict(v))] = c.counts[std::size_t(v)];
    return j;
}

std::string countsText(const RunComparison& c) {
    std::string s;
    for (int v = 0; v < kVerdictCount; ++v)
        if (c.counts[std::size_t(v)])
            s += fmt::format("{}{} {}", s.empty() ? "" : ", ", c.counts[std::size_t(v)], verdictName(Verdict(v)));
    return s.empty() ? "none" : s;
}

std::string csvField(std::string s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
}

std::string csvNum(double v) {
    return std::isfinite(v) ? fmt::format("{:.9g}", v) : (std::isnan(v) ? "N/A" : fmt::format("{}", v));
}

std::string statCell(const TensorStats& s, std::uint32_t bit, double v) { return s.has(bit) ? csvNum(v) : "N/A"; }

// Max or Min as the tensor holds it: +-inf when it holds infinities at that end (the index keeps
// the finite extreme beside the counts; it follows in brackets).
std::string extremeCell(const TensorStats& s, bool isMax) {
    const bool inf =
        isMax ? s.has(stat::PosInfCount) && s.posInfCount > 0 : s.has(stat::NegInfCount) && s.negInfCount > 0;
    const std::string finite = isMax ? statCell(s, stat::Max, s.max) : statCell(s, stat::Min, s.min);
    if (!inf) return finite;
    const bool sameSign = isMax ? finite != "N/A" && s.max != INFINITY : finite != "N/A" && s.min != -INFINITY;
    return std::string(isMax ? "inf" : "-inf") + (sameSign ? " (finite " + finite + ")" : "");
}

}  // namespace

std::string compareJson(const RunComparison& c, const DumpIndex& a, const DumpIndex& b) {
    json j;
    j["schema"] = "dumplens.compare/1";
    j["story"] = c.story;
    j["first_divergence"] = rowRef(c, c.firstDivergence, a);
    j["first_difference"] = rowRef(c, c.firstDifference, a);
    j["first_nonfinite_mismatch"] = rowRef(c, c.firstNonFinite, a);
    j["first_divergence_detail"] = nullptr;
    // A non-tensor argument that differs before the first tensor divergence (msprobe dumps).
    j["first_argument_divergence"] = nullptr;
    if (c.firstArgument >= 0) {
        const ArgumentDifference& d = c.argumentDiffs[std::size_t(c.firstArgument)];
        const OpRecord& o = a.ops[d.op];
        j["first_argument_divergence"] = {{"rank", o.rank},
                                          {"iteration", o.iteration},
                                          {"op_type", a.strings.str(o.type)},
                                          {"op_name", a.strings.str(o.name)},
                                          {"argument", d.label},
                                          {"a", d.a},
                                          {"b", d.b}};
    }
    j["argument_differences"] = c.argumentDiffs.size();
    if (c.firstDivergence >= 0) {
        const std::size_t r = std::size_t(c.firstDivergence);
        const TensorPair& p = c.alignment.tensors[r];
        const TensorRecord& ta = a.tensors[p.a];
        const OpRecord &oa = a.ops[ta.op], &ob = b.ops[b.tensors[p.b].op];
        j["first_divergence_detail"] = {{"op_name_b", b.strings.str(ob.name)},
                                        {"scope", a.strings.str(oa.scope)},
                                        {"reason", c.rows[r].reason},
                                        {"order_evidence", c.orderEvidence},
                                        {"metrics", metricsJson(c.rows[r].metrics)}};
    }
    j["matched"] = c.alignment.tensors.size();
    j["only_in_a"] = c.alignment.onlyTensorsA;
    j["only_in_b"] = c.alignment.onlyTensorsB;
    j["matched_ops"] = c.alignment.ops.size();
    j["ops_only_in_a"] = c.alignment.onlyOpsA.size();
    j["ops_only_in_b"] = c.alignment.onlyOpsB.size();
    j["exact_ops"] = c.alignment.exactOps;
    j["tolerant_ops"] = c.alignment.tolerantOps;
    j["pinned_ops"] = c.alignment.pinnedOps;
    j["diverged"] = c.diverged;
    j["counts"] = countsJson(c);
    j["precision"] = c.precision == DType::Unknown ? json(nullptr) : json(dtypeName(c.precision));
    j["from_data"] = c.fromData;
    j["from_stats"] = c.fromStats;
    j["bytes_compared"] = c.bytesCompared;
    j["seconds"] = c.seconds;
    j["cancelled"] = c.cancelled;
    j["thresholds"] = thresholdsJson(c.thresholds);
    j["threshold_text"] = describeThresholds(c.thresholds);
    j["unmatched_ops_a"] = opList(a, c.alignment.onlyOpsA);
    j["unmatched_ops_b"] = opList(b, c.alignment.onlyOpsB);
    j["warnings"] = c.warnings;
    std::string out = j.dump();
    out.pop_back();  // the closing brace: the rows follow as text
    out.reserve(out.size() + c.rows.size() * 900);
    out += ",\"rows\":[";
    for (std::size_t r = 0; r < c.rows.size(); ++r) {
        if (r) out += ',';
        putRow(out, c, r, a, b);
    }
    out += "]}";
    return out;
}

std::string compareCsv(const RunComparison& c, const DumpIndex& a, const DumpIndex& b) {
    std::string out =
        "Rank,Iteration,Op Type,A Name,B Name,Tensor,Match,A Dtype,B Dtype,A Shape,B Shape,Cosine,EucDist,MaxAbsErr,"
        "MaxRelativeErr,One Thousandth Err Ratio,Five Thousandths Err Ratio,MaxRelativeDiff,MinRelativeDiff,"
        "MeanRelativeDiff,NormRelativeDiff,A max,A min,A mean,A l2norm,B max,B min,B mean,B l2norm,NaN/Inf Mismatch,"
        "Diverged,Class,Reason\n";
    for (std::size_t r = 0; r < c.rows.size(); ++r) {
        const TensorPair& p = c.alignment.tensors[r];
        const TensorRecord &ta = a.tensors[p.a], &tb = b.tensors[p.b];
        const OpRecord &oa = a.ops[ta.op], &ob = b.ops[tb.op];
        const TensorMetrics& m = c.rows[r].metrics;
        const TensorStats sa = a.stats(ta), sb = b.stats(tb);
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},", oa.rank, oa.iteration, csvField(a.strings.str(oa.type)),
                           csvField(a.strings.str(oa.name)), csvField(b.strings.str(ob.name)),
                           csvField(a.tensorLabel(ta)), matchKindName(c.alignment.ops[p.opPair].kind), dtypeText(ta),
                           dtypeText(tb), csvField(shapeText(a, ta)), csvField(shapeText(b, tb)));
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},", csvNum(m.cosine), csvNum(m.eucDist), csvNum(m.maxAbsErr),
                           csvNum(m.maxRelErr), csvNum(m.oneThousandthRatio), csvNum(m.fiveThousandthRatio),
                           csvNum(m.maxRelDiff), csvNum(m.minRelDiff), csvNum(m.meanRelDiff), csvNum(m.l2RelDiff));
        out += fmt::format(
            "{},{},{},{},{},{},{},{},{},{},{},{}\n", statCell(sa, stat::Max, sa.max), statCell(sa, stat::Min, sa.min),
            statCell(sa, stat::Mean, sa.mean), statCell(sa, stat::L2, sa.l2), statCell(sb, stat::Max, sb.max),
            statCell(sb, stat::Min, sb.min), statCell(sb, stat::Mean, sb.mean), statCell(sb, stat::L2, sb.l2),
            m.nanInfMismatch ? "yes" : "no", c.rows[r].diverged ? "yes" : "no", verdictName(c.rows[r].verdict),
            csvField(c.rows[r].reason));
    }
    return out;
}

std::string compareText(const RunComparison& c, const DumpIndex& a, const DumpIndex& b) {
    const RunAlignment& al = c.alignment;
    std::string s = fmt::format("run A: {}\nrun B: {}\n", a.root, b.root);
    s += fmt::format("ops: {} matched ({} exact, {} tolerant, {} pinned), {} only in A, {} only in B\n", al.ops.size(),
                     al.exactOps, al.tolerantOps, al.pinnedOps, al.onlyOpsA.size(), al.onlyOpsB.size());
    s += fmt::format("tensors: {} matched ({} from data, {} from statistics), {} only in A, {} only in B\n",
                     al.tensors.size(), c.fromData, c.fromStats, al.onlyTensorsA, al.onlyTensorsB);
    s += c.story + "\n";
    s += "divergence when: " + describeThresholds(c.thresholds) + "\n";
    s += fmt::format("precision: {}\n",
                     c.precision == DType::Unknown ? std::string("none (no floating tensors)")
                                                   : std::string(dtypeName(c.precision)));
    s += fmt::format("tensor classes: {}\n", countsText(c));
    s += fmt::format("diverged tensors: {}\n", c.diverged);
    auto brief = [&](const char* what, std::int64_t row) {
        if (row < 0) return;
        const TensorRecord& ta = a.tensors[al.tensors[std::size_t(row)].a];
        const OpRecord& oa = a.ops[ta.op];
        s += fmt::format("{}: rank {} iteration {} {} {} {} [{}] {}\n", what, oa.rank, oa.iteration,
                         a.strings.view(oa.type), a.strings.view(oa.name), a.tensorLabel(ta),
                         verdictName(c.rows[std::size_t(row)].verdict), c.rows[std::size_t(row)].reason);
    };
    brief("first difference", c.firstDifference);
    if (c.firstNonFinite != c.firstDivergence) brief("first nonfinite mismatch", c.firstNonFinite);
    if (c.firstArgument >= 0) {
        const ArgumentDifference& d = c.argumentDiffs[std::size_t(c.firstArgument)];
        const OpRecord& o = a.ops[d.op];
        s += fmt::format("first divergence: rank {} iteration {} {} {} {} [argument] {} vs {}\n", o.rank, o.iteration,
                         a.strings.view(o.type), a.strings.view(o.name), d.label, d.a, d.b);
    }
    if (!c.argumentDiffs.empty()) s += fmt::format("non-tensor arguments that differ: {}\n", c.argumentDiffs.size());
    const char* tensorFirst = c.firstArgument >= 0 ? "first tensor divergence" : "first divergence";
    if (c.firstDivergence < 0) {
        s += fmt::format("{}: none\n", tensorFirst);
    } else {
        const std::size_t r = std::size_t(c.firstDivergence);
        const TensorPair& p = al.tensors[r];
        const TensorRecord& ta = a.tensors[p.a];
        const OpRecord &oa = a.ops[ta.op], &ob = b.ops[b.tensors[p.b].op];
        const TensorMetrics& m = c.rows[r].metrics;
        s += fmt::format("{}: rank {} iteration {} {} {} {} [{}] (B: {})\n", tensorFirst, oa.rank, oa.iteration,
                         a.strings.view(oa.type), a.strings.view(oa.name), a.tensorLabel(ta),
                         verdictName(c.rows[r].verdict), b.strings.view(ob.name));
        if (oa.scope) s += fmt::format("  scope: {}\n", a.strings.view(oa.scope));
        s += "  because: " + c.rows[r].reason + "\n";
        if (m.fromData)
            s += fmt::format("  cosine {} max_abs_err {} max_rel_err {} one_thousandth {} five_thousandths {}\n",
                             csvNum(m.cosine), csvNum(m.maxAbsErr), csvNum(m.maxRelErr), csvNum(m.oneThousandthRatio),
                             csvNum(m.fiveThousandthRatio));
        const TensorStats sa = a.stats(ta), sb = b.stats(b.tensors[p.b]);
        s += fmt::format("  A max {} min {} | B max {} min {}\n", extremeCell(sa, true), extremeCell(sa, false),
                         extremeCell(sb, true), extremeCell(sb, false));
        if (!c.orderEvidence.empty()) s += "  order: " + c.orderEvidence + "\n";
    }
    auto list = [&](const char* side, const DumpIndex& idx, const std::vector<std::uint32_t>& ops) {
        for (std::size_t k = 0; k < ops.size() && k < 20; ++k) {
            const OpRecord& o = idx.ops[ops[k]];
            s += fmt::format("  only in {}: rank {} iteration {} {} {}\n", side, o.rank, o.iteration,
                             idx.strings.view(o.type), idx.strings.view(o.name));
        }
        if (ops.size() > 20) s += fmt::format("  ... and {} more only in {}\n", ops.size() - 20, side);
    };
    list("A", a, al.onlyOpsA);
    list("B", b, al.onlyOpsB);
    for (const std::string& w : c.warnings) s += "warning: " + w + "\n";
    return s;
}

}  // namespace dl

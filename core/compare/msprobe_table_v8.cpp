// msprobe 8.3's judged cells (Ascend-mstt debug/accuracy_tools/msprobe, 8.3.3 checked against its
// tables in tests/data/real/msprobe): acc_compare.py CalcStatsDiff (diffs, relative errors and the
// statistics Warning), multiprocessing_compute.py check_accuracy, md5 pass/Different, and with -hl
// highlight.py's red/yellow messages.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/compare/msprobe_table_row.h"
#include "core/compare/msprobe_table_text.h"

namespace dl::msprobe_table {

namespace {

using msprobe_text::pyFloat;

// type_check: a number (pandas to_numeric of its text, "inf" included) or a nan spelling.
std::optional<double> statNumber(const MsprobeValue& v) {
    if (v.numeric()) return v.number;
    if (v.kind == MsprobeValue::Kind::Bool || v.kind == MsprobeValue::Kind::None) return std::nullopt;
    std::string lower;
    for (const char c : v.text) lower += char(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "nan") return std::nan("");
    return pyFloat(v.text);
}

// calc_summary_diff of one statistic; true when it raises the Warning: |diff| over
// |np.maximum(npu, bench)| + 1e-10 above 0.5 (np.maximum, not the larger magnitude).
bool statDiff(const MsprobeValue& n, const MsprobeValue* b, std::string& diff, std::string& rel) {
    diff = rel = kNA;
    if (!b) return false;
    const auto x = statNumber(n), y = statNumber(*b);
    if (!x || !y) return false;
    const double d = *x - *y;
    if (std::isnan(d)) {
        diff = rel = kNan;
        return false;
    }
    diff = pythonFloatText(d);
    rel = *y == 0 ? std::string(kNA) : pythonFloatText(std::fabs(d / *y * 100)) + "%";
    return std::fabs(d) / (std::fabs(std::max(*x, *y)) + 1e-10) > 0.5;  // inf / inf is NaN: no Warning
}

// check_accuracy.
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

// highlight.py (msprobe -hl): red rows (overflow, huge max diff, input/output rules) and yellow
// rows (magnitude jump, ratio or cosine drop, requires_grad); red messages always, yellow ones
// only on rows that are not red (update_highlight_err_msg).
void highlight(std::vector<Row>& rows, MsprobeTableMode mode) {
    struct Facts {
        std::optional<double> npuMax, benchMax, maxDiff, oneThousandth, cosine, maxRel;
        bool red = false;
        std::vector<std::string> redMsgs, yellowMsgs;
    };
    std::vector<Facts> f(rows.size());
    auto number = [](const MsprobeValue& v) -> std::optional<double> {
        if (v.numeric() && !std::isnan(v.number)) return v.number;
        return std::nullopt;
    };
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        f[i].npuMax = number(r.npu->stats[0]);
        if (r.bench) f[i].benchMax = number(r.bench->stats[0]);
        if (mode == MsprobeTableMode::Tensor) {
            f[i].maxDiff = pyFloat(r.metrics[2]);
            if (f[i].maxDiff && std::isnan(*f[i].maxDiff)) f[i].maxDiff.reset();
            f[i].cosine = pyFloat(r.metrics[0]);
            f[i].oneThousandth = pyFloat(r.metrics[4]);
        } else {
            f[i].maxDiff = pyFloat(r.diff[0]);
            if (r.rel[0].size() > 1 && r.rel[0].back() == '%')
                if (const auto v = pyFloat(r.rel[0].substr(0, r.rel[0].size() - 1))) f[i].maxRel = *v / 100;
        }
        const std::string mx = statText(r.npu->stats[0]), mn = statText(r.npu->stats[1]);
        if (mx == "inf" || mx == "-inf" || mn == "inf" || mn == "-inf") {
            f[i].red = true;
            f[i].redMsgs.push_back("maximum or minimum is nan, -inf, or inf");
        } else if (f[i].maxDiff && std::fabs(*f[i].maxDiff) > 1e10) {
            f[i].red = true;
            f[i].redMsgs.push_back("maximum absolute error exceeds 1e+10");
        }
    }
    for (std::size_t o = 0; o < rows.size(); ++o) {
        Facts& out = f[o];
        if (!rows[o].isOutput() || out.red || !out.npuMax || !out.benchMax || !out.maxDiff) continue;
        for (std::size_t k = 0; k < rows.size(); ++k) {
            const MsprobeArgState s = rows[k].npu->state;
            if (s != MsprobeArgState::Input && s != MsprobeArgState::Parameters) continue;
            const Facts& in = f[k];
            if (!in.npuMax || !in.benchMax || !in.maxDiff) continue;
            const double dIn = std::fabs(*in.maxDiff), dOut = std::fabs(*out.maxDiff);
            if (!(dIn > dOut || dIn <= 1 || dOut <= 1) && std::log10(dOut) - std::log10(dIn) >= 1)
                out.yellowMsgs.push_back(
                    "maximum absolute error of both input/parameters and output exceed 1, "
                    "with the output larger by an order of magnitude");
            if (mode == MsprobeTableMode::Tensor) {
                if (in.oneThousandth && out.oneThousandth) {
                    if (*in.oneThousandth > 0.9 && *out.oneThousandth < 0.6) {
                        out.red = true;
                        out.redMsgs.push_back(
                            "The input/parameter's one thousandth err ratio exceeds 0.9, while the output's is below "
                            "0.6");
                    } else if (*in.oneThousandth - *out.oneThousandth > 0.1) {
                        out.yellowMsgs.push_back(
                            "The output's one thousandth err ratio decreases by more than 0.1 "
                            "compared to the input/parameter's");
                    }
                }
                if (in.cosine && out.cosine && *in.cosine - *out.cosine > 0.1)
                    out.yellowMsgs.push_back(
                        "The output's cosine decreases by more than 0.1 compared to the input/parameter's");
            } else if (out.maxRel) {
                if (*out.maxRel > 0.5) {
                    out.red = true;
                    out.redMsgs.push_back("maximum relative error exceeds 0.5");
                }
                if (in.maxRel && *out.maxRel > 0.1 && *in.maxRel < 0.01)
                    out.yellowMsgs.push_back(
                        "The output's maximum relative error exceeds 0.1, while the input/parameter's is below 0.01");
            }
        }
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (!rows[i].reqConsistent) f[i].yellowMsgs.push_back("requires_grad is inconsistent");
        std::string& s = rows[i].err;
        auto add = [&](const std::vector<std::string>& msgs) {
            for (const std::string& m : msgs) s += s.empty() ? m : "\n" + m;
        };
        add(f[i].redMsgs);
        if (!f[i].red) add(f[i].yellowMsgs);
    }
}

}  // namespace

void judgeEntryV8(std::vector<Row>& rows, MsprobeTableMode mode, bool withHighlight) {
    for (Row& r : rows) {
        const bool noBench = !r.bench;
        if (mode == MsprobeTableMode::Md5) {
            r.result = noBench ? kNA : r.npu->md5 == r.bench->md5 ? "pass" : "Different";
            continue;
        }
        if (mode == MsprobeTableMode::Statistics) {
            bool warning = false;
            for (int s = 0; s < 4; ++s)
                warning |= statDiff(r.npu->stats[s], noBench ? nullptr : &r.bench->stats[s], r.diff[s], r.rel[s]);
            // calc_accuracy: unmatched rows keep N/A and "No bench data matched."; the others get the
            // Warning; a requires_grad mismatch is appended to either.
            r.result = noBench ? kNA : warning ? "Warning" : "";
            r.err = noBench ? kNoBench : warning ? "Need double check api accuracy. " : "";
            if (!r.reqConsistent) r.err += "Requires_grad inconsistent. ";
        } else {
            // calc_accuracy writes "No bench data matched." and then overwrites it with the
            // requires_grad message; compare_by_op appends the metrics' messages.
            r.err = !r.reqConsistent ? "Requires_grad inconsistent. " : noBench ? kNoBench : "";
            r.err += r.metricErr;
            r.result = checkAccuracy(r.metrics[0], r.metrics[2]);
        }
    }
    if (withHighlight && mode != MsprobeTableMode::Md5) highlight(rows, mode);
}

}  // namespace dl::msprobe_table

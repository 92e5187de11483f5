// msprobe 26.x's judged cells (Ascend/msprobe, 26.2.0 checked against its tables in
// tests/data/real/msprobe): acc_compare.py CalcStatsDiff (value classes and the rule per pair of
// classes), then indicator_analysis (calculator.py, algorithm.py): per dump.json entry the
// checkers give each row pass/warning/error and a list of messages, written as JSON.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>

#include "core/compare/msprobe_table_row.h"
#include "core/compare/msprobe_table_text.h"

namespace dl::msprobe_table {

namespace {

using msprobe_text::pyFloat;

enum class Val { Num, Nan, Inf, NegInf, Device, NA, Other };

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// CalcStatsDiff.classify, in its order (nan, inf, -inf, number, device, N/A).
Val classify(const MsprobeValue* v) {
    if (!v) return Val::NA;
    const std::string t = lower(statText(*v));
    if (t == "nan") return Val::Nan;
    if (t == "inf") return Val::Inf;
    if (t == "-inf") return Val::NegInf;
    if (v->numeric()) return Val::Num;
    if (v->kind == MsprobeValue::Kind::Text && t != "true" && t != "false" && pyFloat(v->text)) return Val::Num;
    if (t.find("npu") != std::string::npos || t.find("cpu") != std::string::npos || t.find("cuda") != std::string::npos)
        return Val::Device;
    if (statText(*v) == kNA) return Val::NA;
    return Val::Other;
}

double numberOf(const MsprobeValue& v) { return v.numeric() ? v.number : pyFloat(v.text).value_or(NAN); }

void statDiff(const MsprobeValue& n, const MsprobeValue* b, std::string& diff, std::string& rel) {
    diff = rel = kNA;
    if (b && statText(n) == statText(*b)) {
        diff = rel = "0";
        return;
    }
    const Val x = classify(&n), y = classify(b);
    auto both = [&](const char* s) { diff = rel = s; };
    if (!b || x == Val::NA || y == Val::NA) return both(kNA);  // classify(nullptr) is NA: `!b` says so here
    if (x == Val::Num && y == Val::Num) {
        const double d = numberOf(n) - numberOf(*b), bv = numberOf(*b);
        diff = pythonFloatText(d);
        rel = bv == 0 ? std::string("inf") : pythonFloatText(std::fabs(d / bv * 100)) + "%";
        return;
    }
    const bool finiteClass = x == Val::Num || x == Val::Nan || x == Val::Inf || x == Val::NegInf;
    const bool finiteClassB = y == Val::Num || y == Val::Nan || y == Val::Inf || y == Val::NegInf;
    if (finiteClass && finiteClassB) {
        if (x == Val::Nan || y == Val::Nan) return both(kNan);
        if (x == Val::Inf) return both(y == Val::Inf ? kNA : "inf");
        if (x == Val::NegInf) return both(y == Val::NegInf ? kNA : "-inf");
        return both(y == Val::Inf ? "-inf" : "inf");  // a number against +-inf
    }
    if (x == Val::Device && y == Val::Device) return both(kNA);
    both("Diff");  // device or other text against anything but N/A
}

enum class Level { Pass, Warning, Error };

struct Verdicts {
    std::vector<Level> level;
    std::vector<std::vector<std::string>> msgs;
    void set(std::size_t i, Level l, const std::string& m) {
        level[i] = std::max(level[i], l);
        msgs[i].push_back(m);
    }
};

// str2float: a percent text as a fraction, 0 when it is none.
double percent(const std::string& s) {
    std::string t = s;
    while (!t.empty() && t.back() == '%') t.pop_back();
    while (!t.empty() && t.front() == '%') t.erase(t.begin());
    const auto v = pyFloat(t);
    return v ? *v / 100 : 0;
}

// ApiData.get_min_or_max_value over a metric: N/A, Nan and text skipped, percents as fractions.
double extreme(const std::vector<const Row*>& rows, const std::function<std::string(const Row&)>& cell, bool isMin,
               bool numbersAreText) {
    double v = isMin ? 1.0 : 0.0;
    for (const Row* r : rows) {
        const std::string c = cell(*r);
        if (c == kNA || c == kNan || c.empty()) continue;
        double x;
        if (c.back() == '%')
            x = percent(c);
        else if (numbersAreText)
            continue;  // statistics cells other than percents are str: skipped
        else if (const auto f = pyFloat(c))
            x = *f;
        else
            continue;
        v = isMin ? std::min(v, x) : std::max(v, x);
    }
    return v;
}

bool infOrNan(const MsprobeValue* v) {
    if (!v) return false;
    const std::string t = lower(statText(*v));
    return t == "inf" || t == "-inf" || t == "nan";
}

}  // namespace

void judgeEntryV26(std::vector<Row>& rows, MsprobeTableMode mode) {
    if (mode == MsprobeTableMode::Statistics)
        for (Row& r : rows)
            for (int s = 0; s < 4; ++s)
                statDiff(r.npu->stats[s], r.bench ? &r.bench->stats[s] : nullptr, r.diff[s], r.rel[s]);
    Verdicts v{std::vector<Level>(rows.size(), Level::Pass), std::vector<std::vector<std::string>>(rows.size())};
    std::vector<std::size_t> in, out;
    for (std::size_t i = 0; i < rows.size(); ++i)
        (rows[i].name.find(".output.") != std::string::npos ? out : in).push_back(i);
    // get_api_ignore_info: by the API name of the first input row.
    enum class Ignore { None, All, Input } ignore = Ignore::None;
    if (!in.empty()) {
        const std::string& n = rows[in[0]].name;
        const std::size_t p = n.find('.'), q = p == std::string::npos ? p : n.find('.', p + 1);
        if (p != std::string::npos) {
            const std::string api = n.substr(p + 1, q == std::string::npos ? std::string::npos : q - p - 1);
            static const char* all[] = {
                "empty",     "empty_like",   "numpy", "to", "__setitem__", "empty_with_format", "new_empty_strided",
                "new_empty", "empty_strided"};
            static const char* inputOnly[] = {"_reduce_scatter_base", "_all_gather_base", "all_to_all_single",
                                              "batch_isend_irecv"};
            for (const char* a : all) ignore = api == a ? Ignore::All : ignore;
            for (const char* a : inputOnly) ignore = api == a ? Ignore::Input : ignore;
        }
    }
    std::vector<std::size_t> checked;  // get_data_list_by_ignore_info
    if (ignore == Ignore::None) {
        checked = in;
        checked.insert(checked.end(), out.begin(), out.end());
    } else if (ignore == Ignore::Input)
        checked = out;
    const bool inputsJudged = ignore == Ignore::None;
    auto ptrs = [&](const std::vector<std::size_t>& idx) {
        std::vector<const Row*> p;
        for (std::size_t i : idx) p.push_back(&rows[i]);
        return p;
    };
    auto matched = [&](const Row& r) { return r.bench != nullptr; };

    auto infNan = [&] {
        for (std::size_t i : checked) {
            const Row& r = rows[i];
            if (infOrNan(r.bench ? &r.bench->stats[0] : nullptr) || infOrNan(r.bench ? &r.bench->stats[1] : nullptr))
                continue;
            if (infOrNan(&r.npu->stats[0]) || infOrNan(&r.npu->stats[1]))
                v.set(i, Level::Error, "error: There is nan/inf/-inf in the maximum or minimum value of NPU.");
        }
    };
    auto requiresGrad = [&] {
        for (std::size_t i : checked) {
            const Row& r = rows[i];
            // `not npu_req_grad` skips False as well as a missing value.
            if (!matched(r) || r.reqA == "False" || r.reqB == "False") continue;
            if (r.reqA != r.reqB) v.set(i, Level::Error, "error: The Required_Grad of NPU and Bench are inconsistent");
        }
    };
    auto parameters = [&] {
        if (!inputsJudged) return;
        for (std::size_t i : in) {
            const Row& r = rows[i];
            if (!matched(r)) continue;
            if (r.npu->dtype.find("class") == std::string::npos || r.bench->dtype.find("class") == std::string::npos)
                continue;
            if (r.npu->shape != "[]") continue;
            const MsprobeValue &x = r.npu->stats[0], &y = r.bench->stats[0];
            const bool equal = x.numeric() && y.numeric() ? x.number == y.number : statText(x) == statText(y);
            if (!equal) v.set(i, Level::Error, "error: The scalar parameters of NPU and Bench are inconsistent.");
        }
    };
    auto dtype = [&] {
        for (std::size_t i : checked) {
            const Row& r = rows[i];
            if (!matched(r)) continue;
            if (r.name.find("qkv") != std::string::npos || r.name.find("gate_up") != std::string::npos) continue;
            if (r.npu->dtype != r.bench->dtype)
                v.set(i, Level::Error, "error: The dtype of NPU and Bench are inconsistent.");
        }
    };
    auto shape = [&] {
        for (std::size_t i : checked) {
            const Row& r = rows[i];
            if (matched(r) && r.npu->shape != r.bench->shape)
                v.set(i, Level::Error, "error: The shape of NPU and Bench are inconsistent.");
        }
    };
    const auto norm = [](const Row& r) { return r.rel[3]; };
    if (mode == MsprobeTableMode::Md5) {
        for (std::size_t i : checked) {
            const Row& r = rows[i];
            const std::string a = r.npu->md5.empty() ? kNA : r.npu->md5;
            const std::string b = !r.bench ? kNA : r.bench->md5.empty() ? kNA : r.bench->md5;
            if (a == b) continue;
            if (a == kNA || b == kNA || a == kNan || b == kNan)
                v.set(i, Level::Warning, "warning: The parameter of NPU does not match the bench.");
            else
                v.set(i, Level::Error, "error: The CRC-32 value of NPU differs from that of the bench.");
        }
    } else if (mode == MsprobeTableMode::Statistics) {
        infNan();
        if (inputsJudged) {  // RelativeErrChecker
            const double inMax = std::fabs(extreme(ptrs(in), norm, false, true));
            if (inMax < 0.1)
                for (std::size_t i : out)
                    if (std::fabs(percent(rows[i].rel[3])) > 0.5)
                        v.set(i, Level::Error, "error: The NormRelativeErr of output is greater than 0.5.");
        }
        requiresGrad();
        parameters();
        dtype();
        shape();
        if (inputsJudged && !out.empty()) {  // RelativeWarnChecker
            const double a = std::fabs(extreme(ptrs(in), norm, false, true)),
                         b = std::fabs(extreme(ptrs(out), norm, false, true));
            if (a == 0 ? b > 0.1 : b / a > 10)
                v.set(out[0], Level::Warning, "warning: The norm relative error of output is 10 times that of input.");
        }
    } else {
        infNan();
        const auto ratio = [](const Row& r) { return r.metrics[4]; };
        const auto cosine = [](const Row& r) { return r.metrics[0]; };
        if (inputsJudged && !out.empty()) {  // OneThousandthErrChecker
            if (extreme(ptrs(in), ratio, true, false) > 0.9 && extreme(ptrs(out), ratio, true, false) < 0.1)
                v.set(out[0], Level::Error,
                      "error: The input/parameters of One Thousandth Err Ratio > 0.9 while the output < 0.6.");
        }
        requiresGrad();
        parameters();
        dtype();
        shape();
        if (inputsJudged && !out.empty()) {  // CosineWarnChecker
            const double a = extreme(ptrs(in), cosine, true, false), b = extreme(ptrs(out), cosine, true, false);
            if (a > 0.9 && a - b > 0.1)
                v.set(out[0], Level::Warning,
                      "warning: The input/parameters of Cosine > 0.9, and input/parameters - output > 0.1");
        }
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
        rows[i].result = v.level[i] == Level::Error ? "error" : v.level[i] == Level::Warning ? "warning" : "pass";
        rows[i].err = msprobe_text::jsonList(v.msgs[i]);
    }
}

}  // namespace dl::msprobe_table

// The thresholds of a comparison: the rule sets' defaults, the KEY=VALUE spec a user gives
// (--thresholds), its canonical text and the sentence a report prints.
#include "core/compare/run_comparison.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/util/text.h"

namespace dl {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string fmtNum(double v) { return shortNumber(v); }

bool parseValue(std::string_view key, std::string_view text, double off, double& out, std::string& error) {
    if (text == "off" || text == "none") {
        out = off;
        return true;
    }
    try {
        std::size_t used = 0;
        const std::string s(text);
        out = std::stod(s, &used);
        if (used == s.size() && std::isfinite(out)) return true;
    } catch (...) {}
    error = "threshold " + std::string(key) + ": \"" + std::string(text) + "\" is not a number (or \"off\")";
    return false;
}

}  // namespace

const char* compareRulesName(CompareRules r) { return r == CompareRules::Msprobe ? "msprobe" : "precision"; }

CompareThresholds CompareThresholds::defaults(CompareRules r) {
    CompareThresholds t;
    t.rules = r;
    if (r == CompareRules::Msprobe) {
        t.ulps = kInf;
        t.minCosine = 0.99;
        t.minCosineAlone = 0.9;
        t.maxAbsErr = 1.0;
        t.statsRel = 0.001;
    }
    return t;
}

bool parseThresholds(std::string_view spec, CompareThresholds& t, std::string& error) {
    std::vector<std::pair<std::string_view, std::string_view>> items;
    for (std::size_t pos = 0; pos < spec.size();) {
        std::size_t end = spec.find(',', pos);
        if (end == std::string_view::npos) end = spec.size();
        const std::string_view item = spec.substr(pos, end - pos);
        pos = end + 1;
        if (item.empty()) continue;
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos) {
            error = "threshold \"" + std::string(item) + "\": expected KEY=VALUE";
            return false;
        }
        items.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
    CompareThresholds out = t;
    for (const auto& [key, val] : items) {
        if (key != "rules") continue;
        if (val == "precision")
            out = CompareThresholds::defaults(CompareRules::Precision);
        else if (val == "msprobe")
            out = CompareThresholds::defaults(CompareRules::Msprobe);
        else {
            error = "threshold rules: expected precision or msprobe, got \"" + std::string(val) + "\"";
            return false;
        }
    }
    for (const auto& [key, val] : items) {
        bool ok = true;
        if (key == "rules")
            continue;
        else if (key == "ulps")
            ok = parseValue(key, val, kInf, out.ulps, error);
        else if (key == "precision_cosine")
            ok = parseValue(key, val, kInf, out.precisionCosine, error);
        else if (key == "precision") {
            if (val == "auto")
                out.precision = DType::Unknown;
            else if (auto d = parseDTypeName(val); d && isFloating(*d))
                out.precision = *d;
            else if (val == "fp16" || val == "bf16" || val == "fp32")
                out.precision = val == "fp16" ? DType::Float16 : val == "bf16" ? DType::BFloat16 : DType::Float32;
            else {
                error = "threshold precision: expected auto, float16, bfloat16, float32 or float64";
                return false;
            }
        } else if (key == "cosine")
            ok = parseValue(key, val, -kInf, out.minCosine, error);
        else if (key == "cosine_alone")
            ok = parseValue(key, val, -kInf, out.minCosineAlone, error);
        else if (key == "abs_floor")
            ok = parseValue(key, val, 0, out.absFloor, error);
        else if (key == "max_abs")
            ok = parseValue(key, val, kInf, out.maxAbsErr, error);
        else if (key == "max_rel")
            ok = parseValue(key, val, kInf, out.maxRelErr, error);
        else if (key == "one_thousandth")
            ok = parseValue(key, val, -1, out.minOneThousandth, error);
        else if (key == "five_thousandth")
            ok = parseValue(key, val, -1, out.minFiveThousandth, error);
        else if (key == "stats_rel")
            ok = parseValue(key, val, kInf, out.statsRel, error);
        else if (key == "nan_inf") {
            if (val == "on" || val == "1")
                out.nanInf = true;
            else if (val == "off" || val == "0")
                out.nanInf = false;
            else {
                error = "threshold nan_inf: expected on or off";
                return false;
            }
        } else {
            error = "unknown threshold \"" + std::string(key) +
                "\" (rules, ulps, precision, precision_cosine, cosine, cosine_alone, abs_floor, "
                "max_abs, max_rel, one_thousandth, five_thousandth, stats_rel, nan_inf)";
            return false;
        }
        if (!ok) return false;
    }
    t = out;
    return true;
}

std::string thresholdSpec(const CompareThresholds& t) {
    const auto v = [](double x, bool off) { return off ? std::string("off") : fmtNum(x); };
    return std::string("rules=") + compareRulesName(t.rules) + ",ulps=" + v(t.ulps, t.ulps == kInf) +
        ",precision=" + (t.precision == DType::Unknown ? std::string("auto") : std::string(dtypeName(t.precision))) +
        ",precision_cosine=" + v(t.precisionCosine, t.precisionCosine == kInf) +
        ",cosine=" + v(t.minCosine, t.minCosine == -kInf) +
        ",cosine_alone=" + v(t.minCosineAlone, t.minCosineAlone == -kInf) + ",abs_floor=" + fmtNum(t.absFloor) +
        ",max_abs=" + v(t.maxAbsErr, t.maxAbsErr == kInf) + ",max_rel=" + v(t.maxRelErr, t.maxRelErr == kInf) +
        ",one_thousandth=" + v(t.minOneThousandth, t.minOneThousandth < 0) +
        ",five_thousandth=" + v(t.minFiveThousandth, t.minFiveThousandth < 0) +
        ",stats_rel=" + v(t.statsRel, t.statsRel == kInf) + ",nan_inf=" + (t.nanInf ? "on" : "off");
}

std::string describeThresholds(const CompareThresholds& t) {
    std::vector<std::string> parts;
    if (t.ulps < kInf)
        parts.push_back("beyond " + fmtNum(t.ulps) + " ulps of " +
                        (t.precision == DType::Unknown ? std::string("the runs' coarsest float dtype")
                                                       : std::string(dtypeName(t.precision))) +
                        " at the tensor's largest magnitude (unless 1 - cosine <= " + fmtNum(t.precisionCosine) +
                        " with the relative L2 error within the bound)");
    if (t.minCosine > -kInf)
        parts.push_back("cosine < " + fmtNum(t.minCosine) + " (with max_abs > " + fmtNum(t.absFloor) + ")");
    if (t.minCosineAlone > -kInf) parts.push_back("cosine < " + fmtNum(t.minCosineAlone));
    if (t.maxAbsErr < kInf) parts.push_back("max_abs > " + fmtNum(t.maxAbsErr));
    if (t.maxRelErr < kInf) parts.push_back("max_rel > " + fmtNum(t.maxRelErr));
    if (t.minOneThousandth >= 0) parts.push_back("one_thousandth < " + fmtNum(t.minOneThousandth));
    if (t.minFiveThousandth >= 0) parts.push_back("five_thousandth < " + fmtNum(t.minFiveThousandth));
    if (t.statsRel < kInf)
        parts.push_back("stats_rel > " + fmtNum(t.statsRel) +
                        " (max/min/L2 relative to themselves, mean to the value range; "
                        "with abs diff > " +
                        fmtNum(t.absFloor) + ")");
    if (t.nanInf) parts.push_back("NaN/Inf/saturation disagreement");
    std::string s;
    for (const std::string& p : parts) s += (s.empty() ? "" : ", ") + p;
    return std::string(compareRulesName(t.rules)) + " rules: " + (s.empty() ? "none (every test off)" : s);
}

}  // namespace dl

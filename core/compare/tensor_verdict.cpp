#include "core/compare/tensor_verdict.h"

#include <algorithm>
#include <cmath>

namespace dl {

const char* verdictName(Verdict v) {
    switch (v) {
        case Verdict::Identical:
            return "identical";
        case Verdict::Precision:
            return "precision";
        case Verdict::Agree:
            return "agree";
        case Verdict::Diverged:
            return "diverged";
        case Verdict::NonFinite:
            return "nonfinite";
        case Verdict::Shape:
            return "shape";
        case Verdict::Md5:
            return "md5";
        case Verdict::Unknown:
            return "unknown";
    }
    return "?";
}

int significandBits(DType t) {
    switch (t) {
        case DType::Float16:
            return 11;
        case DType::BFloat16:
            return 8;
        case DType::Float32:
            return 24;
        case DType::Float64:
            return 53;
        default:
            return 0;
    }
}

namespace {
int minNormalExponent(DType t) {
    switch (t) {
        case DType::Float16:
            return -14;
        case DType::Float64:
            return -1022;
        default:
            return -126;  // bf16 shares fp32's exponent range
    }
}
}  // namespace

DType coarserFloat(DType x, DType y) {
    const int px = significandBits(x), py = significandBits(y);
    if (!px) return py ? y : DType::Unknown;
    if (!py) return x;
    return px <= py ? x : y;
}

double ulpAt(double m, DType t) {
    const int p = significandBits(t);
    m = std::fabs(m);
    if (!p || m == 0 || !std::isfinite(m)) return 0;
    const int e = std::max(std::ilogb(m), minNormalExponent(t));
    return std::ldexp(1.0, e - p + 1);
}

double unitRoundoff(DType t) {
    const int p = significandBits(t);
    return p ? std::ldexp(1.0, -p) : 0;
}

AnomalyStatus anomalyOf(const TensorStats& s, DType dtype) {
    AnomalyStatus a;
    const bool counts = s.known & (stat::NanCount | stat::PosInfCount | stat::NegInfCount);
    a.known = counts || s.has(stat::Max | stat::Min);
    a.nan = s.has(stat::NanCount) && s.nanCount > 0;
    a.inf = (s.has(stat::PosInfCount) && s.posInfCount > 0) || (s.has(stat::NegInfCount) && s.negInfCount > 0);
    if (dtype == DType::Float16) {
        a.saturated = (s.has(stat::Max) && std::fabs(s.max) >= kFp16Max) ||
            (s.has(stat::Min) && std::fabs(s.min) >= kFp16Max) || (s.has(stat::MaxAbs) && s.maxAbs >= kFp16Max);
    }
    return a;
}

std::string anomalyText(const AnomalyStatus& a) {
    std::string s = a.nan && a.inf ? "NaN and inf" : a.nan ? "NaN" : a.inf ? "inf" : "";
    if (a.saturated) s += std::string(s.empty() ? "" : ", ") + "saturates at the fp16 limit 65504";
    return s;
}

}  // namespace dl

#pragma once
// What a matched tensor pair's difference means, as one class per pair, and the floating-point
// facts the precision-aware classes rest on (significand bits, ulp at a magnitude, fp16
// saturation). A fix that moves values by the rounding of a coarser dtype (the bf16 fix of an
// fp16 run) reads as `Precision`; a value that overflows in one run only reads as `NonFinite`.
#include <cstdint>
#include <string>

#include "core/stats/tensor_stats.h"
#include "core/util/dtype.h"
#include "core/util/half.h"  // kFp16Max

namespace dl {

enum class Verdict : std::uint8_t {
    Identical,  // equal values (data), or every statistic (and checksum) equal
    Precision,  // differs, within the rounding bound of the comparison's precision dtype
    Agree,      // differs, passes every enabled test, no precision bound applied (msprobe rules)
    Diverged,   // beyond the precision bound, or a threshold test failed
    NonFinite,  // NaN/Inf/fp16 saturation in one run and not the other, or at other positions
    Shape,      // shapes or element types incompatible
    Md5,        // checksums differ while the statistics do not tell them apart
    Unknown,    // nothing comparable (no data, no statistics)
};
inline constexpr int kVerdictCount = 8;

// "identical", "precision", "agree", "diverged", "nonfinite", "shape", "md5", "unknown".
const char* verdictName(Verdict v);
// Diverged, NonFinite, Shape and Md5: what "first divergence" looks for.
inline bool isDivergence(Verdict v) {
    return v == Verdict::Diverged || v == Verdict::NonFinite || v == Verdict::Shape || v == Verdict::Md5;
}

// Significand bits including the implicit one: fp16 11, bf16 8, fp32 24, fp64 53; 0 otherwise.
int significandBits(DType t);
// Of two dtypes, the floating one with fewer significand bits (Unknown when neither floats).
DType coarserFloat(DType x, DType y);
// Spacing of dtype `t` at magnitude m: 2^(floor(log2 m) - p + 1), subnormal spacing below the
// smallest normal. 0 for non-floating types or m == 0.
double ulpAt(double m, DType t);
// Unit roundoff 2^-p (bf16 2^-8, fp16 2^-11, fp32 2^-24).
double unitRoundoff(DType t);

// A tensor's anomaly status as its statistics tell it. Counts are used where known; a side
// without counts but with finite Max and Min is finite (msprobe and MindSpore 2.3+ propagate
// NaN/Inf into Max/Min, so a finite pair rules them out).
struct AnomalyStatus {
    bool known = false;
    bool nan = false, inf = false;
    bool saturated = false;  // fp16 holding +-65504: the saturation-mode form of an overflow
    bool any() const { return nan || inf || saturated; }
};
AnomalyStatus anomalyOf(const TensorStats& s, DType dtype);
// "inf", "NaN", "NaN and inf", "saturates at the fp16 limit 65504".
std::string anomalyText(const AnomalyStatus& a);

}  // namespace dl

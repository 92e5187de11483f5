// Tensor mode's metric cells of msprobe's table (msprobe_table_row.h), per generation:
// 8.3 npy_compare.py (get_error_flag_and_msg, compare_ops_apply, the op classes) and 26.x
// multiprocessing_compute.py (locate_dump_file, ValidateTensor) with algorithm/builtin_algorithm.
// The sums come from DumpLens's float64 loop (tensor_metrics.h); the relative error is recomputed
// here because msprobe adds its epsilon where the bench is 0 in the arrays' dtypes: 26.x the
// float32 epsilon (8388608 |a|, not 8.3's 4.5e15 |a|), 8.3 float64's in each array's own dtype.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "core/compare/msprobe_table_row.h"
#include "core/compare/msprobe_table_text.h"
#include "core/compare/tensor_metrics.h"
#include "core/index/tensor_location.h"
#include "core/io/npy_file.h"
#include "core/util/half.h"

namespace dl::msprobe_table {

namespace {

using msprobe_text::cosineText;
using msprobe_text::formatValue;
using msprobe_text::pyList;

const std::string kZeroDim =
    "This is type of 0-d tensor, can not calculate 'Cosine', 'EucDist', 'One Thousandth Err Ratio' and "
    "'Five Thousandths Err Ratio'. ";

bool load(ArgData s, std::vector<float>& v) {
    std::string why;
    if (!s.t || !(s.t->flags & HasData) || !tensorDataReachable(*s.idx, *s.t, why)) return false;
    std::uint64_t n = 1;
    for (std::uint32_t d = 0; d < s.t->ndim; ++d)
        n *= std::uint64_t(std::max<std::int64_t>(0, s.idx->dims[s.t->shapeOffset + d]));
    return loadTensorAsFloat(tensorDataPath(*s.idx, *s.t), s.idx->side(*s.t).dataOffset, n, s.t->dtype,
                             (s.t->flags & BigEndian) != 0, v, why);
}

// The dtype numpy holds after msprobe reads a .pt/.npy: bfloat16 arrives as float32.
DType numpyDtype(DType d) { return d == DType::BFloat16 ? DType::Float32 : d; }

bool float32OrNarrower(DType d) { return d == DType::Float16 || d == DType::Float32; }

// Cosine cell and message when the norms or the data rule it out (both generations).
std::string cosineCell(const std::vector<float>& a, const std::vector<float>& b, double cos, std::string& msg) {
    if (!std::isnan(cos)) return cosineText(cos);
    double na2 = 0, nb2 = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double x = std::isfinite(a[i]) ? a[i] : 0, y = std::isfinite(b[i]) ? b[i] : 0;
        na2 += x * x, nb2 += y * y;
    }
    if (std::sqrt(na2) <= DBL_EPSILON)
        msg = "Cannot compare by Cosine Similarity, All the data is Zero in npu dump data.";
    else if (std::sqrt(nb2) <= DBL_EPSILON)
        msg = "Cannot compare by Cosine Similarity, All the data is Zero in Bench dump data.";
    else
        msg = "Cannot compare by Cosine Similarity, the dump data has NaN.";
    return kNan;
}

// A 0-d pair: msprobe skips its NaN/Inf handling, so a NaN loss reads "Nan" (not N/A).
void zeroDimAbsRel(float x, float y, double eps, std::string& absCell, std::string& relCell, std::string& msg) {
    const double xd = x, yd = y, d = std::fabs(xd - yd);
    const double rel = yd == 0 ? std::fabs(((xd + eps) - eps) / eps) : std::fabs((xd - yd) / yd);
    if (std::isnan(d)) {
        absCell = kNan;
        msg += "Cannot compare by MaxAbsError, the data contains nan/inf/-inf in dump data.";
    } else
        absCell = formatValue(d);
    if (std::isnan(rel)) {
        relCell = kNan;
        msg += "Cannot compare by MaxRelativeError, the data contains nan/inf/-inf in dump data.";
    } else
        relCell = formatValue(rel);
}

// x + eps where the bench is 0, as numpy adds it in the array's own dtype (8.3: an fp16 zero stays
// 0, so an all-zero fp16 tensor against zeros has relative error 1, as 8.3.3 writes).
double addEps(float x, double eps, DType d) {
    if (d == DType::Float16) return roundToHalf(float(double(x) + eps));
    if (d == DType::Float32) return float(double(x) + eps);
    return double(x) + eps;
}

// get_relative_err: max |a - b| / |b| and the shares below 0.001 and 0.005, NaN/Inf already 0 on
// both sides. 8.3 adds float64's epsilon to both arrays where the bench is 0, each in its own
// dtype; 26.x first casts both to their common type with float32 and adds that type's epsilon,
// computing in it (float32 for fp16/bf16/fp32 data).
void relativeErrors(MsprobeGeneration g, const std::vector<float>& a, const std::vector<float>& b, DType da, DType db,
                    double& maxRel, double& r1, double& r5) {
    const bool f32 = g == MsprobeGeneration::V26 && float32OrNarrower(da) && float32OrNarrower(db);
    const double eps = g == MsprobeGeneration::V26 && f32 ? FLT_EPSILON : DBL_EPSILON;
    const DType ta = g == MsprobeGeneration::V26 ? (f32 ? DType::Float32 : DType::Float64) : da;
    const DType tb = g == MsprobeGeneration::V26 ? (f32 ? DType::Float32 : DType::Float64) : db;
    std::size_t c1 = 0, c5 = 0;
    maxRel = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const float x = std::isfinite(a[i]) ? a[i] : 0.0f, y = std::isfinite(b[i]) ? b[i] : 0.0f;
        const double xn = y == 0 ? addEps(x, eps, ta) : x, yn = y == 0 ? addEps(y, eps, tb) : y;
        const double rel = f32 ? std::fabs(double((float(xn) - float(yn)) / float(yn))) : std::fabs((xn - yn) / yn);
        maxRel = std::isnan(rel) || std::isnan(maxRel) ? NAN : std::max(maxRel, rel);
        c1 += rel < 0.001, c5 += rel < 0.005;
    }
    r1 = double(c1) / double(a.size());
    r5 = double(c5) / double(a.size());
}

void cellsV8(const MsprobeArg& n, const MsprobeArg* nb, ArgData sa, ArgData sb, Row& r) {
    auto& cells = r.metrics;
    std::string& err = r.metricErr;
    cells.assign(6, kNA);
    if (n.dataName == "-1") {
        cells.assign(6, kUnsupported);
        err += "NPU does not have data file.";
        return;
    }
    if (nb && nb->dataName == "-1") {
        cells.assign(6, kUnsupported);
        err += "Bench does not have data file.";
        return;
    }
    if (!nb) {
        cells.assign(6, kUnsupported);
        err += "Bench api/module unmatched.";
        return;
    }
    std::vector<float> va, vb;
    if (!load(sa, va) || !load(sb, vb)) {
        cells.assign(6, kUnsupported);
        err += "Dump file: " + pyList({n.dataName, nb->dataName}) + " not found or read failed.";
        return;
    }
    if (va.empty()) {
        cells.assign(6, kUnsupported);
        err += "This is empty data, can not compare.";
        return;
    }
    if (sa.t->ndim == 0) {
        // compare_ops_apply appends each op's message to the running one, and the 0-d message comes
        // back from Cosine, EucDist and both ratios: 16 copies, as 8.3.3 writes it.
        std::string msg = kZeroDim, extra;
        zeroDimAbsRel(va[0], vb[0], DBL_EPSILON, cells[2], cells[3], extra);
        cells[0] = cells[1] = cells[4] = cells[5] = kUnsupported;
        for (int i = 0; i < 4; ++i) msg += msg;
        err += msg + extra;
        return;
    }
    if (va.size() != vb.size()) {
        cells.assign(6, "shape unmatched");
        err += "Shape of NPU and bench tensor do not match. Skipped.";
        return;
    }
    TensorMetrics m;
    computeDataMetrics(va.data(), vb.data(), va.size(), false, m);
    if (m.nanInfMismatch) {
        err += "The position of inf or nan in NPU and bench Tensor do not match.";
        return;  // every metric N/A
    }
    if (numpyDtype(sa.t->dtype) != numpyDtype(sb.t->dtype)) err += "Dtype of NPU and bench tensor do not match.";
    if (va.size() == 1) {
        cells[0] = kUnsupported;
        err += "This is a 1-d tensor of length 1.";
    } else {
        std::string msg;
        cells[0] = cosineCell(va, vb, m.cosine, msg);
        err += msg;
    }
    cells[1] = pythonFloatText(m.eucDist);
    cells[2] = formatValue(m.maxAbsErr);
    double maxRel = 0, r1 = 0, r5 = 0;
    relativeErrors(MsprobeGeneration::V8_3, va, vb, numpyDtype(sa.t->dtype), numpyDtype(sb.t->dtype), maxRel, r1, r5);
    if (std::isnan(maxRel)) err += "Cannot compare by MaxRelativeError, the data contains nan/inf/-inf in dump data.";
    cells[3] = std::isnan(maxRel) ? std::string(kNan) : formatValue(maxRel);
    cells[4] = formatValue(r1);
    cells[5] = formatValue(r5);
}

void cellsV26(const MsprobeArg& n, const MsprobeArg* nb, ArgData sa, ArgData sb, Row& r) {
    auto& cells = r.metrics;
    cells.assign(6, kUnsupported);  // no data file, unmatched, unreadable, empty
    if (n.dataName == "-1" || !nb || nb->dataName == "-1") return;
    std::vector<float> va, vb;
    if (!load(sa, va) || !load(sb, vb) || va.empty() || vb.empty()) return;
    const bool f32 = float32OrNarrower(numpyDtype(sa.t->dtype)) && float32OrNarrower(numpyDtype(sb.t->dtype));
    std::string msg;
    if (sa.t->ndim == 0 || sb.t->ndim == 0) {
        // The 0-d check ends the validation before the NaN/Inf handling, as in 8.3.
        zeroDimAbsRel(va[0], vb[0], f32 ? FLT_EPSILON : DBL_EPSILON, cells[2], cells[3], msg);
        return;
    }
    if (va.size() != vb.size()) {
        cells.assign(6, "shape unmatched");
        return;
    }
    TensorMetrics m;
    computeDataMetrics(va.data(), vb.data(), va.size(), false, m);
    if (m.nanInfMismatch) {
        cells.assign(6, kNA);
        return;
    }
    cells[0] = va.size() == 1 ? std::string(kUnsupported) : cosineCell(va, vb, m.cosine, msg);
    cells[1] = pythonFloatText(m.eucDist);
    cells[2] = formatValue(m.maxAbsErr);
    double maxRel = 0, r1 = 0, r5 = 0;
    relativeErrors(MsprobeGeneration::V26, va, vb, numpyDtype(sa.t->dtype), numpyDtype(sb.t->dtype), maxRel, r1, r5);
    cells[3] = std::isnan(maxRel) ? std::string(kNan) : formatValue(maxRel);
    cells[4] = formatValue(r1);
    cells[5] = formatValue(r5);
}

}  // namespace

void tensorCells(MsprobeGeneration g, const MsprobeArg& npu, const MsprobeArg* bench, ArgData a, ArgData b, Row& r) {
    if (g == MsprobeGeneration::V8_3)
        cellsV8(npu, bench, a, b, r);
    else
        cellsV26(npu, bench, a, b, r);
}

}  // namespace dl::msprobe_table

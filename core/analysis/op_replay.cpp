#include "core/analysis/op_replay.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>

#include "core/analysis/tensor_anomaly.h"
#include "core/formats/msprobe/msprobe_call_args.h"
#include "core/index/tensor_location.h"
#include "core/index/tensor_values.h"
#include "core/util/half.h"
#include "core/util/text.h"

namespace dl {

namespace {

using Shape = std::vector<std::int64_t>;
using Rounder = std::function<float(float)>;

Rounder rounderFor(DType d, bool saturating) {
    if (d == DType::Float16) return saturating ? Rounder(roundToHalfSaturating) : Rounder(roundToHalf);
    if (d == DType::BFloat16) return Rounder(roundToBf16);
    return [](float f) { return f; };
}

std::string fmtNum(double v) { return shortNumber(v); }

// Judges one precision's raw (unrounded) output.
ReplayPrecisionResult judge(DType d, const std::vector<float>& raw, bool saturating, std::vector<float>& stored) {
    ReplayPrecisionResult r;
    r.dtype = d;
    const Rounder ieee = rounderFor(d, false), store = rounderFor(d, saturating);
    stored.resize(raw.size());
    double maxAbs = 0, maxRaw = 0;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        const float v = raw[i], rounded = ieee(v);
        stored[i] = store(v);
        if (std::isfinite(v)) maxRaw = std::max(maxRaw, double(std::fabs(v)));
        if (std::isnan(v))
            ++r.nanCount;
        else if (std::isinf(rounded)) {
            if (std::isinf(stored[i]))
                ++r.infCount;
            else
                ++r.saturatedCount;
        }
        if (std::isfinite(stored[i])) maxAbs = std::max(maxAbs, double(std::fabs(stored[i])));
    }
    r.overflow = r.nanCount + r.infCount + r.saturatedCount > 0;
    r.maxAbs = r.nanCount + r.infCount > 0 ? std::numeric_limits<double>::quiet_NaN() : maxAbs;
    r.maxAbsUnrounded = maxRaw;
    return r;
}

double relativeError(const std::vector<float>& y, const std::vector<float>& ref) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < y.size() && i < ref.size(); ++i) {
        // Inf/NaN where fp32 is finite is not "no error": the fp16 row of an Inf overflow read 0.
        if (!std::isfinite(y[i]) && std::isfinite(ref[i])) return std::numeric_limits<double>::infinity();
        if (!std::isfinite(y[i]) || !std::isfinite(ref[i])) continue;
        num += (double(y[i]) - ref[i]) * (double(y[i]) - ref[i]);
        den += double(ref[i]) * ref[i];
    }
    return den > 0 ? std::sqrt(num / den) : (num > 0 ? 1.0 : 0.0);
}

double meanAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
    double s = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
        if (std::isfinite(a[i]) && std::isfinite(b[i])) {
            s += std::fabs(double(a[i]) - b[i]);
            ++n;
        }
    return n ? s / double(n) : std::numeric_limits<double>::infinity();
}

std::vector<ReplayTensor> roundInputs(const std::vector<ReplayTensor>& in, DType d, bool saturating) {
    std::vector<ReplayTensor> out = in;
    const Rounder r = rounderFor(d, saturating);
    for (ReplayTensor& t : out)
        if (!t.integer)
            for (float& v : t.data) v = r(v);
    return out;
}

// MatMul with square shapes: the dumped output decides between transpose readings.
KernelHints pickTranspose(std::string_view type, const std::vector<ReplayTensor>& in,
                          const std::vector<Shape>& outShapes, const ReplayTensor* dumped,
                          std::vector<std::string>& notes) {
    KernelHints hints;
    const std::string k = replayKernelName(type);
    if ((k != "MatMul" && k != "BatchMatMul") || in.size() < 2) return hints;
    const auto cands = matmulTransposeCandidates(in[0].shape, in[1].shape, outShapes.empty() ? Shape{} : outShapes[0]);
    if (cands.size() < 2 || !dumped) return hints;
    double best = std::numeric_limits<double>::infinity();
    for (auto [ta, tb] : cands) {
        KernelRun run;
        std::string err;
        if (!runKernel(type, in, outShapes, KernelHints{ta, tb}, run, err) || run.outputs.empty()) continue;
        const double d = meanAbsDiff(run.outputs[0].data, dumped->data);
        if (d < best) {
            best = d;
            hints = KernelHints{ta, tb};
        }
    }
    if (hints.transposeA >= 0)
        notes.push_back("transpose flags ambiguous from shapes; chose the reading closest to the dumped output");
    return hints;
}

void recommend(ReplayResult& r, double tol) {
    const ReplayPrecisionResult &f16 = r.results[0], &bf16 = r.results[1], &f32 = r.results[2];
    r.recommendationFromReplay = true;
    if (!f16.overflow) {
        r.recommendation = "the fp16 replay does not overflow (max |y| " + fmtNum(f16.maxAbsUnrounded) +
            "): the dumped inputs or the assumed attributes do not reproduce the dump; no precision "
            "change can be proven from this replay";
        r.recommendationFromReplay = false;
    } else if (!bf16.overflow && bf16.relErrVsFp32 >= 0 && bf16.relErrVsFp32 <= tol) {
        r.recommendation = "run " + r.opType + " in bfloat16: max |y| " + fmtNum(bf16.maxAbsUnrounded) +
            " fits, relative error against fp32 " + fmtNum(bf16.relErrVsFp32);
    } else if (!f32.overflow) {
        r.recommendation = "run " + r.opType + " in float32: " +
            (bf16.overflow ? std::string("bfloat16 overflows too")
                           : "bfloat16 loses too much (relative error " + fmtNum(bf16.relErrVsFp32) + ")") +
            ", fp32 max |y| " + fmtNum(f32.maxAbsUnrounded);
    } else {
        r.recommendation =
            "even the fp32 replay overflows: the inputs are already out of range; fix upstream "
            "(loss scale, gradient clipping, the producer of the inputs)";
    }
}

}  // namespace

ReplayResult replayOp(std::string_view opType, const std::vector<ReplayTensor>& inputs,
                      const std::vector<Shape>& outShapes, std::size_t slot, const ReplayTensor* dumped,
                      DType dumpedDtype, const ReplayOptions& options) {
    ReplayResult r;
    r.opType = std::string(opType);
    r.saturatingFp16 = options.saturatingFp16;
    if (replayKernelName(opType).empty()) {
        r.unavailableReason = "no replay kernel for " + r.opType;
        return r;
    }
    for (const ReplayTensor& t : inputs)
        if (t.data.size() > options.maxElements) {
            r.unavailableReason = "inputs too large to replay on the CPU";
            return r;
        }
    const std::string k = replayKernelName(opType);
    if ((k == "MatMul" || k == "BatchMatMul") && !outShapes.empty() && inputs.size() >= 2 &&
        inputs[0].shape.size() >= 2) {
        const double macs = double(numElements(outShapes[0])) * double(inputs[0].shape.back() * 1.0);
        if (macs > options.maxMacs) {
            r.unavailableReason = "matmul too large to replay on the CPU (" + fmtNum(macs) + " MACs)";
            return r;
        }
    }
    const KernelHints hints = pickTranspose(opType, inputs, outShapes, dumped, r.notes);
    std::vector<std::vector<float>> stored(3);
    const DType precisions[3] = {DType::Float16, DType::BFloat16, DType::Float32};
    for (int p = 0; p < 3; ++p) {
        KernelRun run;
        std::string error;
        if (!runKernel(opType, roundInputs(inputs, precisions[p], options.saturatingFp16), outShapes, hints, run,
                       error)) {
            r.results.clear();
            r.unavailableReason = "replay failed: " + error;
            return r;
        }
        if (slot >= run.outputs.size()) {
            r.unavailableReason = "the op has no output " + std::to_string(slot) + " to replay";
            return r;
        }
        if (p == 0)
            for (const std::string& n : run.notes) r.notes.push_back(n);
        r.results.push_back(judge(precisions[p], run.outputs[slot].data, options.saturatingFp16, stored[p]));
    }
    for (int p = 0; p < 3; ++p) r.results[p].relErrVsFp32 = p == 2 ? 0.0 : relativeError(stored[p], stored[2]);
    r.available = true;
    r.reproducesOverflow = r.results[0].overflow;
    if (dumped && dumped->data.size() == stored[0].size()) {
        const int p = dumpedDtype == DType::BFloat16 ? 1 : (dumpedDtype == DType::Float32 ? 2 : 0);
        double md = 0;
        for (std::size_t i = 0; i < stored[p].size(); ++i)
            if (std::isfinite(stored[p][i]) && std::isfinite(dumped->data[i]))
                md = std::max(md, std::fabs(double(stored[p][i]) - dumped->data[i]));
        r.maxDiffVsDump = md;
    }
    recommend(r, options.bf16Tolerance);
    return r;
}

namespace {

// In its logical shape: device layouts are undone (their padding dropped) before the replay.
bool loadTensor(const DumpIndex& index, const TensorRecord& t, ReplayTensor& out, std::vector<std::string>& notes,
                std::string& error) {
    TensorValues v;
    if (!loadTensorValues(index, t, v, error)) return false;
    out.shape = std::move(v.shape);
    out.data = std::move(v.data);
    out.integer = !isFloating(t.dtype);
    if (!v.conversion.empty()) notes.push_back(tensorLabel(index, t) + " read from " + v.conversion);
    return true;
}

// The dump.json of an msprobe tensor's folder (dump_tensor_data/ sits beside it), "" for other dumps.
std::string msprobeDumpJsonOf(const DumpIndex& index, const TensorRecord& t) {
    namespace fs = std::filesystem;
    const fs::path file = tensorDataPath(index, t);
    if (file.parent_path().filename() != "dump_tensor_data") return {};
    std::error_code ec;
    for (const char* name : {"dump.json", "debug.json"})
        if (const fs::path p = file.parent_path().parent_path() / name; fs::is_regular_file(p, ec)) return p.string();
    return {};
}

std::string numberText(double v) { return shortNumber(v); }

// Rebuilds the operands of an msprobe call from its dump.json arguments. Elementwise binary ops
// take them by position (a Python number or list becomes a 0-d or 1-D operand, never rounded to
// the replay precision: PyTorch computes tensor-scalar ops in its float opmath type); the other
// kernels keep the dumped tensors by slot, and only refuse arguments they would misread.
bool msprobeOperands(const std::string& opType, const std::string& json, std::string_view entry,
                     std::vector<ReplayTensor>& inputs, std::vector<std::string>& notes, std::string& error) {
    std::vector<MsprobeCallArg> args;
    if (!readMsprobeCallArgs(json, entry, args, error)) return false;
    const std::string k = replayKernelName(opType);
    auto argName = [](const MsprobeCallArg& a) {
        return a.position >= 0 ? "argument " + std::to_string(a.position) : "keyword argument " + a.keyword;
    };
    if (k == "Softmax") {
        // The kernel normalises the last axis; a dim that names another axis would be misread.
        for (const MsprobeCallArg& a : args) {
            if (!(a.position == 1 || a.keyword == "dim") || a.kind != MsprobeCallArg::Kind::Number) continue;
            const double d = a.numbers[0];
            const double rank = double(inputs.empty() ? 0 : inputs[0].shape.size());
            if (d != -1 && d != rank - 1) {
                error = "softmax over dim " + numberText(d) + ": the replay computes softmax over the last axis only";
                return false;
            }
        }
        return true;
    }
    if (k != "Mul" && k != "Add" && k != "Sub" && k != "Div" && k != "Pow") return true;
    std::vector<ReplayTensor> operands;
    auto place = [&](std::size_t pos, ReplayTensor t) {
        if (operands.size() <= pos) operands.resize(pos + 1);
        operands[pos] = std::move(t);
    };
    std::vector<bool> filled;
    for (const MsprobeCallArg& a : args) {
        int pos = a.position;
        if (pos < 0) {
            if (a.keyword == "input" || a.keyword == "self")
                pos = 0;
            else if (a.keyword == "other" || a.keyword == "exponent")
                pos = 1;
            else if (a.kind == MsprobeCallArg::Kind::None)
                continue;  // out=None and the like
            else if (a.keyword == "alpha" && a.kind == MsprobeCallArg::Kind::Number && a.numbers[0] == 1)
                continue;
            else {
                error = argName(a) + " (" + a.type + ") is not modelled by the replay of " + k;
                return false;
            }
        }
        ReplayTensor t;
        switch (a.kind) {
            case MsprobeCallArg::Kind::Tensor:
                if (a.tensorSlot < 0 || std::size_t(a.tensorSlot) >= inputs.size() ||
                    (inputs[a.tensorSlot].shape.empty() && inputs[a.tensorSlot].data.empty())) {
                    error = argName(a) + ": its tensor was not dumped";
                    return false;
                }
                t = inputs[a.tensorSlot];
                break;
            case MsprobeCallArg::Kind::Number:
            case MsprobeCallArg::Kind::List:
                t.data.assign(a.numbers.begin(), a.numbers.end());
                if (a.kind == MsprobeCallArg::Kind::List) t.shape = {std::int64_t(a.numbers.size())};
                t.integer = true;
                notes.push_back(argName(a) + " = " +
                                (a.kind == MsprobeCallArg::Kind::Number
                                     ? numberText(a.numbers[0])
                                     : "a list of " + std::to_string(a.numbers.size())) +
                                " (" + a.type + ", from dump.json)");
                break;
            default:
                error = argName(a) + " (" + (a.type.empty() ? "unknown" : a.type) + ") is neither a tensor nor numbers";
                return false;
        }
        if (filled.size() <= std::size_t(pos)) filled.resize(pos + 1);
        if (filled[pos]) {
            error = argName(a) + " given twice";
            return false;
        }
        filled[pos] = true;
        place(std::size_t(pos), std::move(t));
    }
    for (std::size_t i = 0; i < 2; ++i)
        if (i >= filled.size() || !filled[i]) {
            error = k + " operand " + std::to_string(i) + " is missing from dump.json";
            return false;
        }
    inputs = std::move(operands);
    return true;
}

}  // namespace

std::string headroomRecommendation(const DumpIndex& index, std::uint32_t op) {
    if (op >= index.ops.size()) return "";
    const OpRecord& o = index.ops[op];
    double inMax = -1, outMax = -1;
    for (std::uint32_t i = 0; i < o.tensorCount; ++i) {
        const TensorRecord& t = index.tensors[o.firstTensor + i];
        const TensorAnomaly a = classifyTensor(index, t);
        if (!std::isfinite(a.maxAbs)) continue;
        (t.io == Io::Input ? inMax : outMax) = std::max(t.io == Io::Input ? inMax : outMax, a.maxAbs);
    }
    std::string s = "rule of thumb, not a replay: ";
    if (inMax >= 0) {
        // The share of 65504 they reach and the headroom, the room left below it.
        char pct[80];
        std::snprintf(pct, sizeof pct, " (%.1f%% of fp16 max, headroom %.1f%%); ", 100 * inMax / kFp16Max,
                      100 * (1 - inMax / kFp16Max));
        s += "inputs reach max |x| " + fmtNum(inMax) + pct;
    }
    if (outMax >= 0) s += "finite outputs reach " + fmtNum(outMax) + "; ";
    return s + "bfloat16 keeps fp32's exponent range (3.4e38), so running " + index.strings.str(o.type) +
        " in bfloat16 removes an fp16 range overflow at the cost of precision; use float32 if it is "
        "precision-sensitive";
}

ReplayResult replayFromIndex(const DumpIndex& index, std::uint32_t op, std::uint32_t tensor,
                             const ReplayOptions& options) {
    ReplayResult r;
    r.op = op;
    if (op >= index.ops.size()) {
        r.unavailableReason = "no such op";
        return r;
    }
    const OpRecord& o = index.ops[op];
    r.opType = index.strings.str(o.type);
    r.saturatingFp16 = options.saturatingFp16;
    // The reason alone ("no replay kernel for X"): its readers say "unavailable" before it.
    auto unavailable = [&](std::string why) {
        r.unavailableReason = std::move(why);
        r.recommendation = headroomRecommendation(index, op);
        r.recommendationFromReplay = false;
        return r;
    };
    if (replayKernelName(r.opType).empty()) return unavailable("no replay kernel for " + r.opType);
    std::vector<ReplayTensor> inputs;
    std::vector<Shape> outShapes;
    std::vector<std::string> loadNotes;
    std::size_t slot = 0;
    const TensorRecord* judged = nullptr;
    const TensorRecord* anyInput = nullptr;
    std::string error;
    for (std::uint32_t i = 0; i < o.tensorCount; ++i) {
        const std::uint32_t ti = o.firstTensor + i;
        const TensorRecord& t = index.tensors[ti];
        if (t.io == Io::Output) {
            if (outShapes.size() <= t.slot) outShapes.resize(t.slot + 1);
            outShapes[t.slot] = logicalShape(index, t);
            if (ti == tensor || (tensor == kNoIndex && !judged)) {
                judged = &t;
                slot = t.slot;
            }
            continue;
        }
        ReplayTensor rt;
        if (!loadTensor(index, t, rt, loadNotes, error)) return unavailable(error);
        if (inputs.size() <= t.slot) inputs.resize(t.slot + 1);
        inputs[t.slot] = std::move(rt);
        anyInput = &t;
    }
    // anyInput is set with the first input loaded, so null exactly when `inputs` is empty.
    if (!anyInput) return unavailable("the op's inputs were not dumped");
    // msprobe keeps Python numbers and lists in dump.json only: the call's operands come from there.
    if (const std::string json = msprobeDumpJsonOf(index, *anyInput); !json.empty())
        if (!msprobeOperands(r.opType, json, index.strings.view(o.name), inputs, loadNotes, error))
            return unavailable(error);
    ReplayTensor dumped;
    const bool haveDumped = judged && loadTensor(index, *judged, dumped, loadNotes, error);
    ReplayResult res = replayOp(r.opType, inputs, outShapes, slot, haveDumped ? &dumped : nullptr,
                                judged ? judged->dtype : DType::Float16, options);
    res.op = op;
    res.notes.insert(res.notes.begin(), loadNotes.begin(), loadNotes.end());
    if (!res.available) {
        r.notes = res.notes;
        return unavailable(res.unavailableReason);
    }
    return res;
}

}  // namespace dl

#include "core/analysis/replay_kernels.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>

namespace dl {

std::uint64_t numElements(const std::vector<std::int64_t>& shape) {
    std::uint64_t n = 1;
    for (std::int64_t d : shape) n *= std::uint64_t(std::max<std::int64_t>(d, 0));
    return n;
}

namespace {

using Shape = std::vector<std::int64_t>;

bool broadcastShape(const Shape& a, const Shape& b, Shape& out) {
    const std::size_t nd = std::max(a.size(), b.size());
    out.assign(nd, 1);
    for (std::size_t i = 0; i < nd; ++i) {
        const std::int64_t da = i < nd - a.size() ? 1 : a[i - (nd - a.size())];
        const std::int64_t db = i < nd - b.size() ? 1 : b[i - (nd - b.size())];
        if (da != db && da != 1 && db != 1) return false;
        out[i] = da == 1 ? db : da;
    }
    return true;
}

// Strides of `s` seen through the broadcast shape `out` (0 along broadcast dims).
std::vector<std::uint64_t> broadcastStrides(const Shape& s, const Shape& out) {
    std::vector<std::uint64_t> st(out.size(), 0);
    std::uint64_t stride = 1;
    for (std::size_t k = 0; k < s.size(); ++k) {
        const std::size_t i = s.size() - 1 - k, o = out.size() - 1 - k;
        st[o] = s[i] == 1 ? 0 : stride;
        stride *= std::uint64_t(s[i]);
    }
    return st;
}

bool binary(const ReplayTensor& a, const ReplayTensor& b, const std::function<double(double, double)>& f,
            ReplayTensor& out, std::string& error) {
    if (!broadcastShape(a.shape, b.shape, out.shape)) {
        error = "input shapes do not broadcast";
        return false;
    }
    const std::uint64_t n = numElements(out.shape);
    if (a.data.size() != numElements(a.shape) || b.data.size() != numElements(b.shape)) {
        error = "input data does not match its shape";
        return false;
    }
    const auto sa = broadcastStrides(a.shape, out.shape), sb = broadcastStrides(b.shape, out.shape);
    out.data.resize(n);
    std::vector<std::int64_t> idx(out.shape.size(), 0);
    std::uint64_t ia = 0, ib = 0;
    for (std::uint64_t e = 0; e < n; ++e) {
        out.data[e] = float(f(a.data[ia], b.data[ib]));
        for (std::size_t d = out.shape.size(); d-- > 0;) {  // odometer increment
            ++idx[d];
            ia += sa[d];
            ib += sb[d];
            if (idx[d] < out.shape[d]) break;
            ia -= sa[d] * std::uint64_t(idx[d]);
            ib -= sb[d] * std::uint64_t(idx[d]);
            idx[d] = 0;
        }
    }
    return true;
}

void unary(const ReplayTensor& a, const std::function<double(double)>& f, ReplayTensor& out) {
    out.shape = a.shape;
    out.data.resize(a.data.size());
    for (std::size_t i = 0; i < a.data.size(); ++i) out.data[i] = float(f(a.data[i]));
}

void reduce(const ReplayTensor& in, const std::vector<int>& axes, bool mean, const Shape& outShape, ReplayTensor& out) {
    Shape keep = in.shape;
    std::uint64_t count = 1;
    for (int a : axes) {
        count *= std::uint64_t(keep[a]);
        keep[a] = 1;
    }
    std::vector<double> acc(numElements(keep), 0.0);
    const auto st = broadcastStrides(keep, in.shape);
    std::vector<std::int64_t> idx(in.shape.size(), 0);
    std::uint64_t o = 0;
    for (float v : in.data) {
        acc[o] += v;
        for (std::size_t d = in.shape.size(); d-- > 0;) {
            ++idx[d];
            o += st[d];
            if (idx[d] < in.shape[d]) break;
            o -= st[d] * std::uint64_t(idx[d]);
            idx[d] = 0;
        }
    }
    out.shape = outShape.empty() && numElements(keep) != 1 ? keep : outShape;
    if (numElements(out.shape) != acc.size()) out.shape = keep;
    out.data.resize(acc.size());
    for (std::size_t i = 0; i < acc.size(); ++i) out.data[i] = float(mean && count ? acc[i] / double(count) : acc[i]);
}

bool reduceOp(const std::vector<ReplayTensor>& in, const std::vector<Shape>& outShapes, bool mean, KernelRun& run,
              std::string& error) {
    const ReplayTensor& x = in[0];
    std::vector<int> axes;
    bool ambiguous = false;
    if (in.size() > 1 && in[1].integer && !in[1].data.empty()) {
        for (float a : in[1].data) {  // the axis input as dumped
            const int ax = int(a) < 0 ? int(a) + int(x.shape.size()) : int(a);
            if (ax < 0 || ax >= int(x.shape.size())) {
                error = "reduction axis out of range";
                return false;
            }
            if (std::find(axes.begin(), axes.end(), ax) == axes.end()) axes.push_back(ax);
        }
        run.notes.push_back("reduction axes from the dumped axis input");
    } else if (!outShapes.empty()) {
        if (!inferReduceAxes(x.shape, outShapes[0], axes, ambiguous)) {
            error = "cannot infer the reduction axes from the input and output shapes";
            return false;
        }
        run.notes.push_back("reduction axes inferred from shapes" +
                            std::string(ambiguous ? " (ambiguous, first fit used)" : ""));
    } else {
        for (int i = 0; i < int(x.shape.size()); ++i) axes.push_back(i);
        run.notes.push_back("no output shape: reduced over all axes");
        ambiguous = true;
    }
    run.ambiguous = ambiguous;
    run.outputs.emplace_back();
    reduce(x, axes, mean, outShapes.empty() ? Shape{} : outShapes[0], run.outputs.back());
    return true;
}

bool matmul(const ReplayTensor& a, const ReplayTensor& b, const std::vector<Shape>& outShapes, const KernelHints& hints,
            KernelRun& run, std::string& error) {
    if (a.shape.size() < 2 || b.shape.size() < 2) {
        error = "matmul inputs need at least 2 dimensions";
        return false;
    }
    const Shape out0 = outShapes.empty() ? Shape{} : outShapes[0];
    auto cands = matmulTransposeCandidates(a.shape, b.shape, out0);
    if (hints.transposeA >= 0 || hints.transposeB >= 0)
        std::erase_if(cands, [&](auto c) {
            return (hints.transposeA >= 0 && c.first != bool(hints.transposeA)) ||
                (hints.transposeB >= 0 && c.second != bool(hints.transposeB));
        });
    if (cands.empty()) {
        error = "no transpose flags make the matmul shapes agree";
        return false;
    }
    run.ambiguous = cands.size() > 1;
    const auto [ta, tb] = cands.front();
    run.notes.push_back(std::string("transpose_a=") + (ta ? "true" : "false") +
                        ", transpose_b=" + (tb ? "true" : "false") +
                        (run.ambiguous ? " (ambiguous: square shapes fit several flags)" : " (inferred from shapes)"));
    const std::size_t na = a.shape.size(), nb = b.shape.size();
    const std::int64_t M = ta ? a.shape[na - 1] : a.shape[na - 2], K = ta ? a.shape[na - 2] : a.shape[na - 1];
    const std::int64_t N = tb ? b.shape[nb - 2] : b.shape[nb - 1];
    Shape batchA(a.shape.begin(), a.shape.end() - 2), batchB(b.shape.begin(), b.shape.end() - 2), batch;
    if (!broadcastShape(batchA, batchB, batch)) {
        error = "matmul batch dimensions do not broadcast";
        return false;
    }
    const auto sa = broadcastStrides(batchA, batch), sb = broadcastStrides(batchB, batch);
    ReplayTensor out;
    out.shape = batch;
    out.shape.push_back(M);
    out.shape.push_back(N);
    const std::uint64_t nBatch = numElements(batch);
    out.data.assign(nBatch * std::uint64_t(M * N), 0.f);
    std::vector<double> row(static_cast<std::size_t>(N));
    for (std::uint64_t bi = 0; bi < nBatch; ++bi) {
        std::uint64_t oa = 0, ob = 0, rem = bi;
        for (std::size_t d = batch.size(); d-- > 0;) {
            const std::uint64_t i = rem % std::uint64_t(batch[d]);
            rem /= std::uint64_t(batch[d]);
            oa += i * sa[d];
            ob += i * sb[d];
        }
        const float* A = a.data.data() + oa * std::uint64_t(M * K);
        const float* B = b.data.data() + ob * std::uint64_t(K * N);
        for (std::int64_t m = 0; m < M; ++m) {
            std::fill(row.begin(), row.end(), 0.0);
            for (std::int64_t k = 0; k < K; ++k) {
                const double av = ta ? A[k * M + m] : A[m * K + k];
                for (std::int64_t n = 0; n < N; ++n) row[n] += av * (tb ? B[n * K + k] : B[k * N + n]);
            }
            for (std::int64_t n = 0; n < N; ++n) out.data[(bi * M + m) * N + n] = float(row[n]);
        }
    }
    run.outputs.push_back(std::move(out));
    return true;
}

std::string canonical(std::string_view s) {
    std::string t;
    for (char c : s)
        if (std::isalnum(static_cast<unsigned char>(c))) t += char(std::tolower(static_cast<unsigned char>(c)));
    // Version suffixes (LayerNormV3, SoftmaxV2) do not change the math.
    while (t.size() > 2 && t[t.size() - 2] == 'v' && std::isdigit(static_cast<unsigned char>(t.back())))
        t.resize(t.size() - 2);
    if (t.size() > 3 && t.ends_with("ext")) t.resize(t.size() - 3);
    return t;
}

}  // namespace

std::string replayKernelName(std::string_view opType) {
    static const std::pair<const char*, const char*> kNames[] = {
        {"sqrtgrad", "SqrtGrad"},
        {"rsqrtgrad", "RsqrtGrad"},
        {"sqrt", "Sqrt"},
        {"rsqrt", "Rsqrt"},
        {"realdiv", "Div"},
        {"div", "Div"},
        {"mul", "Mul"},
        {"add", "Add"},
        {"sub", "Sub"},
        // PyTorch spellings (msprobe's Tensor.__truediv__, torch.multiply ...); __rmul__ and
        // __radd__ commute, the other reflected ones (__rsub__, __rtruediv__) are left out.
        {"truediv", "Div"},
        {"divide", "Div"},
        {"multiply", "Mul"},
        {"subtract", "Sub"},
        {"rmul", "Mul"},
        {"radd", "Add"},
        {"square", "Square"},
        {"exp", "Exp"},
        {"log", "Log"},
        {"pow", "Pow"},
        {"reducesum", "ReduceSum"},
        {"reducemean", "ReduceMean"},
        {"softmax", "Softmax"},
        {"softmaxgrad", "SoftmaxGrad"},
        {"matmul", "MatMul"},
        {"batchmatmul", "BatchMatMul"},
        {"cast", "Cast"},
        {"layernorm", "LayerNorm"},
        {"layernormgrad", "LayerNormGrad"},
        {"rmsnorm", "RmsNorm"},
        {"rmsnormgrad", "RmsNormGrad"},
    };
    const std::string t = canonical(opType);
    for (const auto& [key, name] : kNames)
        if (t == key) return name;
    return "";
}

std::vector<std::pair<bool, bool>> matmulTransposeCandidates(const Shape& a, const Shape& b, const Shape& out) {
    std::vector<std::pair<bool, bool>> c;
    if (a.size() < 2 || b.size() < 2) return c;
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            const std::int64_t M = ta ? a[a.size() - 1] : a[a.size() - 2], K = ta ? a[a.size() - 2] : a[a.size() - 1];
            const std::int64_t Kb = tb ? b[b.size() - 1] : b[b.size() - 2], N = tb ? b[b.size() - 2] : b[b.size() - 1];
            if (K != Kb) continue;
            if (out.size() >= 2 && (out[out.size() - 2] != M || out[out.size() - 1] != N)) continue;
            c.emplace_back(ta, tb);
        }
    return c;
}

bool inferReduceAxes(const Shape& in, const Shape& out, std::vector<int>& axes, bool& ambiguous) {
    axes.clear();
    ambiguous = false;
    if (numElements(out) == 1 && numElements(in) != 1) {
        for (int i = 0; i < int(in.size()); ++i)
            if (in[i] != 1) axes.push_back(i);
        return true;
    }
    if (out.size() == in.size()) {
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (out[i] == in[i]) continue;
            if (out[i] != 1) return false;
            axes.push_back(int(i));
        }
        return true;
    }
    if (out.size() > in.size()) return false;
    // Squeezed output: every way of deleting axes that leaves `out`; ignore size-1 axes.
    std::vector<std::vector<int>> fits;
    std::vector<int> cur;
    std::function<void(std::size_t, std::size_t)> walk = [&](std::size_t i, std::size_t j) {
        if (fits.size() > 8) return;
        if (i == in.size()) {
            if (j == out.size()) fits.push_back(cur);
            return;
        }
        if (j < out.size() && in[i] == out[j]) walk(i + 1, j + 1);
        cur.push_back(int(i));
        walk(i + 1, j);
        cur.pop_back();
    };
    walk(0, 0);
    if (fits.empty()) return false;
    auto nonTrivial = [&](const std::vector<int>& f) {
        std::vector<int> r;
        for (int a : f)
            if (in[a] != 1) r.push_back(a);
        return r;
    };
    axes = nonTrivial(fits.front());
    for (const auto& f : fits)
        if (nonTrivial(f) != axes) ambiguous = true;
    return true;
}

bool runKernel(std::string_view type, const std::vector<ReplayTensor>& in, const std::vector<Shape>& outShapes,
               const KernelHints& hints, KernelRun& run, std::string& error) {
    const std::string k = replayKernelName(type);
    if (k.empty()) {
        error = "no replay kernel for " + std::string(type);
        return false;
    }
    static const std::pair<const char*, int> kArity[] = {
        {"SqrtGrad", 2}, {"RsqrtGrad", 2}, {"Div", 2},    {"Mul", 2},         {"Add", 2},
        {"Sub", 2},      {"Pow", 2},       {"MatMul", 2}, {"BatchMatMul", 2}, {"SoftmaxGrad", 2}};
    std::size_t need = 1;
    for (const auto& [name, n] : kArity)
        if (k == name) need = std::size_t(n);
    if (in.size() < need) {
        error = k + " needs " + std::to_string(need) + " inputs, " + std::to_string(in.size()) + " dumped";
        return false;
    }
    for (std::size_t i = 0; i < need; ++i)
        if (in[i].data.size() != numElements(in[i].shape)) {
            error = "input data does not match its shape";
            return false;
        }
    run = KernelRun{};
    ReplayTensor out;
    using D = double;
    if (k == "SqrtGrad") {  // y = sqrt(x): dx = dy * 0.5 / y, inputs (y, dy)
        if (!binary(
                in[0], in[1], [](D y, D dy) { return dy * 0.5 / y; }, out, error))
            return false;
    } else if (k == "RsqrtGrad") {  // y = x^-1/2: dx = dy * -0.5 * y^3, inputs (y, dy)
        if (!binary(
                in[0], in[1], [](D y, D dy) { return dy * -0.5 * y * y * y; }, out, error))
            return false;
    } else if (k == "Div") {
        if (!binary(
                in[0], in[1], [](D a, D b) { return a / b; }, out, error))
            return false;
    } else if (k == "Mul") {
        if (!binary(
                in[0], in[1], [](D a, D b) { return a * b; }, out, error))
            return false;
    } else if (k == "Add") {
        if (!binary(
                in[0], in[1], [](D a, D b) { return a + b; }, out, error))
            return false;
    } else if (k == "Sub") {
        if (!binary(
                in[0], in[1], [](D a, D b) { return a - b; }, out, error))
            return false;
    } else if (k == "Pow") {
        if (!binary(
                in[0], in[1], [](D a, D b) { return std::pow(a, b); }, out, error))
            return false;
    } else if (k == "Sqrt") {
        unary(
            in[0], [](D x) { return std::sqrt(x); }, out);
    } else if (k == "Rsqrt") {
        unary(
            in[0], [](D x) { return 1.0 / std::sqrt(x); }, out);
    } else if (k == "Square") {
        unary(
            in[0], [](D x) { return x * x; }, out);
    } else if (k == "Exp") {
        unary(
            in[0], [](D x) { return std::exp(x); }, out);
    } else if (k == "Log") {
        unary(
            in[0], [](D x) { return std::log(x); }, out);
    } else if (k == "Cast") {
        unary(
            in[0], [](D x) { return x; }, out);  // the rounding is the cast
    } else if (k == "ReduceSum" || k == "ReduceMean") {
        return reduceOp(in, outShapes, k == "ReduceMean", run, error);
    } else if (k == "MatMul" || k == "BatchMatMul") {
        return matmul(in[0], in[1], outShapes, hints, run, error);
    } else if (k == "Softmax" || k == "SoftmaxGrad") {
        return runSoftmax(in, k == "SoftmaxGrad", run, error);
    } else if (k == "LayerNorm") {
        return runLayerNorm(in, outShapes, run, error);
    } else if (k == "LayerNormGrad") {
        return runLayerNormGrad(in, run, error);
    } else if (k == "RmsNorm") {
        return runRmsNorm(in, outShapes, run, error);
    } else if (k == "RmsNormGrad") {
        return runRmsNormGrad(in, run, error);
    }
    run.outputs.push_back(std::move(out));
    return true;
}

}  // namespace dl

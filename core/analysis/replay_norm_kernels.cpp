// Softmax, LayerNorm and RMSNorm replay kernels (forward and grad), over the trailing axes.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/analysis/replay_kernels.h"

namespace dl {

namespace {

using Shape = std::vector<std::int64_t>;

// MindSpore defaults; the dump does not carry attributes, so say what was assumed.
constexpr double kLayerNormEps = 1e-7;
constexpr double kRmsNormEps = 1e-6;

bool checkData(const std::vector<ReplayTensor>& in, std::size_t need, const char* op, std::string& error) {
    if (in.size() < need) {
        error =
            std::string(op) + " needs " + std::to_string(need) + " inputs, " + std::to_string(in.size()) + " dumped";
        return false;
    }
    for (std::size_t i = 0; i < need; ++i)
        if (in[i].data.size() != numElements(in[i].shape)) {
            error = "input data does not match its shape";
            return false;
        }
    return true;
}

// Length of the normalised trailing block: the size of `param` (gamma) or the last axis.
bool normSize(const ReplayTensor& x, const ReplayTensor* param, std::uint64_t& n, std::string& error) {
    n = param ? numElements(param->shape) : (x.shape.empty() ? 1 : std::uint64_t(x.shape.back()));
    if (n == 0 || x.data.size() % n != 0) {
        error = "normalised size does not divide the input";
        return false;
    }
    return true;
}

// Per-row statistics shape: the input with the normalised axes kept as 1.
Shape rowShape(const Shape& x, std::uint64_t n, const std::vector<Shape>& outShapes, std::size_t slot) {
    if (outShapes.size() > slot && numElements(outShapes[slot]) * n == numElements(x)) return outShapes[slot];
    Shape s = x;
    std::uint64_t left = n;
    for (std::size_t d = s.size(); d-- > 0 && left > 1;) {
        left /= std::uint64_t(std::max<std::int64_t>(s[d], 1));
        s[d] = 1;
    }
    return s;
}

}  // namespace

bool runSoftmax(const std::vector<ReplayTensor>& in, bool grad, KernelRun& run, std::string& error) {
    if (!checkData(in, grad ? 2 : 1, grad ? "SoftmaxGrad" : "Softmax", error)) return false;
    const ReplayTensor& x = in[0];
    std::uint64_t n = 0;
    if (!normSize(x, nullptr, n, error)) return false;
    if (grad && in[1].data.size() != x.data.size()) {
        error = "SoftmaxGrad inputs differ in size";
        return false;
    }
    ReplayTensor out;
    out.shape = x.shape;
    out.data.resize(x.data.size());
    for (std::uint64_t r = 0; r < x.data.size() / n; ++r) {
        const float* v = x.data.data() + r * n;
        float* o = out.data.data() + r * n;
        if (grad) {  // inputs (y, dy): dx = (dy - sum(dy * y)) * y
            const float* dy = in[1].data.data() + r * n;
            double dot = 0;
            for (std::uint64_t i = 0; i < n; ++i) dot += double(dy[i]) * v[i];
            for (std::uint64_t i = 0; i < n; ++i) o[i] = float((dy[i] - dot) * v[i]);
        } else {
            double mx = -INFINITY, sum = 0;
            for (std::uint64_t i = 0; i < n; ++i) mx = std::max(mx, double(v[i]));
            for (std::uint64_t i = 0; i < n; ++i) sum += std::exp(double(v[i]) - mx);
            for (std::uint64_t i = 0; i < n; ++i) o[i] = float(std::exp(double(v[i]) - mx) / sum);
        }
    }
    run.notes.push_back("softmax over the last axis (MindSpore default axis=-1)");
    run.outputs.push_back(std::move(out));
    return true;
}

bool runLayerNorm(const std::vector<ReplayTensor>& in, const std::vector<Shape>& outShapes, KernelRun& run,
                  std::string& error) {
    if (!checkData(in, 1, "LayerNorm", error)) return false;
    const ReplayTensor& x = in[0];
    const ReplayTensor* gamma = in.size() > 1 ? &in[1] : nullptr;
    const ReplayTensor* beta = in.size() > 2 ? &in[2] : nullptr;
    std::uint64_t n = 0;
    if (!normSize(x, gamma, n, error)) return false;
    if ((gamma && gamma->data.size() != n) || (beta && beta->data.size() != n)) {
        error = "gamma/beta size mismatch";
        return false;
    }
    const std::uint64_t rows = x.data.size() / n;
    ReplayTensor y, mean, var;
    y.shape = x.shape;
    y.data.resize(x.data.size());
    mean.shape = var.shape = rowShape(x.shape, n, outShapes, 1);
    mean.data.resize(rows);
    var.data.resize(rows);
    for (std::uint64_t r = 0; r < rows; ++r) {
        const float* v = x.data.data() + r * n;
        double m = 0, q = 0;
        for (std::uint64_t i = 0; i < n; ++i) m += v[i];
        m /= double(n);
        for (std::uint64_t i = 0; i < n; ++i) q += (v[i] - m) * (v[i] - m);
        q /= double(n);
        const double rstd = 1.0 / std::sqrt(q + kLayerNormEps);
        for (std::uint64_t i = 0; i < n; ++i)
            y.data[r * n + i] =
                float((v[i] - m) * rstd * (gamma ? gamma->data[i] : 1.0) + (beta ? beta->data[i] : 0.0));
        mean.data[r] = float(m);
        var.data[r] = float(q);
    }
    run.notes.push_back("epsilon 1e-7 assumed (MindSpore LayerNorm default); normalised over gamma's trailing axes");
    run.outputs.push_back(std::move(y));
    run.outputs.push_back(std::move(mean));
    run.outputs.push_back(std::move(var));
    return true;
}

bool runLayerNormGrad(const std::vector<ReplayTensor>& in, KernelRun& run, std::string& error) {
    // MindSpore LayerNormGrad inputs: (x, dy, variance, mean, gamma); outputs (dx, dgamma, dbeta).
    if (!checkData(in, 5, "LayerNormGrad", error)) return false;
    const ReplayTensor &x = in[0], &dy = in[1], &var = in[2], &mean = in[3], &gamma = in[4];
    std::uint64_t n = 0;
    if (!normSize(x, &gamma, n, error)) return false;
    const std::uint64_t rows = x.data.size() / n;
    if (dy.data.size() != x.data.size() || var.data.size() != rows || mean.data.size() != rows) {
        error = "LayerNormGrad input sizes do not agree";
        return false;
    }
    ReplayTensor dx, dg, db;
    dx.shape = x.shape;
    dx.data.resize(x.data.size());
    dg.shape = db.shape = gamma.shape;
    std::vector<double> sg(n, 0.0), sb(n, 0.0);
    for (std::uint64_t r = 0; r < rows; ++r) {
        const double rstd = 1.0 / std::sqrt(double(var.data[r]) + kLayerNormEps);
        double mg = 0, mgx = 0;
        for (std::uint64_t i = 0; i < n; ++i) {
            const double xh = (x.data[r * n + i] - mean.data[r]) * rstd, g = double(dy.data[r * n + i]) * gamma.data[i];
            mg += g;
            mgx += g * xh;
            sg[i] += double(dy.data[r * n + i]) * xh;
            sb[i] += dy.data[r * n + i];
        }
        mg /= double(n);
        mgx /= double(n);
        for (std::uint64_t i = 0; i < n; ++i) {
            const double xh = (x.data[r * n + i] - mean.data[r]) * rstd, g = double(dy.data[r * n + i]) * gamma.data[i];
            dx.data[r * n + i] = float(rstd * (g - mg - xh * mgx));
        }
    }
    dg.data.assign(sg.begin(), sg.end());
    db.data.assign(sb.begin(), sb.end());
    run.notes.push_back("epsilon 1e-7 assumed (MindSpore LayerNorm default)");
    run.outputs.push_back(std::move(dx));
    run.outputs.push_back(std::move(dg));
    run.outputs.push_back(std::move(db));
    return true;
}

bool runRmsNorm(const std::vector<ReplayTensor>& in, const std::vector<Shape>& outShapes, KernelRun& run,
                std::string& error) {
    if (!checkData(in, 2, "RmsNorm", error)) return false;
    const ReplayTensor &x = in[0], &gamma = in[1];
    std::uint64_t n = 0;
    if (!normSize(x, &gamma, n, error)) return false;
    const std::uint64_t rows = x.data.size() / n;
    ReplayTensor y, rstdOut;
    y.shape = x.shape;
    y.data.resize(x.data.size());
    rstdOut.shape = rowShape(x.shape, n, outShapes, 1);
    rstdOut.data.resize(rows);
    for (std::uint64_t r = 0; r < rows; ++r) {
        double ms = 0;
        for (std::uint64_t i = 0; i < n; ++i) ms += double(x.data[r * n + i]) * x.data[r * n + i];
        const double rstd = 1.0 / std::sqrt(ms / double(n) + kRmsNormEps);
        for (std::uint64_t i = 0; i < n; ++i) y.data[r * n + i] = float(x.data[r * n + i] * rstd * gamma.data[i]);
        rstdOut.data[r] = float(rstd);
    }
    run.notes.push_back("epsilon 1e-6 assumed (MindSpore RmsNorm default)");
    run.outputs.push_back(std::move(y));
    run.outputs.push_back(std::move(rstdOut));
    return true;
}

bool runRmsNormGrad(const std::vector<ReplayTensor>& in, KernelRun& run, std::string& error) {
    // MindSpore RmsNormGrad inputs: (dy, x, rstd, gamma); outputs (dx, dgamma).
    if (!checkData(in, 4, "RmsNormGrad", error)) return false;
    const ReplayTensor &dy = in[0], &x = in[1], &rstd = in[2], &gamma = in[3];
    std::uint64_t n = 0;
    if (!normSize(x, &gamma, n, error)) return false;
    const std::uint64_t rows = x.data.size() / n;
    if (dy.data.size() != x.data.size() || rstd.data.size() != rows) {
        error = "RmsNormGrad input sizes do not agree";
        return false;
    }
    ReplayTensor dx, dg;
    dx.shape = x.shape;
    dx.data.resize(x.data.size());
    dg.shape = gamma.shape;
    std::vector<double> sg(n, 0.0);
    for (std::uint64_t r = 0; r < rows; ++r) {
        const double rs = rstd.data[r];
        double mgx = 0;
        for (std::uint64_t i = 0; i < n; ++i) {
            const double xh = x.data[r * n + i] * rs;
            mgx += double(dy.data[r * n + i]) * gamma.data[i] * xh;
            sg[i] += double(dy.data[r * n + i]) * xh;
        }
        mgx /= double(n);
        for (std::uint64_t i = 0; i < n; ++i) {
            const double xh = x.data[r * n + i] * rs;
            dx.data[r * n + i] = float(rs * (double(dy.data[r * n + i]) * gamma.data[i] - xh * mgx));
        }
    }
    dg.data.assign(sg.begin(), sg.end());
    run.outputs.push_back(std::move(dx));
    run.outputs.push_back(std::move(dg));
    return true;
}

}  // namespace dl

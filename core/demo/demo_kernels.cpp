#include "core/demo/demo_kernels.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/util/half.h"

namespace dl::demo {

namespace {

std::int64_t elementCount(const std::vector<std::int64_t>& shape) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

// Reads element (i, j) of `t` broadcast to an (m, n) result.
float at2(const DemoTensor& t, std::int64_t i, std::int64_t j, std::int64_t m, std::int64_t n) {
    const auto& s = t.shape;
    if (s.empty()) return t.v[0];
    if (s.size() == 1) return s[0] == n ? t.v[std::size_t(j)] : t.v[0];
    const std::int64_t rows = s[0], cols = s[1];
    const std::int64_t ii = rows == m ? i : 0, jj = cols == n ? j : 0;
    return t.v[std::size_t(ii * cols + jj)];
}

std::pair<std::int64_t, std::int64_t> rowsCols(const std::vector<std::int64_t>& s) {
    if (s.empty()) return {1, 1};
    if (s.size() == 1) return {1, s[0]};
    return {s[0], s[1]};
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

}  // namespace

float DemoKernels::round(DType t, float x) {
    const bool sat = m_mode == OverflowMode::Saturation;
    if (std::isnan(x)) {
        m_overflow = true;
        return x;
    }
    switch (t) {
        case DType::Float16: {
            const float r = roundToHalf(x);
            if (std::isinf(r)) {
                m_overflow = true;
                if (sat) return r > 0 ? kFp16Max : -kFp16Max;
            }
            return r;
        }
        case DType::BFloat16: {
            const float r = roundToBf16(x);
            if (std::isinf(r)) {
                m_overflow = true;
                if (sat) return r > 0 ? kBf16Max : -kBf16Max;
            }
            return r;
        }
        case DType::Float32:
            if (std::isinf(x)) {
                m_overflow = true;
                if (sat) return x > 0 ? std::numeric_limits<float>::max() : -std::numeric_limits<float>::max();
            }
            return x;
        default:
            return std::trunc(x);  // integer outputs (ids) never overflow here
    }
}

TensorP DemoKernels::make(DType t, std::vector<std::int64_t> shape, std::vector<float> values) {
    if (std::int64_t(values.size()) != elementCount(shape)) throw std::logic_error("demo: shape/value mismatch");
    auto out = std::make_shared<DemoTensor>();
    out->dtype = t;
    out->shape = std::move(shape);
    out->v = std::move(values);
    return out;
}

TensorP DemoKernels::matmul(const TensorP& a, const TensorP& b, bool transA, bool transB, DType out) {
    const std::int64_t m = transA ? a->dim(1) : a->dim(0), k = transA ? a->dim(0) : a->dim(1);
    const std::int64_t n = transB ? b->dim(0) : b->dim(1);
    if ((transB ? b->dim(1) : b->dim(0)) != k) throw std::logic_error("demo: matmul shape mismatch");
    std::vector<float> r(static_cast<std::size_t>(m * n));
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            float acc = 0.0f;  // cube unit: fp16 products, fp32 accumulation
            for (std::int64_t p = 0; p < k; ++p) {
                const float av = transA ? a->v[std::size_t(p * m + i)] : a->v[std::size_t(i * k + p)];
                const float bv = transB ? b->v[std::size_t(j * k + p)] : b->v[std::size_t(p * n + j)];
                acc += av * bv;
            }
            r[std::size_t(i * n + j)] = round(out, acc);
        }
    return make(out, {m, n}, std::move(r));
}

TensorP DemoKernels::binary(const TensorP& a, const TensorP& b, DType out,
                            const std::function<float(float, float)>& f) {
    const auto& big = elementCount(a->shape) >= elementCount(b->shape) ? a->shape : b->shape;
    const auto [m, n] = rowsCols(big);
    std::vector<float> r(static_cast<std::size_t>(m * n));
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j)
            r[std::size_t(i * n + j)] = round(out, f(at2(*a, i, j, m, n), at2(*b, i, j, m, n)));
    return make(out, big, std::move(r));
}

TensorP DemoKernels::unary(const TensorP& a, DType out, const std::function<float(float)>& f) {
    std::vector<float> r(a->v.size());
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = round(out, f(a->v[i]));
    return make(out, a->shape, std::move(r));
}

TensorP DemoKernels::reduceSumLast(const TensorP& a) {
    const auto [m, n] = rowsCols(a->shape);
    std::vector<float> r(static_cast<std::size_t>(m));
    for (std::int64_t i = 0; i < m; ++i) {
        float acc = 0.0f;
        for (std::int64_t j = 0; j < n; ++j) acc += a->v[std::size_t(i * n + j)];
        r[std::size_t(i)] = round(a->dtype, acc);
    }
    return make(a->dtype, {m, 1}, std::move(r));
}

TensorP DemoKernels::reduceMeanAll(const TensorP& a) {
    double acc = 0.0;
    for (float x : a->v) acc += x;
    return make(a->dtype, {}, {round(a->dtype, float(acc / double(a->v.size())))});
}

TensorP DemoKernels::broadcastTo(const TensorP& a, const std::vector<std::int64_t>& shape) {
    const auto [m, n] = rowsCols(shape);
    std::vector<float> r(static_cast<std::size_t>(m * n));
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) r[std::size_t(i * n + j)] = round(a->dtype, at2(*a, i, j, m, n));
    return make(a->dtype, shape, std::move(r));
}

TensorP DemoKernels::gather(const TensorP& table, const TensorP& ids) {
    const std::int64_t h = table->dim(1);
    std::vector<float> r;
    for (float id : ids->v) {
        const auto row = std::size_t(id) * std::size_t(h);
        r.insert(r.end(), table->v.begin() + std::ptrdiff_t(row),
                 table->v.begin() + std::ptrdiff_t(row + std::size_t(h)));
    }
    return make(table->dtype, {ids->dim(0), h}, std::move(r));
}

TensorP DemoKernels::oneHot(const TensorP& ids, std::int64_t depth, const TensorP& on, const TensorP& off) {
    std::vector<float> r(std::size_t(ids->dim(0) * depth), off->v[0]);
    for (std::size_t i = 0; i < ids->v.size(); ++i) r[i * std::size_t(depth) + std::size_t(ids->v[i])] = on->v[0];
    return make(on->dtype, {ids->dim(0), depth}, std::move(r));
}

std::pair<TensorP, TensorP> DemoKernels::rmsNorm(const TensorP& x, const TensorP& gamma, float eps) {
    const auto [m, n] = rowsCols(x->shape);
    std::vector<float> y(static_cast<std::size_t>(m * n)), rstd(static_cast<std::size_t>(m));
    for (std::int64_t i = 0; i < m; ++i) {
        float ss = 0.0f;  // fp32 inside the kernel, so x^2 of an fp16 outlier does not overflow
        for (std::int64_t j = 0; j < n; ++j) ss += x->v[std::size_t(i * n + j)] * x->v[std::size_t(i * n + j)];
        const float r = 1.0f / std::sqrt(ss / float(n) + eps);
        rstd[std::size_t(i)] = round(DType::Float32, r);
        for (std::int64_t j = 0; j < n; ++j)
            y[std::size_t(i * n + j)] = round(x->dtype, x->v[std::size_t(i * n + j)] * r * gamma->v[std::size_t(j)]);
    }
    return {make(x->dtype, x->shape, std::move(y)), make(DType::Float32, {m, 1}, std::move(rstd))};
}

std::pair<TensorP, TensorP> DemoKernels::rmsNormGrad(const TensorP& dy, const TensorP& x, const TensorP& rstd,
                                                     const TensorP& gamma) {
    const auto [m, n] = rowsCols(x->shape);
    std::vector<float> dx(static_cast<std::size_t>(m * n)), dg(std::size_t(n), 0.0f);
    for (std::int64_t i = 0; i < m; ++i) {
        const float r = rstd->v[std::size_t(i)];
        float dot = 0.0f;
        for (std::int64_t j = 0; j < n; ++j) {
            const auto e = std::size_t(i * n + j);
            dot += gamma->v[std::size_t(j)] * dy->v[e] * x->v[e];
            dg[std::size_t(j)] += dy->v[e] * x->v[e] * r;
        }
        for (std::int64_t j = 0; j < n; ++j) {
            const auto e = std::size_t(i * n + j);
            const float g = r * gamma->v[std::size_t(j)] * dy->v[e] - x->v[e] * r * r * r * dot / float(n);
            dx[e] = round(x->dtype, g);
        }
    }
    for (auto& g : dg) g = round(DType::Float32, g);
    return {make(x->dtype, x->shape, std::move(dx)), make(DType::Float32, {n}, std::move(dg))};
}

TensorP DemoKernels::fastGelu(const TensorP& x) {
    return unary(x, x->dtype, [](float v) { return v * sigmoid(1.702f * v); });
}

TensorP DemoKernels::fastGeluGrad(const TensorP& dy, const TensorP& x) {
    return binary(dy, x, x->dtype, [](float g, float v) {
        const float s = sigmoid(1.702f * v);
        return g * (s + 1.702f * v * s * (1.0f - s));
    });
}

std::pair<TensorP, TensorP> DemoKernels::softmaxCrossEntropy(const TensorP& logits, const TensorP& labels) {
    const auto [m, n] = rowsCols(logits->shape);
    std::vector<float> loss(static_cast<std::size_t>(m)), back(static_cast<std::size_t>(m * n));
    for (std::int64_t i = 0; i < m; ++i) {
        float mx = -std::numeric_limits<float>::infinity();
        for (std::int64_t j = 0; j < n; ++j) mx = std::max(mx, logits->v[std::size_t(i * n + j)]);
        if (std::isnan(logits->v[std::size_t(i * n)])) mx = logits->v[std::size_t(i * n)];
        float sum = 0.0f;
        for (std::int64_t j = 0; j < n; ++j) sum += std::exp(logits->v[std::size_t(i * n + j)] - mx);
        float l = 0.0f;
        for (std::int64_t j = 0; j < n; ++j) {
            const auto e = std::size_t(i * n + j);
            const float logp = logits->v[e] - mx - std::log(sum);
            l -= labels->v[e] * logp;
            back[e] = round(DType::Float32, std::exp(logp) - labels->v[e]);
        }
        loss[std::size_t(i)] = round(DType::Float32, l);
    }
    return {make(DType::Float32, {m}, std::move(loss)), make(DType::Float32, {m, n}, std::move(back))};
}

std::pair<TensorP, TensorP> DemoKernels::applyMomentum(const TensorP& var, const TensorP& accum, const TensorP& lr,
                                                       const TensorP& grad, const TensorP& momentum) {
    auto acc = binary(accum, grad, accum->dtype, [&](float a, float g) { return a * momentum->v[0] + g; });
    auto out = binary(var, acc, var->dtype, [&](float w, float a) { return w - lr->v[0] * a; });
    return {out, acc};
}

}  // namespace dl::demo

#pragma once
// The arithmetic of the demo network's operators, done the way Ascend kernels do it: inputs as
// stored (fp16/bf16/fp32), accumulation in fp32, one rounding of each output element to the
// output dtype. In saturation mode fp16 results beyond +/-65504 clamp (NaN stays NaN); in INF/NAN
// mode they become +/-inf. Every kernel notes whether it overflowed (what the AI Core float
// status register would see), so the demo knows which ops an overflow-only dump would keep.
#include <functional>
#include <utility>

#include "core/demo/demo_tensor.h"

namespace dl::demo {

enum class OverflowMode { Saturation, InfNan };

class DemoKernels {
public:
    explicit DemoKernels(OverflowMode mode) : m_mode(mode) {}

    // True if any kernel since the last call produced a non-finite or out-of-range element.
    bool takeOverflow() { return std::exchange(m_overflow, false); }

    float round(DType t, float x);
    TensorP make(DType t, std::vector<std::int64_t> shape, std::vector<float> values);

    // 2-D matmul, optional transposes, fp32 accumulation.
    TensorP matmul(const TensorP& a, const TensorP& b, bool transA, bool transB, DType out);
    // Elementwise with broadcasting of (), (n), (1,n), (m,1) against the larger 2-D/1-D shape.
    TensorP binary(const TensorP& a, const TensorP& b, DType out, const std::function<float(float, float)>& f);
    TensorP unary(const TensorP& a, DType out, const std::function<float(float)>& f);
    TensorP cast(const TensorP& a, DType out) {
        return unary(a, out, [](float x) { return x; });
    }
    TensorP reduceSumLast(const TensorP& a);  // (m,n) -> (m,1), keep_dims
    TensorP reduceMeanAll(const TensorP& a);  // -> ()
    TensorP broadcastTo(const TensorP& a, const std::vector<std::int64_t>& shape);
    TensorP gather(const TensorP& table, const TensorP& ids);
    TensorP oneHot(const TensorP& ids, std::int64_t depth, const TensorP& on, const TensorP& off);
    // RmsNorm: y = x * rstd * gamma (fp16), rstd = 1/sqrt(mean(x^2)+eps) (fp32, (m,1)).
    std::pair<TensorP, TensorP> rmsNorm(const TensorP& x, const TensorP& gamma, float eps);
    // Returns dx (fp16) and dgamma (fp32).
    std::pair<TensorP, TensorP> rmsNormGrad(const TensorP& dy, const TensorP& x, const TensorP& rstd,
                                            const TensorP& gamma);
    TensorP fastGelu(const TensorP& x);
    TensorP fastGeluGrad(const TensorP& dy, const TensorP& x);
    // Returns per-row loss (m) and backprop = softmax - labels (m,n), both fp32.
    std::pair<TensorP, TensorP> softmaxCrossEntropy(const TensorP& logits, const TensorP& labels);
    // accum = accum*momentum + grad; var = var - lr*accum. Returns (new var, new accum).
    std::pair<TensorP, TensorP> applyMomentum(const TensorP& var, const TensorP& accum, const TensorP& lr,
                                              const TensorP& grad, const TensorP& momentum);

private:
    OverflowMode m_mode;
    bool m_overflow = false;
};

}  // namespace dl::demo

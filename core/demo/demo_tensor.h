#pragma once
// A small dense tensor of the demo network: values held as floats that are exactly representable
// in `dtype` (fp16/bf16 values were rounded when produced), plus the shape.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/util/dtype.h"

namespace dl::demo {

struct DemoTensor {
    DType dtype = DType::Float16;
    std::vector<std::int64_t> shape;
    std::vector<float> v;

    std::int64_t dim(std::size_t i) const { return shape.at(i); }
    std::size_t size() const { return v.size(); }
};

using TensorP = std::shared_ptr<const DemoTensor>;

}  // namespace dl::demo

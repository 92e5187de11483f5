#pragma once
// The values of an indexed tensor as float in its logical shape (C order), for replay and
// comparison: .npy files and raw file regions as stored, and tensors stored in an Ascend device
// layout (raw CANN, flagged DeviceFormat) gathered into their original shape without the padding
// (DeviceLayout, docs/formats.md 2.3).
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/dump_index.h"

namespace dl {

struct TensorValues {
    std::vector<std::int64_t> shape;  // logical shape of `data`
    std::vector<float> data;
    std::string conversion;  // "FRACTAL_NZ [1,1,16,16] -> ND [3,5]" when a layout was undone
};

// False with a reason naming the tensor (and file) when it has no data here, the file does not
// hold what the index says, or its device layout cannot be undone.
bool loadTensorValues(const DumpIndex& index, const TensorRecord& t, TensorValues& out, std::string& error);

// The shape loadTensorValues gives: the original shape of a device-layout tensor, else the stored one.
std::vector<std::int64_t> logicalShape(const DumpIndex& index, const TensorRecord& t);

}  // namespace dl

#pragma once
// The arguments of one msprobe entry's call as dump.json records them (docs/formats.md 3.3), for
// the replay: which input tensor, number or list of numbers each positional or keyword argument
// was. msprobe keeps non-tensor arguments in dump.json only ({"type": "float", "value": 4096.0}),
// so a tensor times a scalar has one dumped tensor and a second operand that only this gives.
#include <string>
#include <string_view>
#include <vector>

namespace dl {

struct MsprobeCallArg {
    enum class Kind { Tensor, Number, List, None, Other };
    Kind kind = Kind::Other;
    int position = -1;            // index in input_args; -1 for a keyword argument
    std::string keyword;          // input_kwargs key ("" for positional ones)
    int tensorSlot = -1;          // Tensor: the tensor's slot among the entry's inputs (TensorRecord::slot)
    std::vector<double> numbers;  // Number: one value; List: the elements (bools as 0/1)
    std::string type;             // as dump.json says: "float", "int", "torch.Tensor", "slice", ...
};

// The arguments of entry `entryName` of the dump.json at `path`, positional ones first in order,
// then keyword ones in file order. False with a reason naming the file when it cannot be read or
// has no such entry.
bool readMsprobeCallArgs(const std::string& path, std::string_view entryName, std::vector<MsprobeCallArg>& out,
                         std::string& error);

}  // namespace dl

#pragma once
// msprobe (MindStudio Probe) dumps, docs/formats.md 3: dump.json (entries with tensor statistics),
// stack.json (old {name: frames} and new {"0": [names, frames]} forms) and construct.json.
// dump.json may hold the bare tokens NaN / Infinity / -Infinity (Python json.dump).
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/model/dump_format.h"
#include "core/stats/tensor_stats.h"
#include "core/util/dtype.h"

namespace dl {

enum class MsprobeEntryKind : std::uint8_t { Api, Module, ParamGrad, Debug, Other };

struct MsprobeTensor {
    Io io = Io::Input;
    std::uint16_t slot = 0;  // running index among the entry's tensors of this io
    std::string path;        // where it sat: "input_args.0", "input_kwargs.weight", "output.1", "parameters.bias"
    // msprobe's own name for it after the entry name (full name = entry + "." + label), as its
    // compare builds it (msprobe core/compare/utils.py: read_op, op_item_parse, gen_op_item):
    // - the entry's key gives the category: input_args, input_kwargs, input -> "input"; output ->
    //   "output"; parameters -> "parameters"; then each list index (nulls and non-tensors count)
    //   and dict key on the way down: "input.2", "input.0.1", "input.attn_mask", "output.1",
    //   "parameters.weight";
    // - parameters_grad entries: the parameter name alone ("weight"; no index for its list);
    // - debug entries: the nesting alone ("" for a bare tensor);
    // - a saved tensor is named after its file (data_name without the extension), which differs
    //   for keyword arguments: msprobe saves them as "{entry}.kwargs.{key}.pt".
    std::string label;
    std::string dtypeRaw;  // "torch.float16", "BFloat16", ...
    DType dtype = DType::Unknown;
    std::vector<std::int64_t> shape;
    TensorStats stats;     // Max/Min/Mean/Norm as given; NaN/Inf Max/Min become counts >= 1
    std::string md5;       // CRC-32 text (task statistics, summary_mode md5)
    std::string dataName;  // file in dump_tensor_data/ ("" when not saved)
    // The tensor of a P2POp (batch_isend_irecv's list): its "op" ("isend", "irecv"), "peer" rank
    // and "tag" (msprobe's _analyze_p2pop); empty / -1 for every other tensor.
    std::string p2pOp;
    int p2pPeer = -1, p2pTag = -1;
};

// A value as msprobe's compare table prints it (Python's str() of the JSON value).
struct MsprobeValue {
    enum class Kind : std::uint8_t { None, Int, Float, Bool, Text };
    Kind kind = Kind::None;
    double number = 0;  // Int and Float (NaN/Inf tokens are Float)
    std::string text;   // Python's str(): "None", "3", "1.5", "nan", "True", the string
    bool numeric() const { return kind == Kind::Int || kind == Kind::Float; }
};

// Where msprobe's compare files an argument (STATE_TO_STRUCT_MAPPING); its table lists an
// entry's inputs (and kwargs, debug values) first, then parameters, outputs, parameter grads.
enum class MsprobeArgState : std::uint8_t { Input, Parameters, Output, ParamGrad };

// One row of msprobe's compare table: every leaf argument, tensor or not (msprobe core/compare/
// utils.py op_item_parse, gen_op_item): tensors, ints, floats, bools, strings, torch.Size,
// slices, process groups, and nulls (a row of None). Read only with `withArguments`.
struct MsprobeArg {
    std::string label;  // as MsprobeTensor::label
    MsprobeArgState state = MsprobeArgState::Input;
    std::int32_t tensor = -1;  // index into MsprobeEntry::tensors; -1: not a tensor
    std::string dtype, shape;  // as the table prints them: "torch.float16", "[8, 48, 48]", "<class 'int'>", "[]"
    MsprobeValue stats[4];     // Max, Min, Mean, Norm (a non-tensor's value in all four)
    std::string requiresGrad;  // "True", "False"; "" when not written
    std::string md5;           // CRC-32 text: written by the dump, else of str(value) like msprobe
    std::string dataName;      // "-1" when no file
};

struct MsprobeEntry {
    std::string name;  // "Functional.linear.0.forward"
    MsprobeEntryKind kind = MsprobeEntryKind::Other;
    std::string prefix;      // "Functional", "Tensor", "Torch", "Aten", "Distributed", "Module", "Cell", ...
    std::string op;          // API name ("linear", "all_reduce", "add.Tensor") or module class ("ParallelMlp")
    std::string modulePath;  // modules: "module.language_model.encoder.layers.0.mlp"
    bool backward = false;
    std::int64_t callIndex = -1;
    std::vector<MsprobeTensor> tensors;
    std::uint32_t nonTensorArgs = 0;  // ints, floats, slices, dtypes, process groups ...
    bool isRecompute = false;
    std::vector<MsprobeArg> args;  // filled only when parsed withArguments, in msprobe's table order
};

struct MsprobeDump {
    std::string task, level, framework, dumpDataDir;
    std::vector<MsprobeEntry> entries;  // in file order (= execution order)
};

// Splits an entry name from the right (docs/formats.md 3.2, 5): API `{Prefix}.{api}.{idx}.{fwd|bwd}`,
// module `{Module|Cell}.{path}.{Class}.{fwd|bwd}.{idx}`, `...{Class}.parameters_grad` (older writers:
// `...parameters_grad.{n}`), debug `{name}.{n}` or `{name}.{n}.debug`.
void parseMsprobeEntryName(std::string_view name, MsprobeEntry& e);

// `text` is modified in place (non-standard tokens rewritten); returns false with a reason when
// the document is not a dump.json.
// `withArguments`: also fill MsprobeEntry::args (msprobe's compare table rows; costs time and memory
// the index does not need).
bool parseMsprobeDumpJson(std::string& text, MsprobeDump& out, std::string& error, bool withArguments = false);
bool readMsprobeDumpJson(const std::string& path, MsprobeDump& out, std::string& error, bool withArguments = false);

// Python's repr() of a double: shortest round-trip digits, fixed for exponents -4..15 with a
// ".0" for whole numbers, else "1e-05" / "1.5e+16"; "nan", "inf", "-inf".
std::string pythonFloatText(double v);
// zlib's CRC-32 of `text` as eight lowercase hex digits (msprobe's md5 of a non-tensor value).
std::string crc32Text(std::string_view text);

// entry name -> its call stack frames, as stack.json lists them (a frame holds a newline
// between its location and its code line).
bool parseMsprobeStackFrames(std::string& text, std::unordered_map<std::string, std::vector<std::string>>& out,
                             std::string& error);
// entry name -> call stack text (frames joined by newlines).
bool parseMsprobeStackJson(std::string& text, std::unordered_map<std::string, std::string>& out, std::string& error);
// node -> parent (null parents are left out).
bool parseMsprobeConstructJson(std::string& text, std::unordered_map<std::string, std::string>& out,
                               std::string& error);

// Rewrites NaN, Infinity and -Infinity outside strings into same-length JSON strings ("N",
// "Infnty", "-Infnty") so a standard parser accepts the document. Returns how many it rewrote.
std::size_t neutralizeNonFiniteTokens(char* text, std::size_t size);

}  // namespace dl

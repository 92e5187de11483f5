#pragma once
// msprobe (MindStudio Probe) dumps, docs/formats.md 3: dump.json (entries with tensor statistics),
// stack.json (old {name: frames} and new {"0": [names, frames]} forms) and construct.json.
// dump.json may hold the bare tokens NaN / Infinity / -Infinity (Python json.dump).
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/index/dump_index.h"
#include "core/stats/tensor_stats.h"
#include "core/util/dtype.h"

namespace dl {

enum class MsprobeEntryKind : std::uint8_t { Api, Module, ParamGrad, Debug, Other };

struct MsprobeTensor {
    Io io = Io::Input;
    std::uint16_t slot = 0;        // running index among the entry's tensors of this io
    std::string path;              // where it sat: "input_args.0", "input_kwargs.weight", "output.1", "parameters.bias"
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
    std::string dtypeRaw;          // "torch.float16", "BFloat16", ...
    DType dtype = DType::Unknown;
    std::vector<std::int64_t> shape;
    TensorStats stats;             // Max/Min/Mean/Norm as given; NaN/Inf Max/Min become counts >= 1
    std::string md5;               // CRC-32 text (task statistics, summary_mode md5)
    std::string dataName;          // file in dump_tensor_data/ ("" when not saved)
};

struct MsprobeEntry {
    std::string name;              // "Functional.linear.0.forward"
    MsprobeEntryKind kind = MsprobeEntryKind::Other;
    std::string prefix;            // "Functional", "Tensor", "Torch", "Aten", "Distributed", "Module", "Cell", ...
    std::string op;                // API name ("linear", "all_reduce", "add.Tensor") or module class ("ParallelMlp")
    std::string modulePath;        // modules: "module.language_model.encoder.layers.0.mlp"
    bool backward = false;
    std::int64_t callIndex = -1;
    std::vector<MsprobeTensor> tensors;
    std::uint32_t nonTensorArgs = 0;  // ints, floats, slices, dtypes, process groups ...
    bool isRecompute = false;
};

struct MsprobeDump {
    std::string task, level, framework, dumpDataDir;
    std::vector<MsprobeEntry> entries;   // in file order (= execution order)
};

// Splits an entry name from the right (docs/formats.md 3.2, 5): API `{Prefix}.{api}.{idx}.{fwd|bwd}`,
// module `{Module|Cell}.{path}.{Class}.{fwd|bwd}.{idx}`, `...{Class}.parameters_grad` (older writers:
// `...parameters_grad.{n}`), debug `{name}.{n}` or `{name}.{n}.debug`.
void parseMsprobeEntryName(std::string_view name, MsprobeEntry& e);

// `text` is modified in place (non-standard tokens rewritten); returns false with a reason when
// the document is not a dump.json.
bool parseMsprobeDumpJson(std::string& text, MsprobeDump& out, std::string& error);
bool readMsprobeDumpJson(const std::string& path, MsprobeDump& out, std::string& error);

// entry name -> call stack text (frames joined by newlines).
bool parseMsprobeStackJson(std::string& text, std::unordered_map<std::string, std::string>& out, std::string& error);
// node -> parent (null parents are left out).
bool parseMsprobeConstructJson(std::string& text, std::unordered_map<std::string, std::string>& out,
                               std::string& error);

// Rewrites NaN, Infinity and -Infinity outside strings into same-length JSON strings ("N",
// "Infnty", "-Infnty") so a standard parser accepts the document. Returns how many it rewrote.
std::size_t neutralizeNonFiniteTokens(char* text, std::size_t size);

}  // namespace dl

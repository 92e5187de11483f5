#pragma once
// Element types a dump can hold, and their names in the various writers' spellings.
#include <cstdint>
#include <optional>
#include <string_view>

namespace dl {

enum class DType : std::uint8_t {
    Unknown = 0,
    Bool,
    Int4,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt1,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    BFloat16,
    Float32,
    Float64,
    Complex64,
    Complex128,
};

// Bytes per stored element (Int4/UInt1 are stored unpacked, one per byte). 0 for Unknown.
std::size_t dtypeSize(DType t);
bool isFloating(DType t);  // f16, bf16, f32, f64
// Canonical lower-case name as MindSpore 2.4+ file names spell it ("float16", "bfloat16", ...).
std::string_view dtypeName(DType t);
// Accepts MindSpore ("float16", "Float16", "kNumberTypeFloat16"), msprobe ("torch.float16", "BFloat16")
// and CANN proto enum names ("DT_FLOAT16"). Case-insensitive. nullopt when unknown.
std::optional<DType> parseDTypeName(std::string_view name);

}  // namespace dl

#include "core/util/dtype.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "core/util/text.h"

namespace dl {

std::size_t dtypeSize(DType t) {
    switch (t) {
        case DType::Bool:
        case DType::Int4:
        case DType::Int8:
        case DType::UInt1:
        case DType::UInt8:
            return 1;
        case DType::Int16:
        case DType::UInt16:
        case DType::Float16:
        case DType::BFloat16:
            return 2;
        case DType::Int32:
        case DType::UInt32:
        case DType::Float32:
            return 4;
        case DType::Int64:
        case DType::UInt64:
        case DType::Float64:
        case DType::Complex64:
            return 8;
        case DType::Complex128:
            return 16;
        case DType::Unknown:
            return 0;
    }
    return 0;
}

bool isFloating(DType t) {
    return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}

std::string_view dtypeName(DType t) {
    switch (t) {
        case DType::Bool:
            return "bool";
        case DType::Int4:
            return "int4";
        case DType::Int8:
            return "int8";
        case DType::Int16:
            return "int16";
        case DType::Int32:
            return "int32";
        case DType::Int64:
            return "int64";
        case DType::UInt1:
            return "uint1";
        case DType::UInt8:
            return "uint8";
        case DType::UInt16:
            return "uint16";
        case DType::UInt32:
            return "uint32";
        case DType::UInt64:
            return "uint64";
        case DType::Float16:
            return "float16";
        case DType::BFloat16:
            return "bfloat16";
        case DType::Float32:
            return "float32";
        case DType::Float64:
            return "float64";
        case DType::Complex64:
            return "complex64";
        case DType::Complex128:
            return "complex128";
        case DType::Unknown:
            return "unknown";
    }
    return "unknown";
}

std::optional<DType> parseDTypeName(std::string_view name) {
    std::string s = lower(name);
    for (std::string_view prefix : {"knumbertype", "torch.", "dt_", "mindspore."})
        if (s.starts_with(prefix)) s.erase(0, prefix.size());
    struct Alias {
        std::string_view name;
        DType type;
    };
    static constexpr std::array<Alias, 28> aliases{{
        {"bool", DType::Bool},           {"bool_", DType::Bool},
        {"int4", DType::Int4},           {"int8", DType::Int8},
        {"int16", DType::Int16},         {"int32", DType::Int32},
        {"int64", DType::Int64},         {"uint1", DType::UInt1},
        {"uint8", DType::UInt8},         {"uint16", DType::UInt16},
        {"uint32", DType::UInt32},       {"uint64", DType::UInt64},
        {"float16", DType::Float16},     {"half", DType::Float16},
        {"bfloat16", DType::BFloat16},   {"bf16", DType::BFloat16},
        {"float32", DType::Float32},     {"float", DType::Float32},
        {"float64", DType::Float64},     {"double", DType::Float64},
        {"complex64", DType::Complex64}, {"complex128", DType::Complex128},
        {"int", DType::Int32},           {"long", DType::Int64},
        {"short", DType::Int16},         {"fp16", DType::Float16},
        {"fp32", DType::Float32},        {"dual", DType::Unknown},
    }};
    for (const auto& a : aliases)
        if (a.name == s && a.type != DType::Unknown) return a.type;
    return std::nullopt;
}

}  // namespace dl

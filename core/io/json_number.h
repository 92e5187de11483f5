#pragma once
// An unsigned integer as dump writers spell it in JSON: a number, a decimal string ("rank_id":
// "3" in MindSpore's .dump_metadata), or, where `hex` allows, a "0x.."/"0X.." string (CANN's
// Opdebug records). One parser for both, so they refuse the same things: negatives, fractions,
// overflow, empty strings and trailing text.
#include <cstdint>

#include <nlohmann/json.hpp>

namespace dl {

bool jsonUnsigned(const nlohmann::json& v, std::uint64_t& out, bool hex = false);

}  // namespace dl

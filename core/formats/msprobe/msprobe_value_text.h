#pragma once
// msprobe's values as its compare table prints them: numbers as msprobe writes them, Python's
// str()/repr() and type() of a JSON value, shapes. Inside core only (it exposes simdjson, which
// core links privately); the public pieces (pythonFloatText, crc32Text) are in msprobe_dump.h.
#include <cstdint>
#include <string>
#include <vector>

#include <simdjson.h>

#include "core/formats/msprobe/msprobe_dump.h"

namespace dl::msprobe {

// A JSON number, a bool (bool tensors' Max/Min) or a rewritten NaN/Inf token
// (neutralizeNonFiniteTokens) as a double; false for anything else.
bool numberOf(simdjson::dom::element v, double& out);
// Python's str() of the value (repr() inside lists and dicts); NaN/Inf tokens print as floats.
std::string pythonText(simdjson::dom::element v);
// Python's type() name of the value ("int", "float", "str", "NoneType", ...).
const char* pythonTypeName(simdjson::dom::element v);
MsprobeValue valueOf(simdjson::dom::element v);
MsprobeValue noneValue();
MsprobeValue textValue(std::string s);
// "[8, 48, 48]", as Python prints a list.
std::string pythonShape(const std::vector<std::int64_t>& shape);

}  // namespace dl::msprobe

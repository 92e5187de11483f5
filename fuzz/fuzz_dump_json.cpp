// libFuzzer target: msprobe dump.json / stack.json / construct.json readers, including the
// NaN/Infinity token rewriting that runs before the JSON parser.
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "core/formats/msprobe/msprobe_dump.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    std::string text = input, error;
    dl::MsprobeDump dump;
    dl::parseMsprobeDumpJson(text, dump, error);
    std::unordered_map<std::string, std::string> map;
    text = input;
    dl::parseMsprobeStackJson(text, map, error);
    text = input;
    dl::parseMsprobeConstructJson(text, map, error);
    dl::MsprobeEntry e;
    dl::parseMsprobeEntryName(std::string_view(input).substr(0, 256), e);
    return 0;
}

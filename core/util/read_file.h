#pragma once
// Reads a whole file into a string; false with a reason naming the path (cannot open, larger
// than maxBytes, short read). The one whole-file reader the parsers share.
#include <cstdint>
#include <string>

namespace dl {

bool readFileText(const std::string& path, std::string& text, std::string& error,
                  std::uint64_t maxBytes = ~std::uint64_t(0));

}  // namespace dl

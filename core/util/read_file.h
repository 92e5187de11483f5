#pragma once
// Reads a whole file into a string; false with a reason naming the path (cannot open, larger
// than maxBytes, short read). The one whole-file reader the parsers share.
#include <cstddef>
#include <cstdint>
#include <string>

namespace dl {

// Reads exactly n bytes at `offset` of an open file (pread, retried on EINTR and short reads);
// false with the reason (read error, or where the file ends).
bool readFileAt(int fd, std::uint8_t* dst, std::size_t n, std::uint64_t offset, std::string& error);

bool readFileText(const std::string& path, std::string& text, std::string& error,
                  std::uint64_t maxBytes = ~std::uint64_t(0));

}  // namespace dl

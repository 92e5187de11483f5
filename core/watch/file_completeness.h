#pragma once
// Whether a file that stopped growing looks whole, from its own bytes: a dump writer writes in
// chunks and does not rename, so a pause between two chunks looks like a finished file. Only what
// a few bytes at the head or tail can tell: an .npy's header gives its exact size, a CSV ends
// with a line break, a JSON document with its closing bracket, a ZIP (.pt) with its end record.
// Any other file looks whole (the settle time alone decides).
#include <cstdint>
#include <string>

namespace dl {

bool looksComplete(const std::string& absPath, std::uint64_t size);

}  // namespace dl

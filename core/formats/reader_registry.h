#pragma once
// The table of every format the indexer reads (reader_registry.cpp). An explicit table, not
// self-registration by static initialisers: those live in a static library's objects that nothing
// references, and the linker drops them.
#include <span>

#include "core/index/format_reader.h"

namespace dl {

// In the order readers are offered a file: the first that takes a file reads it, and their
// finish hooks run in this order.
std::span<const FormatReader* const> formatReaders();
// The reader of a format; nullptr for DumpFormat::Unknown.
const FormatReader* readerFor(DumpFormat format);

}  // namespace dl

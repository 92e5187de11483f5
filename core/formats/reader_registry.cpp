#include "core/formats/reader_registry.h"

#include <algorithm>

namespace dl {

// The table: one line per format, in the order readers are offered a file (the first that takes
// it reads it) and run each step of format_reader.h. Each name is the FormatReader defined at the
// end of its reader's file (core/formats/<format>/<format>_reader.cpp). Plain .npy takes only what
// no grammar matched; raw CANN results become drafts before msprobe's figures are written (the
// order of their warnings).
// clang-format off
#define DUMPLENS_FORMAT_READERS(X) \
    X(kStatisticCsvReader)         \
    X(kMindSporeNpyReader)         \
    X(kMindSporeBinReader)         \
    X(kCannRawReader)              \
    X(kPlainNpyReader)             \
    X(kMsprobeReader)
// clang-format on

#define DUMPLENS_DECLARE_READER(reader) extern const FormatReader reader;
DUMPLENS_FORMAT_READERS(DUMPLENS_DECLARE_READER)

namespace {

#define DUMPLENS_READER_ADDRESS(reader) &reader,
constexpr const FormatReader* kReaders[] = {DUMPLENS_FORMAT_READERS(DUMPLENS_READER_ADDRESS)};

}  // namespace

std::span<const FormatReader* const> formatReaders() { return kReaders; }

const FormatReader* readerFor(DumpFormat format) {
    const auto it = std::find_if(std::begin(kReaders), std::end(kReaders),
                                 [&](const FormatReader* r) { return r->format == format; });
    return it == std::end(kReaders) ? nullptr : *it;
}

}  // namespace dl

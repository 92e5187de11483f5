#include "core/formats/reader_registry.h"

#include <algorithm>

namespace dl {

// Each is defined in its reader's file. A new format: its declaration here and its place in the table.
extern const FormatReader kStatisticCsvReader;
extern const FormatReader kMindSporeNpyReader;
extern const FormatReader kMindSporeBinReader;
extern const FormatReader kCannRawReader;
extern const FormatReader kPlainNpyReader;
extern const FormatReader kMsprobeReader;

namespace {

// Plain .npy takes only what no grammar matched; raw CANN results become drafts before msprobe's
// figures are written (the order of their warnings).
// clang-format off
constexpr const FormatReader* kReaders[] = {
    &kStatisticCsvReader,
    &kMindSporeNpyReader,
    &kMindSporeBinReader,
    &kCannRawReader,
    &kPlainNpyReader,
    &kMsprobeReader,
};
// clang-format on

}  // namespace

std::span<const FormatReader* const> formatReaders() { return kReaders; }

const FormatReader* readerFor(DumpFormat format) {
    const auto it = std::find_if(std::begin(kReaders), std::end(kReaders),
                                 [&](const FormatReader* r) { return r->format == format; });
    return it == std::end(kReaders) ? nullptr : *it;
}

}  // namespace dl

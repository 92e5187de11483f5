#include "core/index/readers/reader_registry.h"

#include <algorithm>

namespace dl {

// Each defined in its reader's file. A new format: its file here and one line in each list.
extern const FormatReader kStatisticCsvReader, kMindSporeNpyReader, kMindSporeBinReader, kCannRawReader,
    kPlainNpyReader, kMsprobeReader;

namespace {

// Plain .npy takes only what no grammar matched; raw CANN results become drafts before msprobe's
// figures are written (the order of their warnings).
constexpr const FormatReader* kReaders[] = {
    &kStatisticCsvReader,
    &kMindSporeNpyReader,
    &kMindSporeBinReader,
    &kCannRawReader,
    &kPlainNpyReader,
    &kMsprobeReader,
};

}  // namespace

std::span<const FormatReader* const> formatReaders() { return kReaders; }

const FormatReader* readerFor(DumpFormat format) {
    const auto it = std::find_if(std::begin(kReaders), std::end(kReaders),
                                 [&](const FormatReader* r) { return r->format == format; });
    return it == std::end(kReaders) ? nullptr : *it;
}

}  // namespace dl

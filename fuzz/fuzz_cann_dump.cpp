// libFuzzer target: raw CANN dump files (8-byte length + DumpData header + payload offsets), and
// the device-layout padding model on the shapes the header declares.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/formats/cann/cann_dump_file.h"
#include "core/formats/cann/device_layout.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    dl::CannDumpHeader h;
    std::string error;
    dl::looksLikeCannDump(data, size, size);
    if (!dl::parseCannDumpHeader(data, size, size, h, error)) return 0;
    if (h.payloadEnd > size) __builtin_trap();
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
    for (const auto* list : {&h.inputs, &h.outputs})
        for (const auto& t : *list) {
            if (t.offset + t.size > size) __builtin_trap();
            dl::DeviceLayout layout;
            if (!dl::DeviceLayout::build(t.format, t.shape, t.originalShape, layout, error)) continue;
            for (std::uint64_t b = 0; b < layout.blocks() && b < 64; ++b) {
                layout.blockRuns(b, runs);
                for (const auto& [o, n] : runs)
                    if (o + n > layout.blockElements()) __builtin_trap();
            }
        }
    return 0;
}

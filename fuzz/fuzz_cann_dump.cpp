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
    for (const auto* list : {&h.inputs, &h.outputs})
        for (const auto& t : *list) {
            if (t.offset + t.size > size) __builtin_trap();
            dl::DeviceLayout layout;
            if (!dl::DeviceLayout::build(t.format, t.shape, t.originalShape, layout, error)) continue;
            if (layout.deviceElements() > (1u << 20)) continue;  // keep each input fast
            std::uint64_t last = 0, values = 0;
            layout.forEachRun([&](std::uint64_t s, std::uint64_t n, std::uint64_t o, std::uint64_t step) {
                if (s < last || s + n > layout.deviceElements() || o + (n - 1) * step >= layout.validElements())
                    __builtin_trap();
                last = s + n;
                values += n;
            });
            if (values != layout.validElements()) __builtin_trap();
        }
    return 0;
}

// libFuzzer target: Opdebug JSON (all writers' spellings), the raw payload and the raw file, and the
// JSON metadata readers that share nlohmann/json.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/formats/cann/opdebug_record.h"
#include "core/formats/mindspore/dump_metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    dl::OpdebugRecord r;
    std::string err;
    if (dl::parseOpdebugJson(text, r, err)) dl::describeOverflow(r);
    if (dl::decodeOpdebugPayload(data, size, r, err)) dl::describeOverflow(r);
    if (dl::decodeOpdebugFile(data, size, r, err)) dl::describeAiCoreStatus(r.aiCore.status);
    dl::DumpConfig c;
    dl::parseDumpConfig(text, c, err);
    dl::MsRunConfig mc;
    dl::parseMsRunConfig(text, mc, err);
    std::vector<dl::RankTableEntry> ranks;
    dl::parseRankTable(text, ranks, err);
    return 0;
}

// libFuzzer target: dump file-name parsing (every kind) and the scope helpers.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/formats/mindspore/dump_file_name.h"
#include "core/formats/mindspore/execution_order.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view name(reinterpret_cast<const char*>(data), size);
    dl::DumpFileName f;
    const bool ok = dl::parseDumpFileName(name, f);
    if (ok == (f.kind == dl::DumpFileKind::Unknown)) __builtin_trap();  // result and kind must agree
    if (!ok && f.reason.empty()) __builtin_trap();                      // failures always say why
    dl::binNameToScope(name);
    for (auto form : {dl::ScopeNameForm::ShortMs22, dl::ScopeNameForm::ScopedMs23, dl::ScopeNameForm::BinMs12})
        dl::scopeToFileName(name, form);
    dl::executionOrderGraphId(name);
    return 0;
}

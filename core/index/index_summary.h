#pragma once
// Human and JSON renderings of an index, shared by the CLI and the GUI's status line.
#include <string>

#include "core/index/dump_indexer.h"
#include "core/model/dump_index.h"

namespace dl {

// {"schema":"dumplens.index/1","root":…,"ranks":[…],"iterations":[…],"ops":N,"tensors":N,"bytes":N,
//  "warnings":[{"path":…,"reason":…}], …}
std::string indexSummaryJson(const DumpIndex& index, const IndexReport& report);
std::string indexSummaryText(const DumpIndex& index, const IndexReport& report, std::size_t maxWarnings = 20);
std::string_view dumpFormatName(DumpFormat f);

// Tensors whose statistics or data could be read (the analysis counts the same ones). An index
// with none of them and no Opdebug overflow record holds nothing readable: no command reads it as
// a success (analyze's "no_data", exit status 2 everywhere).
std::size_t readableTensorCount(const DumpIndex& index);
bool holdsNothingReadable(const DumpIndex& index);

}  // namespace dl

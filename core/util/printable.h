#pragma once
// Text from files (names, paths, reasons) made safe to print: the bytes a terminal acts on
// (C0 controls such as ESC, CR and BEL as \xNN; DEL and the UTF-8-encoded C1 controls, which
// some terminals take as CSI, as \u00NN) are escaped, so a crafted file name cannot move the
// cursor, clear the screen or retitle the window. \u00NN is also a valid JSON escape of the same
// character, so escaping JSON output leaves its meaning unchanged.
#include <cstddef>
#include <string>
#include <string_view>

namespace dl {

// keepLayout: '\n' and '\t' pass (whole reports); otherwise they are escaped too (one field).
std::string printable(std::string_view text, bool keepLayout = false);

// As printable(text, true) for text arriving in pieces: returns how many leading bytes of `text`
// were converted into `out`; a trailing byte that may start a C1 control is left for the next
// piece (or passed as it is when `last`).
std::size_t appendPrintable(std::string_view text, bool last, std::string& out);

}  // namespace dl

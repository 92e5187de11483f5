#pragma once
// JSON text appended to a buffer by hand, for writers that stream millions of records and cannot
// afford a DOM per record (core/export/trace_events.cpp). Strings from a dump are not trusted to be
// UTF-8: an invalid byte becomes U+FFFD, so the output always parses.
#include <fmt/format.h>

#include <string_view>

namespace dl {

// `s` as a JSON string literal, quotes included.
void appendJsonString(fmt::memory_buffer& out, std::string_view s);

// A finite double as the shortest text that reads back to the same value; +/-Inf and NaN (not JSON
// numbers) as the strings "inf", "-inf", "nan".
void appendJsonNumber(fmt::memory_buffer& out, double v);

}  // namespace dl

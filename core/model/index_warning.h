#pragma once
// A warning of the index (a file or folder not read, or read with a note), apart from dump_index.h
// so that what only reports warnings (the folder scan, the format parsers) does not rebuild
// whenever the index's records change.
#include <cstdint>
#include <string>

namespace dl {

// What a warning means for the verdict, set where the warning is written. Unreadable: some content
// of the file or folder could not be read (counted in "K file(s) could not be read", and a clean
// verdict says so). Note: it was read in full, and the note says how the index coped (ops ordered
// by file name, a duplicate kept once, an unknown column ignored, ...).
enum class WarningSeverity : std::uint8_t { Unreadable = 0, Note = 1 };

struct IndexWarning {
    std::string path;    // file or folder the warning is about
    std::string reason;  // human-readable cause
    WarningSeverity severity = WarningSeverity::Unreadable;
};

}  // namespace dl

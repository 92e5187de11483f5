#pragma once
// Opens a file for reading only when it is a regular file. A FIFO would block the open (or the
// read) for ever, a folder or device read as a file aborts or never ends: given as an argument,
// found inside a dump or sitting where a cache shard should be, each is refused with a reason.
#include <string>

namespace dl {

// "FIFO", "socket", "character device", "block device", "folder", "regular file", ...
const char* fileTypeName(unsigned mode);

// A read-only descriptor (O_CLOEXEC) of a regular file, or -1 with the reason in `error`
// ("cannot open: <errno text>" or "not a regular file (a FIFO); not read").
int openRegularFile(const std::string& path, std::string& error);

}  // namespace dl

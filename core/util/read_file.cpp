#include "core/util/read_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/util/huge_pages.h"

namespace dl {

bool readFileAt(int fd, std::uint8_t* dst, std::size_t n, std::uint64_t offset, std::string& error) {
    std::size_t got = 0;
    while (got < n) {
        const ssize_t r = ::pread(fd, dst + got, n - got, off_t(offset + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            error = std::string("read failed: ") + std::strerror(errno);
            return false;
        }
        if (r == 0) {
            error = "file ends at " + std::to_string(offset + got) + " bytes, expected " + std::to_string(offset + n);
            return false;
        }
        got += std::size_t(r);
    }
    return true;
}

bool readFileText(const std::string& path, std::string& text, std::string& error, std::uint64_t maxBytes) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) {
        error = "cannot open " + path;
        return false;
    }
    const std::streamoff size = in.tellg();
    if (size < 0 || std::uint64_t(size) > maxBytes) {
        error = path + ": too large or unreadable";
        return false;
    }
    text.clear();
    allocateHuge(text, std::size_t(size));
    in.seekg(0);
    if (!in.read(text.data(), size)) {
        error = "read error on " + path;
        return false;
    }
    return true;
}

}  // namespace dl

#include "core/util/read_file.h"

#include <fstream>

#include "core/util/huge_pages.h"

namespace dl {

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

#include "core/index/index_file.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>

#include "core/index/index_serializer.h"
#include "core/io/regular_file.h"
#include "core/util/read_file.h"

namespace dl {

bool isIndexFile(const std::string& path) {
    std::string error;
    const int fd = openRegularFile(path, error);  // never blocks on a FIFO
    if (fd < 0) return false;
    std::uint8_t magic[8] = {};
    const bool ok = readFileAt(fd, magic, sizeof magic, 0, error);
    ::close(fd);
    return ok && std::memcmp(magic, "DLINDEX\x1a", 8) == 0;
}

bool loadIndexFile(const std::string& path, DumpIndex& out, IndexReport& report, std::string& error) {
    const auto t0 = std::chrono::steady_clock::now();
    FolderFingerprint fp;
    if (!readIndexFile(path, out, fp, error)) {
        error = path + ": " + error;
        return false;
    }
    report.formats.push_back("DumpLens index file");
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return true;
}

bool saveIndexFile(const std::string& path, const DumpIndex& index, std::string& error) {
    return writeIndexFile(path, index, {}, kPortableEncoding, error);
}

std::string hostName() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return {};
    return buf;
}

}  // namespace dl

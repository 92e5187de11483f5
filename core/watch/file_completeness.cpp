#include "core/watch/file_completeness.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "core/io/npy_file.h"

namespace dl {
namespace {

class Fd {
public:
    explicit Fd(const std::string& path) : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)) {}
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    std::size_t read(void* buf, std::size_t n, std::uint64_t at) const {
        const ssize_t got = fd < 0 ? -1 : ::pread(fd, buf, n, off_t(at));
        return got < 0 ? 0 : std::size_t(got);
    }
    int fd;
};

}  // namespace

bool looksComplete(const std::string& absPath, std::uint64_t size) {
    const std::string_view p(absPath);
    if (size == 0) return false;  // created, nothing written yet
    const Fd f(absPath);
    if (f.fd < 0) return true;  // unreadable: the reader says why
    if (p.ends_with(".npy")) {
        std::uint8_t head[4096];
        const std::size_t n = f.read(head, sizeof head, 0);
        NpyHeader h;
        std::string error;
        // A header cut short, or a payload shorter than the header declares: still being written.
        // Any other failure (bad magic, an unknown descr) does not go away: the reader reports it.
        if (size < 10) return false;
        if (parseNpyHeader(head, n, size, h, error)) return true;
        return error.find("ends at") == std::string::npos && error.find("cut off") == std::string::npos &&
            error.find("but the file has only") == std::string::npos && !error.starts_with("file is ");
    }
    char tail[64];
    const std::size_t want = std::size_t(std::min<std::uint64_t>(size, sizeof tail));
    const std::size_t n = f.read(tail, want, size - want);
    if (n == 0) return true;
    if (p.ends_with(".csv")) return tail[n - 1] == '\n';
    if (p.ends_with(".json")) {
        std::size_t i = n;
        while (i > 0 && std::strchr(" \t\r\n", tail[i - 1])) --i;
        return i > 0 && (tail[i - 1] == '}' || tail[i - 1] == ']');
    }
    if (p.ends_with(".pt") && n >= 22) {  // end of central directory record, no archive comment
        return std::memcmp(tail + n - 22, "PK\x05\x06", 4) == 0;
    }
    return true;
}

}  // namespace dl

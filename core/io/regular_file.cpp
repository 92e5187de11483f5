#include "core/io/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dl {

const char* fileTypeName(unsigned mode) {
    if (S_ISREG(mode)) return "regular file";
    if (S_ISDIR(mode)) return "folder";
    if (S_ISFIFO(mode)) return "FIFO";
    if (S_ISSOCK(mode)) return "socket";
    if (S_ISCHR(mode)) return "character device";
    if (S_ISBLK(mode)) return "block device";
    return "special file";
}

int openRegularFile(const std::string& path, std::string& error) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        error = std::string("cannot open: ") + std::strerror(errno);
        return -1;
    }
    auto refuse = [&](unsigned mode) {
        error = std::string("not a regular file (a ") + fileTypeName(mode) + "); not read";
        return -1;
    };
    if (!S_ISREG(st.st_mode)) return refuse(st.st_mode);
    // O_NONBLOCK: if the path was swapped for a FIFO since the stat, the open still returns.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        error = std::string("cannot open: ") + std::strerror(errno);
        return -1;
    }
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const unsigned mode = st.st_mode;
        ::close(fd);
        return refuse(mode);
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

}  // namespace dl

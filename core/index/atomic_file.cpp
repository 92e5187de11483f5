#include "core/index/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

namespace dl {
namespace {

// Temporary files "<name>.tmp<random>.<pid>" left by a writer that was killed: removed when their
// process is gone (a live writer, even of another run, keeps its file).
void removeStaleTemporaries(const std::filesystem::path& target) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const std::string prefix = target.filename().string() + ".tmp";
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!name.starts_with(prefix)) continue;
        const auto dot = name.rfind('.');
        if (dot == std::string::npos || dot + 1 >= name.size() || dot < prefix.size()) continue;
        const std::string pidText = name.substr(dot + 1);
        if (pidText.find_first_not_of("0123456789") != std::string::npos || pidText.size() > 9) continue;
        const pid_t pid = pid_t(std::stol(pidText));
        std::error_code removeError;  // a file another cleaner removed first is fine
        if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) fs::remove(it->path(), removeError);
    }
}

}  // namespace

AtomicFile::~AtomicFile() {
    if (m_fd >= 0) {
        ::close(m_fd);
        ::unlink(m_tmp.c_str());
    }
}

bool AtomicFile::open(const std::string& path, std::string& error) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path target(path);
    if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
    removeStaleTemporaries(target);
    std::random_device rd;
    m_path = path;
    m_tmp = path + ".tmp" + std::to_string(rd()) + "." + std::to_string(::getpid());
    m_fd = ::open(m_tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (m_fd < 0) {
        error = "cannot create " + m_tmp + ": " + std::strerror(errno);
        return false;
    }
    return true;
}

bool AtomicFile::write(const void* data, std::size_t n, std::string& error) {
    const auto* p = static_cast<const char*>(data);
    for (std::size_t done = 0; done < n;) {
        const ssize_t k = ::write(m_fd, p + done, n - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            error = "cannot write " + m_tmp + ": " + std::strerror(errno);
            return false;
        }
        done += std::size_t(k);
    }
    return true;
}

bool AtomicFile::commit(std::string& error) {
    const bool synced = ::fsync(m_fd) == 0;
    ::close(m_fd);
    m_fd = -1;
    if (!synced || ::rename(m_tmp.c_str(), m_path.c_str()) != 0) {
        error = "cannot move " + m_tmp + " to " + m_path + ": " + std::strerror(errno);
        ::unlink(m_tmp.c_str());
        return false;
    }
    return true;
}

}  // namespace dl

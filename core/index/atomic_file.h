#pragma once
// A file that appears whole or not at all: written to "<path>.tmp<random>.<pid>" in the same
// folder, fsynced, then renamed over `path`. Dropped without commit(), the temporary is removed.
#include <cstddef>
#include <string>

namespace dl {

class AtomicFile {
public:
    AtomicFile() = default;
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    // Creates the parent folders and the temporary (removing temporaries of dead writers first).
    bool open(const std::string& path, std::string& error);
    bool write(const void* data, std::size_t n, std::string& error);
    bool commit(std::string& error);  // fsync + rename

private:
    std::string m_path, m_tmp;
    int m_fd = -1;
};

}  // namespace dl

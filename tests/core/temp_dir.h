#pragma once
// Test helpers: a self-removing temporary folder and a file writer that creates parent folders.
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace dltest {

class TempDir {
public:
    explicit TempDir(const std::string& prefix = "dumplens_test_") {
        std::random_device rd;
        path = std::filesystem::temp_directory_path() / (prefix + std::to_string(rd()) + std::to_string(rd()));
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::filesystem::path path;
};

inline void writeFile(const std::filesystem::path& p, const std::string& bytes) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
}

}  // namespace dltest

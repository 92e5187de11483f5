#pragma once
// Test helpers: a self-removing temporary folder, a file writer that creates parent folders, and
// whole-file readers.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

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
inline void writeFile(const std::filesystem::path& p, const std::vector<std::uint8_t>& bytes) {
    writeFile(p, std::string(bytes.begin(), bytes.end()));
}

// The whole file ("" or empty when it cannot be read).
inline std::string readText(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}
inline std::vector<std::uint8_t> readBytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace dltest

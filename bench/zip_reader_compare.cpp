// Measurement behind keeping core/io/zip_directory.cpp (see the figures at the top of that file):
// the hand-written central-directory reader against libzip 1.7 (zip_open_from_source on a
// buffer, ZIP_CHECKCONS) on the same archives: time per open and the error each gives on a file
// that is not a well-formed ZIP. Build by hand (not part of the tree's build, libzip is not a
// dependency):  g++ -O2 -std=c++20 -I. bench/zip_reader_compare.cpp build/ci/core/libdumplens_core.a -lzip
// Usage: zip_reader_compare FILE...
#include <zip.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "core/io/zip_directory.h"

namespace {

std::string slurp(const char* p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

template <class F>
double usPerCall(F&& f, int n) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) f();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
}

}  // namespace

int main(int argc, char** argv) {
    for (int a = 1; a < argc; ++a) {
        const std::string bytes = slurp(argv[a]);
        std::string ownError, zipError;
        std::size_t ownEntries = 0;
        zip_int64_t zipEntries = -1;
        const auto own = [&] {
            dl::ZipDirectory d;
            const dl::ByteReader reader = [&](std::uint64_t off, std::size_t n, std::uint8_t* out) {
                if (off > bytes.size() || n > bytes.size() - off) return false;
                std::memcpy(out, bytes.data() + off, n);
                return true;
            };
            ownError.clear();
            ownEntries = d.read(reader, bytes.size(), ownError) ? d.entries().size() : 0;
        };
        const auto lib = [&] {
            zip_error_t err;
            zip_error_init(&err);
            zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &err);
            zip_t* z = src ? zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &err) : nullptr;
            if (z) {
                zipEntries = zip_get_num_entries(z, 0);
                zip_discard(z);
                zipError.clear();
            } else {
                if (src) zip_source_free(src);
                zipEntries = -1;
                zipError = zip_error_strerror(&err);
            }
            zip_error_fini(&err);
        };
        const double tOwn = usPerCall(own, 2000), tLib = usPerCall(lib, 2000);
        std::printf("%s (%zu B): own %.2f us, %zu entries%s%s | libzip %.2f us, %lld entries%s%s\n", argv[a],
                    bytes.size(), tOwn, ownEntries, ownError.empty() ? "" : ", error: ", ownError.c_str(), tLib,
                    static_cast<long long>(zipEntries), zipError.empty() ? "" : ", error: ", zipError.c_str());
    }
}

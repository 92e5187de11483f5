#include "core/watch/unit_spill.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "core/index/index_file.h"
#include "core/index/index_serializer.h"

namespace dl {
namespace {

constexpr char kMagic[8] = {'D', 'L', 'S', 'P', 'I', 'L', 'L', '1'};
// What goes to disk: the DLSPILL1 bytes (the index's sections raw) in one zstd frame, after this
// magic and their size. The index encoding puts each section at a 4 KiB boundary (for mapping a
// cache file), so an entry of a few records is ~37 KB of mostly zero padding; in the frame, a few
// hundred bytes.
constexpr char kPackedMagic[8] = {'D', 'L', 'S', 'P', 'I', 'L', 'L', 'Z'};
constexpr std::uint64_t kMaxUnpacked = std::uint64_t(1) << 36;

template <class T>
void put(std::vector<std::uint8_t>& out, const T& v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof v);
}

template <class T>
bool take(const std::vector<std::uint8_t>& in, std::size_t& at, T& v) {
    if (in.size() - at < sizeof v) return false;
    std::memcpy(&v, in.data() + at, sizeof v);
    at += sizeof v;
    return true;
}

// `packed`: a unit as encodeUnit wrote it; `path` names it in the errors.
bool decodeUnit(const std::vector<std::uint8_t>& packed, const std::string& path, DumpIndex& index,
                std::vector<ScannedFile>& files, std::string& error) {
    std::uint64_t rawSize = 0;
    if (packed.size() < sizeof kPackedMagic + sizeof rawSize ||
        std::memcmp(packed.data(), kPackedMagic, sizeof kPackedMagic) != 0) {
        error = path + ": not a DumpLens watch spill";
        return false;
    }
    std::memcpy(&rawSize, packed.data() + sizeof kPackedMagic, sizeof rawSize);
    const std::uint8_t* frame = packed.data() + sizeof kPackedMagic + sizeof rawSize;
    const std::size_t frameBytes = packed.size() - sizeof kPackedMagic - sizeof rawSize;
    if (rawSize > kMaxUnpacked || ZSTD_getFrameContentSize(frame, frameBytes) != rawSize) {
        error = path + ": damaged (size)";
        return false;
    }
    std::vector<std::uint8_t> in(rawSize);
    thread_local const std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
    if (!dctx) {
        error = path + ": out of memory";
        return false;
    }
    const std::size_t got = ZSTD_decompressDCtx(dctx.get(), in.data(), in.size(), frame, frameBytes);
    if (ZSTD_isError(got) || got != rawSize) {
        error = path + ": damaged (" + (ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short") + ")";
        return false;
    }
    std::uint64_t sum = 0;
    if (in.size() < sizeof kMagic + 2 * sizeof sum || std::memcmp(in.data(), kMagic, sizeof kMagic) != 0) {
        error = path + ": not a DumpLens watch spill";
        return false;
    }
    std::memcpy(&sum, in.data() + in.size() - sizeof sum, sizeof sum);
    in.resize(in.size() - sizeof sum);
    if (XXH3_64bits(in.data(), in.size()) != sum) {
        error = path + ": checksum mismatch";
        return false;
    }
    std::size_t at = sizeof kMagic;
    std::uint64_t idxBytes = 0, count = 0;
    FolderFingerprint fp;
    if (!take(in, at, idxBytes) || in.size() - at < idxBytes) {
        error = path + ": truncated";
        return false;
    }
    if (!deserializeIndex(in.data() + at, std::size_t(idxBytes), index, fp, error)) {
        error = path + ": " + error;
        return false;
    }
    at += std::size_t(idxBytes);
    if (!take(in, at, count)) {
        error = path + ": truncated";
        return false;
    }
    files.clear();
    for (std::uint64_t i = 0; i < count; ++i) {
        std::uint32_t len = 0;
        ScannedFile f;
        if (!take(in, at, len) || in.size() - at < len) {
            error = path + ": truncated";
            return false;
        }
        f.rel.assign(reinterpret_cast<const char*>(in.data() + at), len);
        at += len;
        if (!take(in, at, f.size) || !take(in, at, f.mtimeNs) || !take(in, at, f.stamp)) {
            error = path + ": truncated";
            return false;
        }
        files.push_back(std::move(f));
    }
    return true;
}

std::vector<std::uint8_t> encodeUnit(const DumpIndex& index, const std::vector<ScannedFile>& files) {
    std::vector<std::uint8_t> out(kMagic, kMagic + sizeof kMagic);
    // Raw sections: the frame around them compresses everything once.
    const std::vector<std::uint8_t> idx = serializeIndex(index, FolderFingerprint{}, IndexEncoding{true, 0});
    put(out, std::uint64_t(idx.size()));
    out.insert(out.end(), idx.begin(), idx.end());
    put(out, std::uint64_t(files.size()));
    for (const ScannedFile& f : files) {
        put(out, std::uint32_t(f.rel.size()));
        out.insert(out.end(), f.rel.begin(), f.rel.end());
        put(out, f.size);
        put(out, f.mtimeNs);
        put(out, f.stamp);
    }
    put(out, std::uint64_t(XXH3_64bits(out.data(), out.size())));
    constexpr std::size_t at = sizeof kPackedMagic + sizeof(std::uint64_t);
    std::vector<std::uint8_t> packed(at + ZSTD_compressBound(out.size()));
    const std::uint64_t rawSize = out.size();
    std::memcpy(packed.data(), kPackedMagic, sizeof kPackedMagic);
    std::memcpy(packed.data() + sizeof kPackedMagic, &rawSize, sizeof rawSize);
    thread_local const std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
    if (!cctx) return {};
    const std::size_t n =
        ZSTD_compressCCtx(cctx.get(), packed.data() + at, packed.size() - at, out.data(), out.size(), 1);
    if (ZSTD_isError(n)) return {};  // only when out of memory; the caller's write then fails
    packed.resize(at + n);
    return packed;
}

}  // namespace

bool writeUnitSpill(const std::string& path, const DumpIndex& index, const std::vector<ScannedFile>& files,
                    std::string& error) {
    const std::vector<std::uint8_t> out = encodeUnit(index, files);
    if (out.empty()) {
        error = "cannot compress " + path + " (out of memory)";
        return false;
    }
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        error = "cannot create " + tmp + ": " + std::strerror(errno);
        return false;
    }
    for (std::size_t done = 0; done < out.size();) {
        const ssize_t k = ::write(fd, out.data() + done, out.size() - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            error = "cannot write " + tmp + ": " + std::strerror(errno);
            ::close(fd);
            ::unlink(tmp.c_str());
            return false;
        }
        done += std::size_t(k);
    }
    if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
        error = "cannot write " + path + ": " + std::strerror(errno);
        ::unlink(tmp.c_str());
        return false;
    }
    return true;
}

bool readUnitSpill(const std::string& path, DumpIndex& index, std::vector<ScannedFile>& files, std::string& error) {
    std::vector<std::uint8_t> in;
    if (!readWholeFile(path, in, error)) return false;
    return decodeUnit(in, path, index, files, error);
}

std::string unitSpillFolder(const std::string& cacheDir, const std::string& rootAbs) {
    namespace fs = std::filesystem;
    char key[24];
    std::snprintf(key, sizeof key, "%016llx",
                  static_cast<unsigned long long>(XXH64(rootAbs.data(), rootAbs.size(), 0)));
    // The host in the name: a cache shared between machines (NFS) holds others' live folders, whose
    // process ids mean nothing here.
    std::string host = hostName();
    std::replace_if(
        host.begin(), host.end(), [](char c) { return c == '/' || c == '.'; }, '_');
    const fs::path base = fs::path(cacheDir) / "watch";
    std::error_code ec;
    // "<key>.<host>.<pid>" of a process of this host that is gone: a watch killed before it could
    // remove its own.
    const std::string mine = "." + host + ".";
    for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.find(mine) == std::string::npos) continue;
        const auto dot = name.rfind('.');
        if (dot == std::string::npos || name.find_first_not_of("0123456789", dot + 1) != std::string::npos ||
            name.size() - dot - 1 > 9 || dot + 1 == name.size())
            continue;
        const pid_t pid = pid_t(std::stol(name.substr(dot + 1)));
        std::error_code removeError;
        if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) fs::remove_all(it->path(), removeError);
    }
    return (base / (std::string(key) + mine + std::to_string(::getpid()))).string();
}

UnitSideFile::UnitSideFile(std::string path) : m_path(std::move(path)) {}

UnitSideFile::~UnitSideFile() {
    if (m_fd >= 0) ::close(m_fd);
}

bool UnitSideFile::append(const DumpIndex& index, std::uint64_t& at, std::uint32_t& bytes, std::string& error) {
    if (m_fd < 0) m_fd = ::open(m_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (m_fd < 0) {
        error = "cannot create " + m_path + ": " + std::strerror(errno);
        return false;
    }
    const std::vector<std::uint8_t> out = encodeUnit(index, {});
    if (out.empty()) {
        error = "cannot compress an entry of " + m_path + " (out of memory)";
        return false;
    }
    if (out.size() > 0xffffffffu) {
        error = m_path + ": entry too large";
        return false;
    }
    for (std::size_t done = 0; done < out.size();) {
        const ssize_t k = ::pwrite(m_fd, out.data() + done, out.size() - done, off_t(m_end + done));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            error = "cannot write " + m_path + ": " + std::strerror(errno);
            return false;  // the bytes past m_end are written over by the next entry
        }
        done += std::size_t(k);
    }
    at = m_end;
    bytes = std::uint32_t(out.size());
    m_end += out.size();
    return true;
}

bool UnitSideFile::read(std::uint64_t at, std::uint32_t bytes, DumpIndex& index, std::string& error) const {
    if (m_fd < 0) {
        error = m_path + ": nothing written yet";
        return false;
    }
    std::vector<std::uint8_t> in(bytes);
    for (std::size_t done = 0; done < in.size();) {
        const ssize_t k = ::pread(m_fd, in.data() + done, in.size() - done, off_t(at + done));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            error = m_path + ": " + (k == 0 ? std::string("truncated") : std::string(std::strerror(errno)));
            return false;
        }
        done += std::size_t(k);
    }
    std::vector<ScannedFile> none;
    return decodeUnit(in, m_path + "@" + std::to_string(at), index, none, error);
}

}  // namespace dl

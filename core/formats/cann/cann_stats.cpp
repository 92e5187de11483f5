#include "core/formats/cann/cann_stats.h"
#include "core/io/regular_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "core/formats/cann/cann_dump_file.h"
#include "core/formats/cann/device_layout.h"
#include "core/model/dump_index.h"
#include "core/stats/stats_accumulator.h"

namespace dl {
namespace {

constexpr std::uint64_t kWholeFile = 4u << 20;    // read small raw files in one go
constexpr std::uint64_t kMaxUnpack = 1ull << 30;  // packed sub-byte tensors are unpacked in memory

// Formats that pad; DeviceLayout models the common ones, the rest keep their padding in the figures.
bool isPaddedFormat(const std::string& f) {
    if (DeviceLayout::isPaddedFormat(f)) return true;
    for (const char* p : {"FRACTAL_Z_C04", "FRACTAL_ZN_LSTM", "FRACTAL_Z_G", "FRACTAL_ZN_RNN", "C1HWNC0"})
        if (f == p) return true;
    return false;
}

// Source of tensor bytes: the whole file in memory, or pread on demand.
class ByteSource {
public:
    ByteSource(const std::vector<std::uint8_t>* mem, int fd) : m_mem(mem), m_fd(fd) {}
    bool read(std::uint64_t offset, std::size_t n, std::uint8_t* out, std::string& error) const {
        if (m_mem) {
            if (offset + n > m_mem->size()) {
                error = "file shrank while being read";
                return false;
            }
            std::memcpy(out, m_mem->data() + offset, n);
            return true;
        }
        std::size_t got = 0;
        while (got < n) {
            const ssize_t r = ::pread(m_fd, out + got, n - got, off_t(offset + got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                error = r < 0 ? std::string("read failed: ") + std::strerror(errno) : "file shrank";
                return false;
            }
            got += std::size_t(r);
        }
        return true;
    }
    const std::uint8_t* direct(std::uint64_t offset, std::uint64_t n) const {
        return m_mem && offset + n <= m_mem->size() ? m_mem->data() + offset : nullptr;
    }

private:
    const std::vector<std::uint8_t>* m_mem;
    int m_fd;
};

// Walks the layout's value runs in stored order, reading windows of about 1 MiB (whole runs)
// when the file is not in memory. Runs that touch are one; short runs (a last C0 block holds a
// few channels per pixel) are gathered and added in batches, since each add has a fixed cost.
bool statsWithoutPadding(const ByteSource& src, const CannTensor& t, std::size_t es, const DeviceLayout& layout,
                         StatsAccumulator& acc, std::string& error) {
    constexpr std::uint64_t kWindow = 1u << 20, kShortRun = 1024, kBatch = 1u << 18;
    std::vector<std::uint8_t> buf, batch;
    std::uint64_t winStart = 0, winEnd = 0;  // stored elements held in buf
    std::uint64_t runStart = 0, runCount = 0;
    bool ok = true;
    auto flush = [&]() {
        if (!runCount || !ok) return;
        const std::uint64_t bytes = runCount * es, off = t.offset + runStart * es;
        const std::uint8_t* d = src.direct(off, bytes);
        if (!d) {
            if (runStart < winStart || runStart + runCount > winEnd) {
                const std::uint64_t n = std::min(std::max(runCount, kWindow / es), layout.deviceElements() - runStart);
                buf.resize(std::size_t(n * es));
                if (!src.read(off, buf.size(), buf.data(), error)) {
                    ok = false;
                    return;
                }
                winStart = runStart;
                winEnd = runStart + n;
            }
            d = buf.data() + (runStart - winStart) * es;
        }
        if (runCount >= kShortRun) {
            acc.add(d, std::size_t(runCount), t.dtype);
        } else {
            batch.insert(batch.end(), d, d + bytes);
            if (batch.size() >= kBatch) {
                acc.add(batch.data(), batch.size() / es, t.dtype);
                batch.clear();
            }
        }
        runCount = 0;
    };
    layout.forEachRun([&](std::uint64_t s, std::uint64_t n, std::uint64_t, std::uint64_t) {
        if (runCount && runStart + runCount == s) {
            runCount += n;
            return;
        }
        flush();
        runStart = s;
        runCount = n;
    });
    flush();
    if (ok && !batch.empty()) acc.add(batch.data(), batch.size() / es, t.dtype);
    return ok;
}

// INT4: two signed nibbles per byte (low first); UINT1: eight bits per byte (LSB first).
bool statsPacked(const ByteSource& src, const CannTensor& t, std::uint64_t elems, StatsAccumulator& acc,
                 std::string& error) {
    const std::uint64_t bytes = t.dtype == DType::Int4 ? (elems + 1) / 2 : (elems + 7) / 8;
    if (bytes > t.size || bytes > kMaxUnpack) {
        error = "packed payload too small or too large to unpack";
        return false;
    }
    std::vector<std::uint8_t> raw(bytes);
    if (!src.read(t.offset, raw.size(), raw.data(), error)) return false;
    std::vector<std::int8_t> values(elems);
    for (std::uint64_t i = 0; i < elems; ++i) {
        const std::uint8_t b = raw[t.dtype == DType::Int4 ? i / 2 : i / 8];
        values[i] = t.dtype == DType::Int4 ? std::int8_t(std::int8_t((i % 2 ? b >> 4 : b & 0xf) << 4) >> 4)
                                           : std::int8_t((b >> (i % 8)) & 1);
    }
    acc.add(values.data(), values.size(), t.dtype == DType::Int4 ? DType::Int8 : DType::UInt8);
    return true;
}

void tensorStats(const StatsJob& job, const ByteSource& src, const CannTensor& t, StatsJobPart& p) {
    p.io = t.io;
    p.slot = t.slot;
    p.dtype = t.dtype;
    p.format = t.format;
    p.shape = t.shape;
    p.originalShape = t.originalShape;
    p.dataOffset = t.offset;
    p.dataBytes = t.size;
    if (!t.originalShape.empty() && (t.originalShape != t.shape || isPaddedFormat(t.format))) p.flags |= DeviceFormat;
    std::uint64_t elems = 1;
    for (auto d : t.shape) {
        if (d < 0) {
            p.note = "dynamic (unknown) dims in the stored shape: no statistics";
            return;
        }
        elems *= std::uint64_t(d);
    }
    const std::string_view typeName = cannDataTypeName(t.dataTypeEnum);
    if (t.dtype == DType::Unknown || t.dtype == DType::Complex64 || t.dtype == DType::Complex128) {
        p.note = "no statistics for data type " +
            (typeName.empty() ? std::to_string(t.dataTypeEnum) : std::string(typeName));
        return;
    }
    StatsAccumulator acc;
    std::string error;
    if (t.packed) {
        if (!statsPacked(src, t, elems, acc, error)) {
            p.note = error;
            return;
        }
    } else {
        const std::size_t es = dtypeSize(t.dtype);
        if (elems * es > t.size) {
            p.note =
                "payload holds " + std::to_string(t.size) + " bytes, the shape needs " + std::to_string(elems * es);
            return;
        }
        DeviceLayout layout;
        std::string why;
        const bool excl =
            isPaddedFormat(t.format) && DeviceLayout::build(t.format, t.shape, t.originalShape, layout, why);
        if (excl) {
            if (!statsWithoutPadding(src, t, es, layout, acc, error)) {
                p.note = error;
                return;
            }
            p.flags |= PaddingExcluded;
        } else {
            if (isPaddedFormat(t.format)) {
                p.flags |= PaddingIncluded;
                p.note = "statistics include the " + t.format + " padding (" + why + ")";
            }
            if (const std::uint8_t* d = src.direct(t.offset, elems * es)) {
                acc.add(d, std::size_t(elems), t.dtype);
            } else {
                if (!computeFileStats(job.absPath.c_str(), t.offset, elems * es, t.dtype, false, p.stats, p.hist,
                                      error)) {
                    p.note = error;
                    return;
                }
                p.hasStats = true;
                return;
            }
        }
    }
    p.stats = acc.stats();
    p.hist = acc.histogram();
    p.hasStats = true;
}

}  // namespace

void runCannRawJob(const StatsJob& job, std::vector<std::uint8_t>& scratch, StatsJobResult& r) {
    const int fd = openRegularFile(job.absPath, r.error);
    if (fd < 0) return;
    std::unique_ptr<int, void (*)(int*)> closer(new int(fd), [](int* f) {
        ::close(*f);
        delete f;
    });
    CannDumpHeader h;
    const std::vector<std::uint8_t>* mem = nullptr;
    if (job.fileSize <= kWholeFile) {
        scratch.resize(job.fileSize);
        std::string error;
        if (!ByteSource(nullptr, fd).read(0, scratch.size(), scratch.data(), error)) {
            r.error = error;
            return;
        }
        mem = &scratch;
        if (!parseCannDumpHeader(scratch.data(), scratch.size(), job.fileSize, h, r.error)) return;
    } else if (!readCannDumpHeader(job.absPath, h, r.error)) {
        return;
    }
    if (h.payloadEnd != job.fileSize)
        r.notes.push_back(std::to_string(job.fileSize - h.payloadEnd) + " bytes after the last payload (ignored)");
    const ByteSource src(mem, fd);
    for (const auto* list : {&h.inputs, &h.outputs})
        for (const CannTensor& t : *list) {
            StatsJobPart p;
            tensorStats(job, src, t, p);
            r.parts.push_back(std::move(p));
        }
    r.ok = true;
}

}  // namespace dl

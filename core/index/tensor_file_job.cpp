#include "core/index/tensor_file_job.h"
#include "core/io/regular_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/io/npy_file.h"
#include "core/io/torch_file.h"
#include "core/stats/stats_accumulator.h"

namespace dl {
namespace {

constexpr std::uint64_t kSmallFile = 1 << 20;  // read whole: one open and one read per small tensor

bool readSmallFile(const std::string& path, std::uint64_t size, std::vector<std::uint8_t>& buf, std::string& error) {
    const int fd = openRegularFile(path, error);
    if (fd < 0) return false;
    buf.resize(size);
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::read(fd, buf.data() + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += std::size_t(n);
    }
    ::close(fd);
    buf.resize(done);  // a file that shrank since the scan is caught by the header checks
    return true;
}

bool binJob(const StatsJob& job, const DumpFileName& name, StatsJobResult& r) {
    r.dtype = name.dtype;
    r.shape = name.shape;
    r.hasShape = true;
    const std::size_t es = dtypeSize(r.dtype);
    if (es == 0) {
        r.error = "unknown dtype '" + name.dtypeRaw + "' in the file name";
        return false;
    }
    std::uint64_t elements = 1;
    for (auto d : r.shape) elements *= std::uint64_t(d);
    if (elements * es != job.fileSize) {
        r.error = "file holds " + std::to_string(job.fileSize) + " bytes, its name promises " +
            std::to_string(elements * es) + " (" + std::to_string(elements) + " x " + std::string(dtypeName(r.dtype)) +
            ")";
        return false;
    }
    r.dataBytes = job.fileSize;
    return computeFileStats(job.absPath.c_str(), 0, r.dataBytes, r.dtype, false, r.stats, r.hist, r.error);
}

}  // namespace

StatsJobResult runTensorFileJob(const StatsJob& job, TensorHeader header, std::vector<std::uint8_t>& scratch) {
    StatsJobResult r;
    // .npy and torch .pt differ only in their header; both give the payload's offset, dtype and shape.
    const bool torch = header == TensorHeader::Torch;
    NpyHeader h;
    if (job.fileSize <= kSmallFile) {
        if (!readSmallFile(job.absPath, job.fileSize, scratch, r.error)) return r;
        if (torch ? !parseTorchTensorHeader(scratch.data(), scratch.size(), h, r.error)
                  : !parseNpyHeader(scratch.data(), scratch.size(), scratch.size(), h, r.error, job.hint))
            return r;
    } else if (torch ? !readTorchTensorHeader(job.absPath, h, r.error)
                     : !readNpyHeader(job.absPath, h, r.error, job.hint)) {
        return r;
    }
    r.dtype = h.dtype;
    r.bigEndian = h.bigEndian;
    r.fortranOrder = h.fortranOrder;
    r.shape = h.shape;
    r.hasShape = true;
    r.dataOffset = h.dataOffset;
    r.dataBytes = h.dataBytes;
    if (job.fileSize <= kSmallFile) {
        // The header parsers check this; a header that lies past the bytes read is never followed.
        if (h.dataOffset > scratch.size() || h.dataBytes > scratch.size() - h.dataOffset ||
            h.elementCount > h.dataBytes / std::max<std::size_t>(1, dtypeSize(h.dtype))) {
            r.ok = false;
            r.error = "tensor data (" + std::to_string(h.dataBytes) + " bytes at offset " +
                std::to_string(h.dataOffset) + ") runs past the " + std::to_string(scratch.size()) +
                " bytes of the file";
            return r;
        }
        StatsAccumulator acc;
        acc.add(scratch.data() + h.dataOffset, std::size_t(h.elementCount), h.dtype, h.bigEndian);
        r.stats = acc.stats();
        r.hist = acc.histogram();
        r.ok = true;
    } else {
        r.ok = computeFileStats(job.absPath.c_str(), h.dataOffset, h.dataBytes, h.dtype, h.bigEndian, r.stats, r.hist,
                                r.error);
    }
    return r;
}

StatsJobResult runRawBinJob(const StatsJob& job, const DumpFileName& name) {
    StatsJobResult r;
    r.ok = binJob(job, name, r);
    return r;
}

}  // namespace dl

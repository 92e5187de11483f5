#include "core/formats/cann/device_layout.h"

namespace dl {
namespace {

bool positive(const std::vector<std::int64_t>& s) {
    for (auto d : s)
        if (d <= 0 || d > (std::int64_t(1) << 40)) return false;
    return true;
}
std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

}  // namespace

bool DeviceLayout::build(std::string_view format, const std::vector<std::int64_t>& dev,
                         const std::vector<std::int64_t>& orig, DeviceLayout& out, std::string& why) {
    out = DeviceLayout();
    if (orig.empty()) {
        why = "no original shape";
        return false;
    }
    if (!positive(dev) || !positive(orig)) {
        why = "unknown or zero dims";
        return false;
    }
    if (format == "FRACTAL_NZ") {
        // (..., M, N) -> (..., N1, M1, M0, N0): N1 = ceil(N/N0), M1 = ceil(M/M0).
        if (dev.size() < 4 || dev.size() != std::max<std::size_t>(orig.size(), 2) + 2) {
            why = "FRACTAL_NZ device shape rank does not match the original shape";
            return false;
        }
        const std::size_t nd = dev.size();
        const std::uint64_t N0 = dev[nd - 1], M0 = dev[nd - 2], M1 = dev[nd - 3], N1 = dev[nd - 4];
        const std::uint64_t N = orig.back(), M = orig.size() >= 2 ? orig[orig.size() - 2] : 1;
        std::uint64_t batch = 1;
        for (std::size_t i = 0; i + 2 < orig.size(); ++i) {
            if (dev[i] != orig[i]) { why = "FRACTAL_NZ batch dims differ from the original shape"; return false; }
            batch *= std::uint64_t(orig[i]);
        }
        if (ceilDiv(N, N0) != N1 || ceilDiv(M, M0) != M1) {
            why = "FRACTAL_NZ tiles do not cover the original shape";
            return false;
        }
        out.m_kind = Kind::Nz;
        out.m_blocks = batch * N1;
        out.m_rows = M1 * M0;
        out.m_rowLen = N0;
        out.m_limitRows = M;
        out.m_limitCols = N;
        out.m_colBlocks = N1;
        out.m_valid = batch * M * N;
    } else if (format == "NC1HWC0") {
        // NCHW (C at 1) -> (N, C1, H, W, C0).
        if (dev.size() != 5 || orig.size() != 4) {
            why = "NC1HWC0 needs a 5-D device and 4-D original shape";
            return false;
        }
        const std::uint64_t N = orig[0], C = orig[1], H = orig[2], W = orig[3];
        if (std::uint64_t(dev[0]) != N || std::uint64_t(dev[2]) != H || std::uint64_t(dev[3]) != W ||
            ceilDiv(C, dev[4]) != std::uint64_t(dev[1])) {
            why = "NC1HWC0 device shape does not match an NCHW original shape";
            return false;
        }
        out.m_kind = Kind::Nc1hwc0;
        out.m_colBlocks = dev[1];
        out.m_blocks = N * out.m_colBlocks;
        out.m_rows = H * W;
        out.m_rowLen = dev[4];
        out.m_limitCols = C;
        out.m_valid = N * C * H * W;
    } else if (format == "FRACTAL_Z") {
        // NCHW weight -> (C1*H*W, N1, N0, C0).
        if (dev.size() != 4 || orig.size() != 4) {
            why = "FRACTAL_Z needs 4-D device and original shapes";
            return false;
        }
        const std::uint64_t N = orig[0], C = orig[1], hw = std::uint64_t(orig[2]) * std::uint64_t(orig[3]);
        const std::uint64_t C0 = dev[3], N0 = dev[2], N1 = dev[1];
        if (ceilDiv(N, N0) != N1 || ceilDiv(C, C0) * hw != std::uint64_t(dev[0])) {
            why = "FRACTAL_Z device shape does not match an NCHW original shape";
            return false;
        }
        out.m_kind = Kind::FractalZ;
        out.m_blocks = dev[0];
        out.m_rows = N1 * N0;
        out.m_rowLen = C0;
        out.m_limitRows = N;
        out.m_limitCols = C;
        out.m_hw = hw;
        out.m_valid = N * C * hw;
    } else {
        why = "no padding model for format " + std::string(format);
        return false;
    }
    out.m_blockElems = out.m_rows * out.m_rowLen;
    return true;
}

void DeviceLayout::blockRuns(std::uint64_t b, std::vector<std::pair<std::uint64_t, std::uint64_t>>& runs) const {
    runs.clear();
    std::uint64_t colBlock = 0, rowLimit = m_rows;
    switch (m_kind) {
    case Kind::Nz: colBlock = b % m_colBlocks; rowLimit = m_limitRows; break;
    case Kind::Nc1hwc0: colBlock = b % m_colBlocks; break;
    case Kind::FractalZ: colBlock = b / m_hw; rowLimit = m_limitRows; break;
    }
    const std::uint64_t first = colBlock * m_rowLen;
    const std::uint64_t width = first >= m_limitCols ? 0 : std::min(m_rowLen, m_limitCols - first);
    if (width == 0) return;
    for (std::uint64_t r = 0; r < rowLimit && r < m_rows; ++r) {
        const std::uint64_t off = r * m_rowLen;
        if (!runs.empty() && runs.back().first + runs.back().second == off) runs.back().second += width;
        else runs.emplace_back(off, width);
    }
}

}  // namespace dl

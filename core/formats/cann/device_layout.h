#pragma once
// Which stored elements of an Ascend device-format tensor hold values and which are padding
// (FRACTAL_NZ, NC1HWC0, FRACTAL_Z pad the tiled axes up to a multiple of C0/16). Statistics walk
// only the value runs so padding zeros do not distort the zero count, mean and min.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dl {

class DeviceLayout {
public:
    // False (with `why`) when padding cannot be told apart: unknown format, missing or
    // inconsistent original shape. Formats without padding also return false (nothing to exclude).
    static bool build(std::string_view format, const std::vector<std::int64_t>& deviceShape,
                      const std::vector<std::int64_t>& originalShape, DeviceLayout& out, std::string& why);

    std::uint64_t blocks() const { return m_blocks; }
    std::uint64_t blockElements() const { return m_blockElems; }
    std::uint64_t validElements() const { return m_valid; }
    // Runs (offset inside the block, count) of value elements of block `b`, ascending, merged.
    void blockRuns(std::uint64_t b, std::vector<std::pair<std::uint64_t, std::uint64_t>>& runs) const;

private:
    enum class Kind { Nz, Nc1hwc0, FractalZ } m_kind = Kind::Nz;
    std::uint64_t m_blocks = 0, m_blockElems = 0, m_valid = 0;
    // Nz: rows = M1*M0, rowLen = N0, limitRows = M, limitCols = N, colBlocks = N1.
    // Nc1hwc0: rows = H*W, rowLen = C0, limitCols = C, colBlocks = C1.
    // FractalZ: rows = N1*N0, rowLen = C0, limitRows = N, limitCols = C, hw = H*W.
    std::uint64_t m_rows = 0, m_rowLen = 0, m_limitRows = 0, m_limitCols = 0, m_colBlocks = 0, m_hw = 1;
};

}  // namespace dl

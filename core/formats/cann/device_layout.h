#pragma once
// Ascend device layouts: where each value of the logical tensor (the dump's original shape) sits
// in the stored, padded one. FRACTAL_NZ, NC1HWC0 (and NC1HWC0_C04), FRACTAL_Z, NDC1HWC0,
// FRACTAL_Z_3D and C1HWNCoC0 pad their tiled axes up to a multiple of C0/N0/M0 (C1HWNCoC0 also
// stores every channel on a Co x C0 diagonal). Statistics walk only the value runs, so padding
// zeros do not distort the zero count, mean and min; replay and compare gather the values into the
// original shape in C order, as msaccucmp's format conversion does (docs/formats.md 2.3).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dl {

class DeviceLayout {
public:
    // The formats build() knows (stored shape differs from the logical one).
    static bool isPaddedFormat(std::string_view format);

    // False (with `why`) when the values cannot be located: a format without a model here,
    // missing or inconsistent original shape, a dim that is unknown (< 0) or zero.
    static bool build(std::string_view format, const std::vector<std::int64_t>& deviceShape,
                      const std::vector<std::int64_t>& originalShape, DeviceLayout& out, std::string& why);

    std::uint64_t deviceElements() const { return m_deviceElems; }
    std::uint64_t validElements() const { return m_valid; }
    // How the original shape was read: "ND", "NCHW", "NHWC", "HWCN", "NCDHW", "NDHWC", "DHWCN".
    // Channel-first first (MindSpore's host format and msaccucmp's default); the other only when
    // the channel-first reading does not fit the stored shape.
    std::string_view originalLayout() const { return m_reading; }

    // Calls f(storedOffset, count, ndOffset, ndStride) for each run of values along the innermost
    // stored axis, by ascending storedOffset: stored elements storedOffset .. +count-1 are the
    // logical elements ndOffset, ndOffset + ndStride, ... (C order over the original shape).
    template <class F>
    void forEachRun(F&& f) const;

    // The logical tensor (validElements(), original shape, C order) from the stored elements
    // (deviceElements()). Works for any trivially copyable element type.
    template <class T>
    void toNd(const T* stored, T* nd) const {
        forEachRun([&](std::uint64_t s, std::uint64_t n, std::uint64_t o, std::uint64_t step) {
            for (std::uint64_t i = 0; i < n; ++i) nd[o + i * step] = stored[s + i];
        });
    }

private:
    // One stored axis, outermost first; the tiled first axes of FRACTAL_Z(_3D) are split
    // (C1*H*W -> C1, H, W). It adds index * scale to logical axis `logical` (-1: none, the Co axis).
    struct Axis {
        std::uint64_t size = 1;
        int logical = -1;
        std::uint64_t scale = 1;
    };
    struct AxisSpec {
        std::uint64_t size;
        char letter;  // original axis it tiles ('N', 'C', ...); 0 for none
        std::uint64_t scale;
    };
    // Checks that `axes` tile the original shape read as `letters` (one per dim) and keeps them.
    bool assemble(const std::vector<std::uint64_t>& orig, std::string_view letters, const std::vector<AxisSpec>& axes,
                  int diagonal, std::string_view reading);

    std::vector<Axis> m_axes;
    std::vector<std::uint64_t> m_limit, m_stride;  // logical axes: size, stride in the ND tensor
    int m_diagonal = -1;                           // C1HWNCoC0: the Co axis the innermost (C0) index must equal
    std::uint64_t m_deviceElems = 0, m_valid = 0;
    std::string_view m_reading;
};

template <class F>
void DeviceLayout::forEachRun(F&& f) const {
    if (m_axes.empty()) return;
    const std::size_t outer = m_axes.size() - 1;
    const Axis& in = m_axes.back();
    const std::size_t inAxis = std::size_t(in.logical);
    const std::uint64_t inLimit = m_limit[inAxis], inStride = m_stride[inAxis];
    std::uint64_t idx[8] = {}, logical[8] = {};
    for (std::uint64_t stored = 0;; stored += in.size) {
        bool ok = true;
        std::uint64_t nd = 0;
        for (std::size_t j = 0; j < m_limit.size(); ++j) {
            if (logical[j] >= m_limit[j]) {
                ok = false;
                break;
            }
            nd += logical[j] * m_stride[j];
        }
        if (ok) {
            const std::uint64_t first = logical[inAxis];
            if (m_diagonal >= 0) {
                const std::uint64_t co = idx[m_diagonal];
                if (first + co < inLimit) f(stored + co, std::uint64_t(1), nd + co * inStride, inStride);
            } else {
                f(stored, std::min(in.size, inLimit - first), nd, inStride);
            }
        }
        // Odometer over the outer axes; each carries its logical contribution along.
        std::size_t k = outer;
        for (;;) {
            if (k == 0) return;
            --k;
            const Axis& a = m_axes[k];
            ++idx[k];
            if (a.logical >= 0) logical[a.logical] += a.scale;
            if (idx[k] < a.size) break;
            if (a.logical >= 0) logical[a.logical] -= a.scale * a.size;
            idx[k] = 0;
        }
    }
}

}  // namespace dl

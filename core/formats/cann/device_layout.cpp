#include "core/formats/cann/device_layout.h"

#include <algorithm>

namespace dl {
namespace {

using U = std::uint64_t;

U ceilDiv(U a, U b) { return (a + b - 1) / b; }

U product(const std::vector<U>& v, std::size_t from, std::size_t to) {
    U p = 1;
    for (std::size_t i = from; i < to; ++i) p *= v[i];
    return p;
}

// MindSpore's PaddingShapeTo4dDefault / PaddingShapeTo5dDefault: a short shape fills the axes
// from C on ((C) -> (1, C, 1, 1), (C, H) -> (1, C, H, 1); 3-D formats (C, D, H, W) -> (1, C, D, H, W)).
std::vector<U> padChannelFirst(const std::vector<U>& s, std::size_t rank) {
    if (s.size() >= rank) return s;
    std::vector<U> out(rank, 1);
    for (std::size_t i = 0; i < s.size(); ++i) out[1 + i] = s[i];
    return out;
}

}  // namespace

bool DeviceLayout::isPaddedFormat(std::string_view f) {
    for (const char* p : {"FRACTAL_NZ", "NC1HWC0", "NC1HWC0_C04", "FRACTAL_Z", "NDC1HWC0", "FRACTAL_Z_3D", "C1HWNCoC0"})
        if (f == p) return true;
    return false;
}

bool DeviceLayout::assemble(const std::vector<U>& orig, std::string_view letters, const std::vector<AxisSpec>& axes,
                            int diagonal, std::string_view reading) {
    if (letters.size() != orig.size() || axes.size() > 8 || orig.size() > 8 || axes.empty()) return false;
    std::vector<Axis> built;
    for (const AxisSpec& a : axes) {
        Axis x;
        x.size = a.size;
        x.scale = a.scale;
        if (a.letter) {
            const std::size_t p = letters.find(a.letter);
            if (p == std::string_view::npos) return false;
            x.logical = int(p);
        }
        if (x.size == 0) return false;
        built.push_back(x);
    }
    if (built.back().logical < 0 || built.back().scale != 1) return false;
    // Each original axis is tiled by nested stored axes: the innermost has scale 1, each next
    // one's scale is the span of those inside it, and the outermost just covers the dim.
    for (std::size_t j = 0; j < orig.size(); ++j) {
        std::vector<const Axis*> tiles;
        for (const Axis& a : built)
            if (a.logical == int(j)) tiles.push_back(&a);
        std::sort(tiles.begin(), tiles.end(), [](const Axis* a, const Axis* b) { return a->scale < b->scale; });
        if (tiles.empty()) {
            if (orig[j] != 1) return false;
            continue;
        }
        U span = 1;
        for (const Axis* t : tiles) {
            if (t->scale != span) return false;
            span *= t->size;
        }
        const Axis* top = tiles.back();
        if (top->size != ceilDiv(orig[j], top->scale)) return false;
    }
    m_axes = std::move(built);
    m_limit = orig;
    m_stride.assign(orig.size(), 1);
    for (std::size_t j = orig.size(); j-- > 1;) m_stride[j - 1] = m_stride[j] * orig[j];
    m_diagonal = diagonal;
    m_reading = reading;
    m_deviceElems = 1;
    for (const Axis& a : m_axes) m_deviceElems *= a.size;
    m_valid = product(orig, 0, orig.size());
    return true;
}

bool DeviceLayout::build(std::string_view format, const std::vector<std::int64_t>& devShape,
                         const std::vector<std::int64_t>& origShape, DeviceLayout& out, std::string& why) {
    out = DeviceLayout();
    if (!isPaddedFormat(format)) {
        why = "no layout model for format " + std::string(format);
        return false;
    }
    if (origShape.empty()) {
        why = "no original shape";
        return false;
    }
    std::vector<U> dev, orig;
    for (auto d : devShape) {
        if (d <= 0 || d > (std::int64_t(1) << 40)) {
            why = "unknown or zero dims in the stored shape";
            return false;
        }
        dev.push_back(U(d));
    }
    for (auto d : origShape) {
        if (d <= 0 || d > (std::int64_t(1) << 40)) {
            why = "unknown or zero dims in the original shape";
            return false;
        }
        orig.push_back(U(d));
    }
    // Element counts must not wrap (the dims come from a file).
    for (const auto* v : {&dev, &orig}) {
        U n = 1;
        for (U d : *v) {
            if (n > (U(1) << 56) / d) {
                why = "shape holds too many elements";
                return false;
            }
            n *= d;
        }
    }
    const std::string f(format);
    auto fail = [&](const char* text) {
        why = f + " " + text;
        return false;
    };
    if (f == "FRACTAL_NZ") {
        // (..., M, N) -> (..., N1, M1, M0, N0); a 1-D (N) is one row. The batch axes may be stored
        // flattened (msaccucmp multiplies them out too).
        if (dev.size() < 4) return fail("needs at least 4 stored dims");
        const std::size_t r = orig.size(), nd = dev.size();
        const U batch = r > 2 ? product(orig, 0, r - 2) : 1, M = r >= 2 ? orig[r - 2] : 1, N = orig[r - 1];
        const std::vector<U> bmn{batch, M, N};
        if (product(dev, 0, nd - 4) == batch &&
            out.assemble(bmn, "BMN",
                         {{batch, 'B', 1},
                          {dev[nd - 4], 'N', dev[nd - 1]},
                          {dev[nd - 3], 'M', dev[nd - 2]},
                          {dev[nd - 2], 'M', 1},
                          {dev[nd - 1], 'N', 1}},
                         -1, "ND"))
            return true;
        return fail("stored shape does not tile the original shape (..., M, N)");
    }
    if (f == "NC1HWC0" || f == "NC1HWC0_C04") {
        if (dev.size() != 5) return fail("needs 5 stored dims (N, C1, H, W, C0)");
        if (orig.size() > 4) return fail("needs an original shape of at most 4 dims");
        const std::vector<AxisSpec> axes{
            {dev[0], 'N', 1}, {dev[1], 'C', dev[4]}, {dev[2], 'H', 1}, {dev[3], 'W', 1}, {dev[4], 'C', 1}};
        if (out.assemble(padChannelFirst(orig, 4), "NCHW", axes, -1, "NCHW")) return true;
        if (orig.size() == 4 && out.assemble(orig, "NHWC", axes, -1, "NHWC")) return true;
        return fail("stored shape fits neither an NCHW nor an NHWC original shape");
    }
    if (f == "FRACTAL_Z") {
        // Weights: (C1*H*W, N1, N0, C0), the first axis C1-major.
        if (dev.size() != 4) return fail("needs 4 stored dims (C1*H*W, N1, N0, C0)");
        if (orig.size() > 4) return fail("needs an original shape of at most 4 dims");
        auto tryReading = [&](const std::vector<U>& o, std::string_view letters) {
            const U h = o[letters.find('H')], w = o[letters.find('W')];
            if (dev[0] % (h * w)) return false;
            return out.assemble(o, letters,
                                {{dev[0] / (h * w), 'C', dev[3]},
                                 {h, 'H', 1},
                                 {w, 'W', 1},
                                 {dev[1], 'N', dev[2]},
                                 {dev[2], 'N', 1},
                                 {dev[3], 'C', 1}},
                                -1, letters);
        };
        if (tryReading(padChannelFirst(orig, 4), "NCHW")) return true;
        if (orig.size() == 4 && tryReading(orig, "HWCN")) return true;
        return fail("stored shape fits neither an NCHW nor an HWCN original shape (grouped weights are not modelled)");
    }
    if (f == "NDC1HWC0") {
        if (dev.size() != 6) return fail("needs 6 stored dims (N, D, C1, H, W, C0)");
        if (orig.size() > 5) return fail("needs an original shape of at most 5 dims");
        const std::vector<AxisSpec> axes{{dev[0], 'N', 1}, {dev[1], 'D', 1}, {dev[2], 'C', dev[5]},
                                         {dev[3], 'H', 1}, {dev[4], 'W', 1}, {dev[5], 'C', 1}};
        if (out.assemble(padChannelFirst(orig, 5), "NCDHW", axes, -1, "NCDHW")) return true;
        if (orig.size() == 5 && out.assemble(orig, "NDHWC", axes, -1, "NDHWC")) return true;
        return fail("stored shape fits neither an NCDHW nor an NDHWC original shape");
    }
    if (f == "FRACTAL_Z_3D") {
        // 3-D weights: (D*C1*H*W, N1, N0, C0), the first axis D-major then C1.
        if (dev.size() != 4) return fail("needs 4 stored dims (D*C1*H*W, N1, N0, C0)");
        if (orig.size() > 5) return fail("needs an original shape of at most 5 dims");
        auto tryReading = [&](const std::vector<U>& o, std::string_view letters) {
            const U d = o[letters.find('D')], h = o[letters.find('H')], w = o[letters.find('W')];
            if (dev[0] % (d * h * w)) return false;
            return out.assemble(o, letters,
                                {{d, 'D', 1},
                                 {dev[0] / (d * h * w), 'C', dev[3]},
                                 {h, 'H', 1},
                                 {w, 'W', 1},
                                 {dev[1], 'N', dev[2]},
                                 {dev[2], 'N', 1},
                                 {dev[3], 'C', 1}},
                                -1, letters);
        };
        if (tryReading(padChannelFirst(orig, 5), "NCDHW")) return true;
        if (orig.size() == 5 && tryReading(orig, "DHWCN")) return true;
        return fail("stored shape fits neither an NCDHW nor a DHWCN original shape");
    }
    // C1HWNCoC0: (C1, H, W, N, Co, C0) with Co == C0; channel c sits at co == c0 == c % C0.
    if (dev.size() != 6 || dev[4] != dev[5]) return fail("needs 6 stored dims (C1, H, W, N, Co, C0) with Co == C0");
    if (orig.size() > 4) return fail("needs an original shape of at most 4 dims");
    const std::vector<AxisSpec> axes{{dev[0], 'C', dev[5]}, {dev[1], 'H', 1}, {dev[2], 'W', 1},
                                     {dev[3], 'N', 1},      {dev[4], 0, 0},   {dev[5], 'C', 1}};
    if (out.assemble(padChannelFirst(orig, 4), "NCHW", axes, 4, "NCHW")) return true;
    if (orig.size() == 4 && out.assemble(orig, "HWCN", axes, 4, "HWCN")) return true;
    return fail("stored shape fits neither an NCHW nor an HWCN original shape");
}

}  // namespace dl

#include "core/index/tensor_values.h"

#include "core/formats/cann/device_layout.h"
#include "core/index/tensor_location.h"
#include "core/io/npy_file.h"

namespace dl {
namespace {

std::uint64_t countOf(const std::vector<std::int64_t>& shape) {
    std::uint64_t n = 1;
    for (auto d : shape) n *= std::uint64_t(std::max<std::int64_t>(0, d));
    return n;
}

std::string shapeText(const std::vector<std::int64_t>& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
    return out + "]";
}

bool storedInLayout(const DumpIndex& index, const TensorRecord& t) {
    return (t.flags & DeviceFormat) && DeviceLayout::isPaddedFormat(index.strings.view(t.format));
}

}  // namespace

std::vector<std::int64_t> logicalShape(const DumpIndex& index, const TensorRecord& t) {
    return storedInLayout(index, t) ? index.originalShape(t) : index.shape(t);
}

bool loadTensorValues(const DumpIndex& index, const TensorRecord& t, TensorValues& out, std::string& error) {
    const std::string label = index.tensorLabel(t);
    out = TensorValues();
    if (!(t.flags & HasData) || index.side(t).file == 0) {
        error = label + " was not dumped (statistics only)";
        return false;
    }
    if (!tensorDataReachable(index, t, error)) return false;
    const std::string path = tensorDataPath(index, t);
    const std::vector<std::int64_t> stored = index.shape(t);
    const bool npy = path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    // Resolve the layout before reading: a tensor whose padding cannot be told apart is refused,
    // not read as if its stored shape were the logical one.
    DeviceLayout layout;
    const bool inLayout = !npy && storedInLayout(index, t);
    if (inLayout) {
        std::string why;
        if (!DeviceLayout::build(index.strings.view(t.format), stored, index.originalShape(t), layout, why)) {
            error = label + " (" + path + "): cannot undo its " + std::string(index.strings.view(t.format)) +
                " layout: " + why;
            return false;
        }
    }
    std::vector<float> raw;
    NpyHeader header;
    const bool ok = npy ? loadNpyAsFloat(path, raw, header, error, t.dtype)
                        : loadTensorAsFloat(path, index.side(t).dataOffset, countOf(stored), t.dtype,
                                            (t.flags & BigEndian) != 0, raw, error);
    if (!ok) {
        error = label + ": " + error;
        return false;
    }
    out.shape = npy && !header.shape.empty() ? header.shape : stored;
    if (raw.size() != countOf(out.shape)) {
        error = label + " (" + path + "): element count does not match its shape";
        return false;
    }
    if (!inLayout) {
        out.data = std::move(raw);
        return true;
    }
    out.shape = index.originalShape(t);
    out.data.resize(layout.validElements());
    layout.toNd(raw.data(), out.data.data());
    out.conversion = std::string(index.strings.view(t.format)) + " " + shapeText(stored) + " -> " +
        std::string(layout.originalLayout()) + " " + shapeText(out.shape);
    return true;
}

}  // namespace dl

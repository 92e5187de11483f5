#pragma once
// A MindSpore 2.3+ kernel-by-kernel dump whose op names are single '_'-joined scopes of ~200
// characters with no break point (as LLM layers produce): five fp16 ops on one rank, the third
// with an Inf output, so its long name is what the banner, the tensor header and the chain show.
#include <QDir>
#include <QString>
#include <string>
#include <vector>

#include "core/io/npy_writer.h"

namespace dltest {

// The op name of op k: "Gradients_Default_network__backbone_model_layers_34_feed_forward_gradMul_…_Mul-op44k".
inline std::string longOpName(int k, std::size_t length = 206) {
    std::string s = "Gradients_Default_network__backbone_model_layers_34_feed_forward_gradMul";
    const std::string tail = "_Mul-op441" + std::to_string(k);
    while (s.size() + tail.size() < length) s += "_attention_wq_gradMatMul";
    s.resize(length - tail.size());
    if (s.back() == '_') s.back() = 'x';
    return s + tail;
}

// Writes the dump under `root` (rank_0/net/0/0); false with `error` set.
inline bool writeLongNameDump(const QString& root, std::string& error) {
    const QString dir = root + QStringLiteral("/rank_0/net/0/0");
    if (!QDir().mkpath(dir)) {
        error = "cannot create " + dir.toStdString();
        return false;
    }
    const long long t0 = 1796287008400000;
    for (int k = 0; k < 5; ++k) {
        const std::string name = longOpName(k, k == 1 ? 182 : 206);
        for (const char* io : {"input", "output"}) {
            std::vector<float> v(64);
            for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i) * (k + 1) - 20;
            if (k == 2 && std::string(io) == "output") v[7] = 1e9f;   // rounds to +Inf in fp16
            std::string bytes;
            if (!dl::encodeFloats(v, dl::DType::Float16, bytes, error)) return false;
            const std::string file = dir.toStdString() + "/Mul." + name + ".0.0." + std::to_string(t0 + 100 * k + (io[0] == 'o')) +
                                     "." + io + ".0.DefaultFormat.Float16.npy";
            if (!dl::writeNpyFile(file, dl::DType::Float16, {8, 8}, bytes, error)) return false;
        }
    }
    return true;
}

}  // namespace dltest

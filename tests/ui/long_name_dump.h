#pragma once
// A MindSpore 2.3+ kernel-by-kernel dump whose names are single '_'-joined scopes without a break
// point (as LLM layers produce), their output files 206 and 182 characters long (the issue's
// cases; 255 is the file system's limit): five fp16 ops on one rank, the third with an Inf output,
// so its long name is what the banner, the tensor header and the chain show.
#include <QDir>
#include <QString>
#include <string>
#include <vector>

#include "core/io/npy_writer.h"

namespace dltest {

// The op name of op k: "Gradients_Default_network__backbone_model_layers_34_feed_forward_gradMul_…_Mul-op441k".
// 146 characters make a 206-character output file name ("Mul." + name + 56 characters).
inline std::string longOpName(int k, std::size_t length = 146) {
    std::string s = "Gradients_Default_network__backbone_model_layers_34_feed_forward_gradMul";
    const std::string tail = "_Mul-op441" + std::to_string(k);
    while (s.size() + tail.size() < length) s += "_attention_wq_gradMatMul";
    s.resize(length - tail.size());
    if (s.back() == '_') s.back() = 'x';
    return s + tail;
}

// Writes the dump under `root` (rank_0/net/0/0); false with `error` set.
inline std::string longFileName(const std::string& opName, long long stamp, const char* io) {
    return "Mul." + opName + ".0.0." + std::to_string(stamp) + "." + io + ".0.DefaultFormat.Float16.npy";
}

inline bool writeLongNameDump(const QString& root, std::string& error) {
    const QString dir = root + QStringLiteral("/rank_0/net/0/0");
    if (!QDir().mkpath(dir)) {
        error = "cannot create " + dir.toStdString();
        return false;
    }
    const long long t0 = 1796287008400000;
    for (int k = 0; k < 5; ++k) {
        const std::string name = longOpName(k, k == 1 ? 122 : 146);
        for (const char* io : {"input", "output"}) {
            std::vector<float> v(64);
            for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i) * (k + 1) - 20;
            if (k == 2 && std::string(io) == "output") v[7] = 1e9f;  // rounds to +Inf in fp16
            std::string bytes;
            if (!dl::encodeFloats(v, dl::DType::Float16, bytes, error)) return false;
            const std::string file = dir.toStdString() + "/" + longFileName(name, t0 + 100 * k + (io[0] == 'o'), io);
            if (!dl::writeNpyFile(file, dl::DType::Float16, {8, 8}, bytes, error)) return false;
        }
    }
    return true;
}

}  // namespace dltest

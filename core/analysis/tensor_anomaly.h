#pragma once
// Per-tensor anomaly classification from whatever figures the dump gave (full statistics,
// statistic.csv rows, histograms), plus decoding of Opdebug overflow records.
#include <cstdint>
#include <limits>
#include <string>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"

namespace dl {

struct TensorAnomaly {
    AnomalyKind kind = AnomalyKind::None;
    std::uint64_t count = 0;  // offending elements when known (Inf+NaN, or values at +/-65504)
    double maxAbs = std::numeric_limits<double>::quiet_NaN();  // finite max |x| when known
    double fp16MaxShare = -1;  // maxAbs / 65504 (1 at the max, not the room left); -1 when maxAbs is unknown
    bool weak = false;         // a single value at exactly 65504: may be a legitimate value
    bool bad() const { return kind != AnomalyKind::None; }
};

// fp16 as stored, or fp16 in the framework and widened on disk.
bool isFp16Like(const TensorRecord& t);

// Classifies one tensor. Inf beats NaN beats saturation. Saturation means a pile-up at exactly
// +/-65504 (the value Atlas training parts clamp fp16 overflow to); a tensor whose finite max
// merely approaches the limit (47580, 60000) is not saturated, it only has little headroom.
TensorAnomaly classifyTensor(const DumpIndex& index, const TensorRecord& t);

// Which overflow an Opdebug record reports, from the AI Core status bits and the atomic-add
// statuses ([CANN-doc]); "" when every status is zero.
std::string describeOpdebug(const OverflowRecord& r);
bool opdebugReportsOverflow(const OverflowRecord& r);

// The tensor's name within its op: the writer's own where it has one (msprobe: "input.2",
// "input.attn_mask", "parameters.weight"), else "input.0", "output.1" (DumpIndex::tensorLabel).
std::string tensorLabel(const DumpIndex& index, const TensorRecord& t);
// "input.{slot}" / "output.{slot}" only: wrong for msprobe tensors, use the form above.
std::string tensorLabel(const TensorRecord& t);

}  // namespace dl

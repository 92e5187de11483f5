#pragma once
// Statistics of every input and output of one raw CANN dump file (docs/formats.md 2): the job of
// the CANN raw reader. Device layouts are walked without their padding where the original shape allows.
#include <cstdint>
#include <vector>

#include "core/index/stats_job.h"

namespace dl {

// Fills r.parts (inputs, then outputs); r.ok false only when the header itself is unusable.
void runCannRawJob(const StatsJob& job, std::vector<std::uint8_t>& scratch, StatsJobResult& r);

}  // namespace dl

#pragma once
// What the analysis of a first overflow reads of the iterations before it. Cut where no tensor
// before is bad (classifyTensor: Inf, NaN, a value at 65504) and no Opdebug record is held
// (holdsAnomaly), a clean iteration holds no candidate for the origin or the chain; the analysis
// still learns from it what it learns over the whole run: Send/Receive pairing votes, collective
// splits and the clock offsets fitted over every pair (comm ops), the stage map (which ranks are
// in the run, which hold the loss or the head) and whether every op is timed (the chain is then
// ordered by clock). The ops cleanIterationInputs() chooses carry all of that: an index whose clean
// iterations are cut down to them gives the same first overflow and chain as the whole index, in
// the same op order (tests/core/analysis/test_first_overflow_inputs.cpp checks it on every kind of
// test dump). The cut must come no later than holdsAnomaly says, not at the analysis' own first
// bad iteration: a single 65504 the analysis calls carried can still use up its budget of
// saturation replays (overflow_classify.cpp), which the iterations before would then change.
// A watch (core/watch) keeps only these of the iteration folders it wrote out of memory, so that
// an overflow late in a long run is analysed without reading the run back.
#include <cstdint>
#include <vector>

#include "core/model/dump_index.h"

namespace dl {

// The ops of `index` the analysis of a later first overflow reads when their iterations are
// clean: every Send, Receive and collective (each of them counts); per rank its first op and its
// first loss or head op, and the first op without a time (only that one exists counts: any op of
// the kind would do). Any superset gives the same answer, so the ops of a run may be chosen folder
// by folder, and the folders without comm ops need only one of them for each of the rest.
struct CleanIterationInputs {
    std::vector<std::uint32_t> ops;  // ascending
    bool comm = false;               // holds a Send, Receive or collective
    bool lossOrHead = false;         // holds a loss or head op
    bool untimed = false;            // holds an op without a time
};
CleanIterationInputs cleanIterationInputs(const DumpIndex& index);

// Whether `index` holds a bad tensor (classifyTensor) or an Opdebug record: where the cut must stop.
bool holdsAnomaly(const DumpIndex& index);

}  // namespace dl

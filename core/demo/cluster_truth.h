#pragma once
// The ground truth of a simulated cluster run, read from its event log only (never from an
// analyzer): the origin, each rank's first anomalous op, and the chain of steps from the origin
// to every rank's first anomaly.
//
// Chain rule. Each anomalous op's cause is the op that produced the earliest bad value it read
// (a Receive's is its Send; a collective member's, whichever member fed the earliest bad
// contribution). Steps are: the origin, every rank's first anomaly, and, where a path crosses an
// iteration on a rank (a weight written bad by the optimizer), that optimizer op and the first
// anomaly of the later iteration on that rank. A step's caused_by is the first step met walking
// back along causes. Members of one collective are one step; tensor-parallel peers (same stage)
// reached at the same op by the same kind of hop from the same op are one step.
#include <string>

#include "core/demo/cluster_scenario.h"
#include "core/demo/cluster_trace.h"

namespace dl::demo {

// Fills everything in `truth` derived from the trace (not scenario, options or filesWritten).
// False when nothing overflowed or the log is inconsistent (a step caused by a later one).
bool deriveClusterTruth(const ClusterTrace& trace, ClusterScenarioTruth& truth, std::string& error);

}  // namespace dl::demo

#pragma once
// Writes a simulated cluster run (core/demo/cluster_*) and indexes it without a cache: the step
// every chain test on generated cluster dumps starts from.
#include <string>

#include "core/demo/cluster_scenario.h"
#include "core/index/dump_indexer.h"

namespace dltest {

inline bool writeAndIndexCluster(const std::string& root, const dl::demo::ClusterSpec& spec,
                                 const dl::demo::ClusterScenarioOptions& o, dl::demo::ClusterScenarioTruth& truth,
                                 dl::DumpIndex& index, std::string& error) {
    if (!dl::demo::writeClusterRun(root, spec, o, truth, error)) return false;
    dl::IndexOptions io;
    io.useCache = false;
    dl::IndexReport rep;
    return dl::indexDump(root, io, index, rep, error);
}

}  // namespace dltest

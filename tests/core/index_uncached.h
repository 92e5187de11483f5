#pragma once
// Indexes a test dump without any cache (nothing written outside the test's own folders),
// failing the calling test with the indexer's error.
#include <gtest/gtest.h>

#include <string>

#include "core/index/dump_indexer.h"

namespace dltest {

inline dl::DumpIndex indexUncached(const std::string& root, unsigned threads = 0) {
    dl::IndexOptions o;
    o.useCache = false;
    o.threads = threads;
    dl::DumpIndex idx;
    dl::IndexReport report;
    std::string error;
    EXPECT_TRUE(dl::indexDump(root, o, idx, report, error)) << root << ": " << error;
    return idx;
}

}  // namespace dltest

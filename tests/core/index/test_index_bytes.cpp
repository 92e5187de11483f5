// The same dump gives the same .dlx bytes, run after run: the index file is the raw records, so a
// byte of compiler padding left uninitialised (TensorStats, TensorSide) made every run's file
// differ (msprobe samples with wide statistics, merged over ranks).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/index/dump_indexer.h"
#include "core/index/index_serializer.h"
#include "tests/core/cli_run.h"
#include "tests/core/index_uncached.h"
#include "tests/core/temp_dir.h"

using namespace dl;

namespace {

// Samples with wide statistics (msprobe, seven ranks merged) and with tensor files (sides).
const std::vector<std::string> kDumps = {DUMPLENS_SAMPLES_DIR "/msprobe",
                                         DUMPLENS_SAMPLES_DIR "/mindspore-tests/gpu_dumps/sync_trans_false"};

std::vector<std::uint8_t> indexBytes(const std::string& dump, unsigned threads) {
    return serializeIndex(dltest::indexUncached(dump, threads), {}, 3);
}

}  // namespace

TEST(IndexBytes, CliWritesTheSameDlxEveryRun) {
    dltest::TempDir dir("dumplens_index_bytes_");
    for (const std::string& dump : kDumps) {
        std::vector<std::vector<std::uint8_t>> files;
        for (const char* threads : {"1", "2", "3"}) {
            const auto out = dir.path / (std::string("x") + threads + ".dlx");
            const auto r =
                dltest::runCli("index '" + dump + "' --no-cache --threads " + threads + " -o '" + out.string() + "'");
            ASSERT_EQ(r.code, 0) << r.output;
            files.push_back(dltest::readBytes(out));
            ASSERT_GT(files.back().size(), 40u) << out;
        }
        EXPECT_TRUE(files[0] == files[1]) << dump << ": two runs wrote different bytes";
        EXPECT_TRUE(files[0] == files[2]) << dump << ": two runs wrote different bytes";
    }
}

// In one process the second run gets the heap the first one freed, so an uninitialised byte shows.
TEST(IndexBytes, RepeatedIndexingInOneProcessGivesTheSameBytes) {
    for (const std::string& dump : kDumps) {
        const auto first = indexBytes(dump, 1);
        for (unsigned threads : {1u, 2u, 4u})
            EXPECT_TRUE(indexBytes(dump, threads) == first) << dump << " with " << threads << " threads";
    }
}

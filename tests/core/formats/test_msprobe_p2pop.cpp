// msprobe's batch_isend_irecv entries hold their tensors inside P2POp objects
// ({"class_type": "torch.distributed.P2POp", "tensor": {...}, "op": "isend", "peer": 1, "tag": 0},
// msprobe's _analyze_p2pop): a batch that only sends is a Send to its peer, one that only
// receives a Receive from it, and the chain crosses ranks through the pair.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "core/analysis/analysis_json.h"
#include "core/analysis/comm_matcher.h"
#include "core/analysis/overflow_analyzer.h"
#include "core/index/dump_indexer.h"
#include "tests/core/index_uncached.h"
#include "tests/core/temp_dir.h"

namespace fs = std::filesystem;
using namespace dl;
using dltest::TempDir;
using dltest::writeFile;

namespace {

std::string tensor(const std::string& max) {
    return R"({"type": "torch.Tensor", "dtype": "torch.float16", "shape": [8], "Max": )" + max +
        R"(, "Min": 0.0, "Mean": 1.0, "Norm": 3.0})";
}
std::string p2p(const char* op, int peer, const std::string& max) {
    return R"({"class_type": "torch.distributed.P2POp", "tensor": )" + tensor(max) + R"(, "op": ")" + op +
        R"(", "peer": )" + std::to_string(peer) + R"(, "tag": 0, "group_id": "3c8a1f20"})";
}
std::string batch(const std::string& ops) {
    return R"("Distributed.batch_isend_irecv.0.forward": {"input_args": [[)" + ops +
        R"(]], "input_kwargs": {}, "output": [[)" + ops + "]]}";
}
std::string dumpJson(const std::string& entries) {
    return R"({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {)" +
        entries + "}}";
}

// Rank 0 overflows in linear and sends the activation to rank 1 (stage 1), which receives it.
void writeTwoStages(const fs::path& root, bool mixed = false) {
    const std::string send =
        mixed ? p2p("isend", 1, "Infinity") + ", " + p2p("irecv", 1, "2.0") : p2p("isend", 1, "Infinity");
    writeFile(root / "step0" / "rank0" / "dump.json",
              dumpJson(R"("Functional.linear.0.forward": {"input_args": [)" + tensor("900.0") + R"(], "output": [)" +
                       tensor("Infinity") + "]}, " + batch(send)));
    writeFile(root / "step0" / "rank1" / "dump.json",
              dumpJson(batch(p2p("irecv", 0, "Infinity")) + R"(, "Functional.relu.0.forward": {"input_args": [)" +
                       tensor("Infinity") + R"(], "output": [)" + tensor("Infinity") + "]}"));
}

DumpIndex indexOf(const fs::path& root) { return dltest::indexUncached(root.string()); }

const CommOp* commOn(const DumpIndex& idx, const std::vector<CommOp>& comm, std::uint32_t rank) {
    const auto it = std::find_if(comm.begin(), comm.end(), [&](const CommOp& c) { return idx.ops[c.op].rank == rank; });
    return it == comm.end() ? nullptr : &*it;
}

}  // namespace

TEST(MsprobeP2pOp, OneWayBatchesAreSendAndReceiveWithTheirPeer) {
    TempDir d;
    writeTwoStages(d.path);
    const DumpIndex idx = indexOf(d.path);
    const std::vector<CommOp> comm = findCommOps(idx);
    const CommOp* s = commOn(idx, comm, 0);
    const CommOp* r = commOn(idx, comm, 1);
    ASSERT_TRUE(s && r);
    EXPECT_EQ(s->kind, CommKind::Send);
    EXPECT_EQ(s->explicitPeer, 1);
    EXPECT_EQ(r->kind, CommKind::Receive);
    EXPECT_EQ(r->explicitPeer, 0);
    const CommMatch m = matchCommunication(idx, comm, StageMap{});
    ASSERT_EQ(m.pairs.size(), 1u);
    EXPECT_EQ(m.pairs[0].send, s->op);
    EXPECT_EQ(m.pairs[0].recv, r->op);
}

TEST(MsprobeP2pOp, TheChainCrossesRanksThroughThePair) {
    TempDir d;
    writeTwoStages(d.path);
    const DumpIndex idx = indexOf(d.path);
    const nlohmann::json j = toJson(idx, analyze(idx));
    ASSERT_EQ(j["first_overflow"]["rank"], 0) << j.dump(1);
    EXPECT_EQ(j["first_overflow"]["op_name"], "Functional.linear.0.forward");
    bool crossed = false;
    for (const auto& step : j["chain"])
        if (step["rank"] == 1 && step["via"] == "send_receive") {
            crossed = true;
            EXPECT_EQ(step["op_name"], "Distributed.batch_isend_irecv.0.forward");
            EXPECT_EQ(step["via_detail"]["from_rank"], 0) << step;
        }
    EXPECT_TRUE(crossed) << j["chain"].dump(1);
    // The pipeline stages follow from the pair: rank 0 sends forward to rank 1.
    EXPECT_EQ(j["stages"]["ranks"]["0"], 0);
    EXPECT_EQ(j["stages"]["ranks"]["1"], 1);
}

TEST(MsprobeP2pOp, ABatchThatSendsAndReceivesIsNoSingleSend) {
    TempDir d;
    writeTwoStages(d.path, /*mixed=*/true);
    const DumpIndex idx = indexOf(d.path);
    const std::vector<CommOp> comm = findCommOps(idx);
    EXPECT_EQ(commOn(idx, comm, 0), nullptr);
}

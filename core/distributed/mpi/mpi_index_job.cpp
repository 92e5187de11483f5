#include "core/distributed/mpi/mpi_index_job.h"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

#include "core/distributed/index_merge.h"
#include "core/distributed/shard_plan.h"
#include "core/index/index_file.h"
#include "core/index/index_serializer.h"
#include "core/index/index_summary.h"

namespace dl::mpi {
namespace {

enum Tag : int { kListing = 1, kAssign = 2, kShard = 3 };

void sendBytes(const std::string& bytes, int dest, int tag) {
    MPI_Send(bytes.data(), int(bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD);
}

std::string recvBytes(int source, int tag, int* from = nullptr) {
    MPI_Status st;
    MPI_Probe(source, tag, MPI_COMM_WORLD, &st);
    int n = 0;
    MPI_Get_count(&st, MPI_BYTE, &n);
    std::string s(std::size_t(n), '\0');
    MPI_Recv(s.data(), n, MPI_BYTE, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (from) *from = st.MPI_SOURCE;
    return s;
}

// Process 0 polls instead of blocking so that a dead peer costs a timeout, not a hang.
std::map<int, std::string> gather(int tag, const std::set<int>& from, double timeoutSeconds) {
    std::map<int, std::string> got;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
    while (got.size() < from.size() && std::chrono::steady_clock::now() < deadline) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st);
        if (!flag) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            continue;
        }
        int source = 0;
        std::string bytes = recvBytes(st.MPI_SOURCE, tag, &source);
        if (from.count(source)) got[source] = std::move(bytes);
    }
    return got;
}

// Failure injection for the test suite only: the named process dies after sending its listing.
void maybeDieForTest(int rank) {
    if (const char* k = std::getenv("DUMPLENS_TEST_MPI_KILL_RANK"); k && std::atoi(k) == rank) std::raise(SIGKILL);
}

std::string indexAssigned(const MpiIndexOptions& opt, const std::string& assignment) {
    std::vector<std::string> rels;
    for (const auto& s : decodeShardList(assignment)) rels.push_back(s.rel);
    DumpIndex idx;
    std::string error;
    indexShards(opt.root, rels, opt.threads, opt.useCache, idx, error);
    const auto bytes = serializeIndex(idx, {}, 3);
    return std::string(bytes.begin(), bytes.end());
}

int runRoot(const MpiIndexOptions& opt, int size) {
    std::vector<std::vector<ShardInfo>> visible{std::size_t(size)};
    visible[0] = listShards(opt.root);
    std::set<int> peers;
    for (int p = 1; p < size; ++p) peers.insert(p);
    auto listings = gather(kListing, peers, opt.timeoutSeconds);
    for (auto& [p, text] : listings) visible[std::size_t(p)] = decodeShardList(text);
    const auto plan = planShards(visible);
    std::map<int, std::vector<std::string>> assigned;
    for (int p = 1; p < size; ++p) {
        if (!listings.count(p)) continue;
        std::vector<ShardInfo> mine;
        for (const auto& rel : plan[std::size_t(p)]) mine.push_back({rel, 0, 0});
        assigned[p] = plan[std::size_t(p)];
        sendBytes(encodeShardList(mine), p, kAssign);
    }
    DumpIndex merged;
    std::string error;
    indexShards(opt.root, plan[0], opt.threads, opt.useCache, merged, error);
    std::set<int> working;
    for (const auto& [p, rels] : assigned) working.insert(p);
    auto shards = gather(kShard, working, opt.timeoutSeconds);
    std::vector<std::string> missing;
    for (int p : peers) {
        if (!listings.count(p)) {
            missing.push_back("process " + std::to_string(p) + " never reported which folders it can see");
            continue;
        }
        auto it = shards.find(p);
        DumpIndex part;
        FolderFingerprint fp;
        std::string err;
        const bool ok = it != shards.end() &&
            deserializeIndex(reinterpret_cast<const std::uint8_t*>(it->second.data()), it->second.size(), part, fp,
                             err);
        if (!ok) {
            for (const auto& rel : assigned[p])
                missing.push_back(rel + " (process " + std::to_string(p) +
                                  (it == shards.end() ? " did not answer)" : " sent a bad shard: " + err + ")"));
            continue;
        }
        merged.merge(part);
    }
    merged.finalize();
    merged.root = opt.root;
    for (const auto& m : missing)
        merged.warnings.push_back({m, "missing from this index (distributed indexing)", WarningSeverity::Unreadable});
    // The rule of a plain `index`: nothing readable writes no index and is not success.
    if (holdsNothingReadable(merged)) {
        std::fprintf(stderr, "dumplens-cli: No data: nothing readable in %s; no index written\n", opt.root.c_str());
        for (std::size_t i = 0; i < merged.warnings.size() && i < 10; ++i)
            std::fprintf(stderr, "  %s: %s\n", merged.warnings[i].path.c_str(), merged.warnings[i].reason.c_str());
        return 2;
    }
    if (!saveIndexFile(opt.output, merged, error)) {
        std::fprintf(stderr, "dumplens-cli: %s\n", error.c_str());
        return 2;
    }
    std::printf("Indexed %zu ranks, %zu ops, %zu tensors with %d processes into %s\n", merged.ranks.size(),
                merged.ops.size(), merged.tensors.size(), size, opt.output.c_str());
    for (const auto& m : missing) std::printf("Missing: %s\n", m.c_str());
    std::fflush(stdout);
    return missing.empty() ? 0 : 3;
}

}  // namespace

int runMpiIndexJob(const MpiIndexOptions& options) {
    MPI_Init(nullptr, nullptr);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int code = 0;
    if (rank == 0) {
        code = runRoot(options, size);
        // A peer that died would make MPI_Finalize wait for it forever: end the job instead.
        if (code == 3) {
            std::fflush(nullptr);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    } else {
        sendBytes(encodeShardList(listShards(options.root)), 0, kListing);
        maybeDieForTest(rank);
        const std::string assignment = recvBytes(0, kAssign);
        sendBytes(indexAssigned(options, assignment), 0, kShard);
    }
    MPI_Finalize();
    return code;
}

}  // namespace dl::mpi

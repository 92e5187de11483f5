#pragma once
// `dumplens-cli index DIR --mpi -o run.dlx`: every process lists the rank folders it can see,
// process 0 shares them out by bytes, each indexes its share, and the shards travel to process 0
// over MPI (no shared file system needed), which merges them and writes one index file.
// A process that fails or never answers does not sink the job: its folders are reported missing.
#include <string>

namespace dl::mpi {

struct MpiIndexOptions {
    std::string root;
    std::string output;  // written by process 0 only
    unsigned threads = 0;
    bool useCache = true;
    double timeoutSeconds = 3600;  // how long process 0 waits for the others
};

// Calls MPI_Init/MPI_Finalize itself. Returns the process's exit code; process 0 prints a summary.
int runMpiIndexJob(const MpiIndexOptions& options);

}  // namespace dl::mpi

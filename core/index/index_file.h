#pragma once
// Portable index files (.dlx): a whole DumpIndex in the cache's binary form, self-contained for
// everything that needs no tensor data. Written by `dumplens-cli index -o`, `merge` and the MPI job.
#include <string>

#include "core/index/dump_indexer.h"
#include "core/model/dump_index.h"

namespace dl {

bool isIndexFile(const std::string& path);  // starts with the index magic
bool loadIndexFile(const std::string& path, DumpIndex& out, IndexReport& report, std::string& error);
bool saveIndexFile(const std::string& path, const DumpIndex& index, std::string& error);
std::string hostName();  // this machine's host name ("" when unknown)

}  // namespace dl

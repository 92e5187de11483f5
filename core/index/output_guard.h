#pragma once
// Never write into a user's dump: a command's output (index -o, report -o, compare -o, merge -o) is
// checked against every dump it reads before anything is written.
#include <filesystem>
#include <string>
#include <vector>

namespace dl {

// The folder the user's dump occupies when `dir` was given: `dir` itself (a folder or a .dlx file),
// or, when `dir` lies within a rank or step folder (rank_N, device_N, rankN, stepN up to four levels
// up: rank_N/{net}/{graph}/{iteration}), the folder holding that rank or step folder. Symlinks and
// `..` resolved.
std::string dumpExtent(const std::string& dir);

// "" when `output` lies outside every dump in `dumps`; else the reason, naming the output (as
// resolved) and the dump. Symlinks and `..` are resolved in both, so a link that points into the
// dump is caught.
std::string outputInsideDump(const std::string& output, const std::vector<std::string>& dumps);

// True when `inner` is `outer` or lies below it, component by component (both already absolute
// and normalised: no symlink or `..` is resolved here).
bool isInsideOrEqual(const std::filesystem::path& inner, const std::filesystem::path& outer);

struct DumpIndex;
// The dumps an index was made from: its root and every rank's data root (a merged or MPI index
// spans several), each once. An index read from a .dlx names them although the .dlx lies elsewhere.
std::vector<std::string> dumpRootsOf(const DumpIndex& index);

}  // namespace dl

#pragma once
// Where a file sits in a dump tree: rank, net, graph and iteration, read from its folder names
// in every layout MindSpore and CANN write (docs/formats.md 1.2):
//   m_rank{r}/{net}/{graph}/{iteration}/            MindSpore 1.3+
//   {net}/m_device{id}/m_iteration{n}/               MindSpore <= 1.2 sync
//   {step}/{time}/{device}/{model}/{model_id}/{n}/ CANN-created (2.3-2.5 ACL/GE dump)
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dl {

struct DumpLocation {
    std::optional<std::uint32_t> rank;
    std::string net;
    std::uint32_t graph = 0;
    std::optional<std::uint32_t> iteration;
};

std::vector<std::string_view> splitPath(std::string_view path);
// The parts are views into the argument: a temporary string would leave them dangling.
std::vector<std::string_view> splitPath(std::string&&) = delete;
// `dirs` are the folder names from the filesystem root down to the file's folder.
DumpLocation locateDumpFolder(const std::vector<std::string_view>& dirs);
// "rank_3" -> 3, "device_1" -> 1, msprobe "rank3" -> 3 and "rank" (not distributed) -> 0; nullopt otherwise.
std::optional<std::uint32_t> rankFromFolderName(std::string_view name);
// msprobe "step3" / L2 "step_3" -> 3; nullopt otherwise.
std::optional<std::uint32_t> stepFromFolderName(std::string_view name);
std::optional<std::uint32_t> parseUint(std::string_view s);

}  // namespace dl

#pragma once
// dumplens-cli's manual page, Markdown reference (docs/cli.md) and bash completion, written from
// its CLI11 definition: the same commands, options, choices and footer lists --help prints, so a
// new command or option reaches all three without anyone listing it. The build writes them with
// the hidden `dumplens-cli --generate man|markdown|bash-completion` (app/CMakeLists.txt).
#include <CLI/CLI.hpp>

#include <string>

namespace dlcli {

std::string manPage(const CLI::App& app, const std::string& version);
std::string markdownReference(const CLI::App& app);
std::string bashCompletion(const CLI::App& app);

// Adds the hidden --generate option: prints one of the three and exits 0 before any command runs.
void addGenerateOption(CLI::App& app, const std::string& version);

}  // namespace dlcli

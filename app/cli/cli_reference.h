#pragma once
// dumplens-cli's manual page, Markdown reference (docs/cli.md) and bash completion, written from
// its CLI11 definition: the same commands, options, choices and footer lists --help prints, so a
// new command or option reaches all three without anyone listing it. The build writes them with
// `dumplens-cli --generate man|markdown|bash-completion` (cmake/Manuals.cmake).
#include <CLI/CLI.hpp>

#include <string>

namespace dlcli {

std::string manPage(const CLI::App& app, const std::string& version);
std::string markdownReference(const CLI::App& app);
std::string bashCompletion(const CLI::App& app);

// `dumplens-cli --generate man|markdown|bash-completion`, used by the build and not in --help
// (main.cpp reads it before parsing): prints one of the three; 0, or 2 for another word.
int writeReference(const CLI::App& app, const std::string& version, const std::string& what);

}  // namespace dlcli

#pragma once
// Runs dumplens-cli as a user would, under `timeout`, so a hang fails the test instead of
// blocking it. One helper for every test that checks the CLI's exit code and output.
#include <sys/wait.h>

#include <cstdio>
#include <string>

// tests/CMakeLists.txt gives DUMPLENS_CLI_PATH (and the build order) to the tests that include this
// header, as read when cmake last configured.
#ifndef DUMPLENS_CLI_PATH
#error "DUMPLENS_CLI_PATH is not defined: re-run cmake so it sees that this test includes cli_run.h"
#endif

namespace dltest {

struct CliRun {
    int code = -1;  // exit code; 124 when `timeout` had to stop it, 128 + N for signal N
    std::string output;
};

// `stderrTo`: "2>&1" to read both streams, "2>/dev/null" for stdout alone.
inline CliRun runCli(const std::string& args, int timeoutSeconds = 30, const char* stderrTo = "2>&1") {
    const std::string cmd = "timeout " + std::to_string(timeoutSeconds) + " " + std::string(DUMPLENS_CLI_PATH) + " " +
        args + " " + stderrTo;
    CliRun r;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) r.output.append(buf, n);
    const int status = ::pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

}  // namespace dltest

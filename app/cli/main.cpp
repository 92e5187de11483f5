// dumplens-cli: headless entry point. Parses arguments and calls core; no logic of its own.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "app/cli/cli_commands.h"
#include "app/cli/terminal_safe_stream.h"

int main(int argc, char** argv) {
    // Kept to the end of main: the streams are flushed through them before they are restored.
    dlcli::TerminalSafeBuf safeOut(std::cout), safeErr(std::cerr);
    CLI::App app{"DumpLens: find the first fp16 overflow in MindSpore / CANN / msprobe dumps"};
    app.require_subcommand(1);
    app.footer(dlcli::kExitStatusHelp);
    app.set_version_flag("--version", std::string("dumplens-cli ") + DUMPLENS_VERSION);
    dlcli::Commands cmds;
    cmds.registerAll(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version are 0; every other parse error is a usage error: 2, as the commands'.
        return app.exit(e) == 0 ? dlcli::kExitOk : dlcli::kExitFailed;
    }
    return cmds.exitCode();
}

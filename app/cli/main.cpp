// dumplens-cli: headless entry point. Parses arguments and calls core; no logic of its own.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "app/cli/cli_commands.h"
#include "app/cli/cli_reference.h"
#include "app/cli/terminal_safe_stream.h"

namespace {

// The first word that is neither an option of `app` nor an option's value: the command. CLI11
// would take an unknown one for a stray argument, and `dumplens-cli bogus --help` would print the
// main help and exit 0; an unknown command is a usage error instead (exit 2, named).
bool refuseUnknownCommand(const CLI::App& app, int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.starts_with("-")) {
            const CLI::Option* o = app.get_option_no_throw(arg.substr(0, arg.find('=')));
            if (o && o->get_items_expected_max() > 0 && arg.find('=') == std::string::npos) ++i;  // its value
            continue;
        }
        std::string names;
        for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); })) {
            if (sub->check_name(arg)) return false;
            names += (names.empty() ? "" : ", ") + sub->get_name();
        }
        std::cerr << "dumplens-cli: unknown command '" << arg << "'; the commands are " << names
                  << " (dumplens-cli --help)\n";
        return true;
    }
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    // Kept to the end of main: the streams are flushed through them before they are restored.
    dlcli::TerminalSafeBuf safeOut(std::cout), safeErr(std::cerr);
    const std::string version = DUMPLENS_VERSION;
    CLI::App app{"DumpLens: find the first fp16 overflow in MindSpore / CANN / msprobe dumps"};
    app.require_subcommand(1);
    app.footer(dlcli::helpFooter());
    app.set_version_flag("--version", "dumplens-cli " + version);
    dlcli::Commands cmds;
    cmds.registerAll(app);
    // The build writes the man page, docs/cli.md and the completion from this definition (hidden).
    if (argc == 3 && std::string(argv[1]) == "--generate") return dlcli::writeReference(app, version, argv[2]);
    if (refuseUnknownCommand(app, argc, argv)) return dlcli::kExitFailed;
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version are 0; every other parse error is a usage error: 2, as the commands'.
        return app.exit(e) == 0 ? dlcli::kExitOk : dlcli::kExitFailed;
    }
    return cmds.exitCode();
}

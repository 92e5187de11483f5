#include "app/cli/cli_reference.h"

#include <iostream>
#include <vector>

#include "app/cli/cli_commands.h"

namespace dlcli {

namespace {

// One argument as --help shows it, read from its CLI11 Option.
struct Arg {
    std::vector<std::string> names;    // "-o", "--output"; empty for a positional
    std::string positional;            // "DIR"
    std::string value;                 // "TEXT", "UINT"; empty for a flag
    std::vector<std::string> choices;  // an IsMember check's set, e.g. --format's
    std::string text;
    bool required = false, repeated = false;
};

struct Command {
    std::string name, text;
    std::vector<Arg> args;  // positionals first, in their order, then the options
};

bool visible(const CLI::Option* o) { return !o->get_group().empty(); }

Arg argOf(const CLI::Option* o) {
    Arg a;
    for (const std::string& s : o->get_snames()) a.names.push_back("-" + s);
    for (const std::string& l : o->get_lnames()) a.names.push_back("--" + l);
    if (a.names.empty()) a.positional = o->get_single_name();
    a.text = o->get_description();
    a.required = o->get_required();
    a.repeated = o->get_items_expected_max() > 1;
    if (o->get_items_expected_max() == 0) return a;  // a flag
    // get_type_name() is the type then each check's description: "TEXT:{text,json,csv}".
    const std::string type = o->get_type_name();
    a.value = type.substr(0, type.find(':'));
    const std::size_t open = type.find(":{"), close = type.find('}', open);
    if (open != std::string::npos && close != std::string::npos) {
        const std::string set = type.substr(open + 2, close - open - 2);
        for (std::size_t from = 0; from <= set.size();) {
            std::size_t comma = set.find(',', from);
            if (comma == std::string::npos) comma = set.size();
            a.choices.push_back(set.substr(from, comma - from));
            from = comma + 1;
        }
    }
    return a;
}

// Visible arguments of `app`, positionals first; `skip` (a subcommand's own -h/--help) left out.
std::vector<Arg> argsOf(const CLI::App* app, const CLI::Option* skip) {
    std::vector<Arg> positionals, options;
    for (const CLI::Option* o : app->get_options()) {
        if (!visible(o) || o == skip) continue;
        (o->nonpositional() ? options : positionals).push_back(argOf(o));
    }
    // An option group is an unnamed subcommand holding some of the command's options.
    for (const CLI::App* group : app->get_subcommands([](const CLI::App* s) { return s->get_name().empty(); }))
        for (Arg& a : argsOf(group, nullptr)) (a.names.empty() ? positionals : options).push_back(std::move(a));
    positionals.insert(positionals.end(), options.begin(), options.end());
    return positionals;
}

std::vector<Command> commandsOf(const CLI::App& app) {
    std::vector<Command> out;
    for (const CLI::App* sub :
         app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty() && !s->get_group().empty(); }))
        out.push_back({sub->get_name(), sub->get_description(), argsOf(sub, sub->get_help_ptr())});
    return out;
}

std::string valueName(const Arg& a) {
    if (!a.choices.empty()) {
        std::string s;
        for (const std::string& c : a.choices) s += (s.empty() ? "" : "|") + c;
        return s;
    }
    return a.value;
}

// "index [OPTIONS] DIR", with the required options spelled out: "report [OPTIONS] DIR -o TEXT".
std::string usage(const Command& c) {
    std::string s = c.name;
    bool optional = false;
    for (const Arg& a : c.args) optional |= !a.names.empty() && !a.required;
    if (optional) s += " [OPTIONS]";
    for (const Arg& a : c.args)
        if (a.names.empty())
            s += " " + (a.required ? a.positional : "[" + a.positional + "]") + (a.repeated ? "..." : "");
    for (const Arg& a : c.args)
        if (!a.names.empty() && a.required) s += " " + a.names.front() + (a.value.empty() ? "" : " " + valueName(a));
    return s;
}

// roff: a backslash printed as such, minus signs that stay minus signs, no line read as a request.
std::string roff(const std::string& text, bool minus = false) {
    std::string out;
    for (char ch : text) {
        if (ch == '\\')
            out += "\\e";
        else if (ch == '-' && minus)
            out += "\\-";
        else
            out += ch;
    }
    if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
    return out;
}

std::string manArg(const Arg& a) {
    std::string s;
    if (a.names.empty()) s = "\\fI" + roff(a.positional) + "\\fR" + (a.repeated ? "..." : "");
    for (const std::string& n : a.names) s += (s.empty() ? "" : ", ") + ("\\fB" + roff(n, true) + "\\fR");
    if (!a.value.empty() && !a.names.empty()) s += " \\fI" + roff(valueName(a), true) + "\\fR";
    return s;
}

std::string manText(const Arg& a) {
    std::string t = roff(a.text);  // choices: in the value name already ("text|json|csv")
    if (a.required) t += " (required)";
    return t;
}

std::string md(const std::string& text) {  // a Markdown table cell
    std::string out;
    for (char ch : text) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
    return out;
}

std::string bashWords(const std::vector<std::string>& words) {
    std::string s;
    for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
    return s;
}

bool numeric(const std::string& value) {
    return value == "INT" || value == "UINT" || value == "FLOAT" || value == "NUMBER";
}

}  // namespace

std::string manPage(const CLI::App& app, const std::string& version) {
    const std::vector<Command> commands = commandsOf(app);
    std::string m = ".\\\" Written by dumplens-cli --generate man from its command definition; do not edit.\n";
    m += ".TH DUMPLENS\\-CLI 1 \"\" \"dumplens\\-cli " + roff(version) + "\" \"User Commands\"\n";
    m += ".SH NAME\ndumplens\\-cli \\- " + roff(app.get_description()) + "\n";
    m += ".SH SYNOPSIS\n";
    for (const Command& c : commands) m += ".B dumplens\\-cli\n" + roff(usage(c), true) + "\n.br\n";
    m += ".B dumplens\\-cli\n\\-\\-help | \\-\\-version\n";
    m += ".SH DESCRIPTION\n" + roff(app.get_description()) +
        ".\nEach command below takes \\fB\\-h\\fR, \\fB\\-\\-help\\fR to print its options.\n";
    m += ".SH OPTIONS\n";
    for (const Arg& a : argsOf(&app, nullptr)) m += ".TP\n" + manArg(a) + "\n" + manText(a) + "\n";
    m += ".SH COMMANDS\n";
    for (const Command& c : commands) {
        m += ".SS \"" + roff(c.name) + "\"\n.B dumplens\\-cli\n" + roff(usage(c), true) + "\n.PP\n" + roff(c.text) +
            ".\n";
        for (const Arg& a : c.args) m += ".TP\n" + manArg(a) + "\n" + manText(a) + "\n";
    }
    m += ".SH \"EXIT STATUS\"\n";
    for (const HelpItem& s : kExitStatuses) m += ".TP\n.B " + roff(s.name) + "\n" + roff(s.text) + "\n";
    m += ".SH ENVIRONMENT\n";
    for (const HelpItem& e : kEnvironment) m += ".TP\n.B " + roff(e.name) + "\n" + roff(e.text, true) + "\n";
#ifdef DUMPLENS_HAVE_UI
    m += ".SH \"SEE ALSO\"\n.BR dumplens (1)\n";
#endif
    return m;
}

std::string markdownReference(const CLI::App& app) {
    const std::vector<Command> commands = commandsOf(app);
    std::string m = "`dumplens-cli COMMAND [OPTIONS] ARGS`: " + app.get_description() +
        ". Every command takes `-h`, `--help`; `dumplens-cli --version` prints the version.\n\n"
        "| command | what it does |\n|---|---|\n";
    for (const Command& c : commands) m += "| [`" + c.name + "`](#" + c.name + ") | " + md(c.text) + " |\n";
    for (const Command& c : commands) {
        m += "\n### `" + c.name + "`\n\n" + c.text + ".\n\n```\ndumplens-cli " + usage(c) + "\n```\n\n";
        m += "| argument | value | what |\n|---|---|---|\n";
        for (const Arg& a : c.args) {
            std::string names;
            for (const std::string& n : a.names) names += (names.empty() ? "`" : ", `") + n + "`";
            if (a.names.empty()) names = "`" + a.positional + "`" + (a.repeated ? "..." : "");
            std::string value = a.names.empty() ? a.value : valueName(a);
            if (a.required) value += value.empty() ? "required" : ", required";
            m += "| " + names + " | " + md(value) + " | " + md(a.text) + " |\n";
        }
    }
    m += "\n### Exit status\n\n| status | meaning |\n|---|---|\n";
    for (const HelpItem& s : kExitStatuses) m += std::string("| ") + s.name + " | " + md(s.text) + " |\n";
    m += "\n### Environment\n\n| variable | meaning |\n|---|---|\n";
    for (const HelpItem& e : kEnvironment) m += std::string("| `") + e.name + "` | " + md(e.text) + " |\n";
    return m;
}

std::string bashCompletion(const CLI::App& app) {
    const std::vector<Command> commands = commandsOf(app);
    std::vector<std::string> names, top;
    for (const Command& c : commands) names.push_back(c.name);
    for (const Arg& a : argsOf(&app, nullptr)) top.insert(top.end(), a.names.begin(), a.names.end());
    std::string b =
        "# bash completion for dumplens-cli. Written by dumplens-cli --generate bash-completion from its\n"
        "# command definition; do not edit.\n"
        "_dumplens_cli_files() {\n"
        "    if declare -F _filedir >/dev/null; then _filedir; else\n"
        "        compopt -o filenames 2>/dev/null\n"
        "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
        "    fi\n"
        "}\n\n"
        "_dumplens_cli() {\n"
        "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= i\n"
        "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
        "        case ${COMP_WORDS[i]} in\n"
        "            " +
        [&] {
            std::string s;
            for (const std::string& n : names) s += (s.empty() ? "" : "|") + n;
            return s;
        }() +
        ") cmd=${COMP_WORDS[i]}; break ;;\n"
        "        esac\n"
        "    done\n"
        "    COMPREPLY=()\n"
        "    case $cmd in\n"
        "        '')\n"
        "            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W '" +
        bashWords(top) +
        "' -- \"$cur\"))\n"
        "            else COMPREPLY=($(compgen -W '" +
        bashWords(names) +
        "' -- \"$cur\")); fi\n"
        "            return ;;\n";
    for (const Command& c : commands) {
        std::vector<std::string> options{"-h", "--help"};
        std::string values;
        for (const Arg& a : c.args) {
            if (a.names.empty()) continue;
            options.insert(options.end(), a.names.begin(), a.names.end());
            if (a.value.empty()) continue;
            std::string pattern;
            for (const std::string& n : a.names) pattern += (pattern.empty() ? "" : "|") + n;
            if (!a.choices.empty())
                values += "                " + pattern + ") COMPREPLY=($(compgen -W '" + bashWords(a.choices) +
                    "' -- \"$cur\")); return ;;\n";
            else if (numeric(a.value))
                values += "                " + pattern + ") return ;;\n";  // a number: nothing to offer
            else
                values += "                " + pattern + ") _dumplens_cli_files; return ;;\n";
        }
        b += "        " + c.name + ")\n";
        if (!values.empty()) b += "            case $prev in\n" + values + "            esac\n";
        b += "            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W '" + bashWords(options) +
            "' -- \"$cur\"))\n            else _dumplens_cli_files; fi\n            return ;;\n";
    }
    b += "    esac\n}\ncomplete -F _dumplens_cli dumplens-cli\n";
    return b;
}

int writeReference(const CLI::App& app, const std::string& version, const std::string& what) {
    if (what != "man" && what != "markdown" && what != "bash-completion") {
        std::cerr << "dumplens-cli: --generate takes man, markdown or bash-completion, not '" << what << "'\n";
        return kExitFailed;
    }
    std::cout << (what == "man"            ? manPage(app, version)
                      : what == "markdown" ? markdownReference(app)
                                           : bashCompletion(app));
    return kExitOk;
}

}  // namespace dlcli

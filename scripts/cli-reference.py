#!/usr/bin/env python3
"""Checks dumplens-cli's man page, bash completion and docs/cli.md against its --help.

Every command, option and --format-like choice is read from `dumplens-cli --help` and from each
listed command's `--help` (CLI11's text, not the generator's data), so a command added to the CLI
is checked without being named here. Usage:
  cli-reference.py man CLI MAN_GZ [GUI GUI_MAN_GZ]   man -l renders them without warnings, one
                                                     section per command, every option in it
  cli-reference.py completion CLI COMPLETION         bash completes the commands, the options of
                                                     each command, every choice and file paths
  cli-reference.py doc CLI DOC                       docs/cli.md's generated part is what the CLI
                                                     writes now and covers every option
  cli-reference.py update-doc CLI DOC                rewrites docs/cli.md's generated part
Exit 1 with the differences.
"""
import os, re, subprocess, sys, tempfile

BEGIN = '<!-- BEGIN dumplens-cli --generate markdown (scripts/cli-reference.py update-doc CLI docs/cli.md) -->'
END = '<!-- END dumplens-cli --generate markdown -->'
problems = []


def run(args, env=None, check=True):
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)
    if check and r.returncode != 0:
        sys.exit(f'{args} exited {r.returncode}: {r.stderr}')
    return r


def section(text, title):
    """The lines of a CLI11 help section ("Options:", "Subcommands:") up to the next blank line."""
    lines = text.splitlines()
    if title not in lines:
        return []
    out = []
    for line in lines[lines.index(title) + 1:]:
        if not line.strip():
            break
        out.append(line)
    return out


def parse_help(cli):
    """{command: {"options": [names], "positionals": [names], "choices": {name: [values]}}}."""
    top = run([cli, '--help']).stdout
    commands = {}
    for line in section(top, 'Subcommands:'):
        if not re.match(r'^  \S', line):
            continue
        name = line.split()[0]
        helptext = run([cli, name, '--help']).stdout
        entry = {'options': [], 'positionals': [], 'choices': {}}
        for line2 in section(helptext, 'Positionals:'):
            if re.match(r'^  \S', line2):
                entry['positionals'].append(line2.split()[0])
        for line2 in section(helptext, 'Options:'):
            m = re.match(r'^  (-\S+)(?: (\S+))?', line2)
            if not m:
                continue
            names = [n for n in m.group(1).split(',') if n not in ('-h', '--help')]
            entry['options'] += names
            choices = re.search(r'\{([^}]*)\}', m.group(2) or '')
            for n in names:
                if choices:
                    entry['choices'][n] = choices.group(1).split(',')
        commands[name] = entry
    if not commands:
        sys.exit(f'{cli} --help lists no command:\n{top}')
    return top, commands


def rendered(page):
    env = dict(os.environ, MANWIDTH='200', MAN_KEEP_FORMATTING='0', LC_ALL='C.UTF-8')
    r = run(['man', '--warnings', '-l', page], env=env)
    if r.stderr.strip():
        problems.append(f'man --warnings -l {page}: {r.stderr.strip()}')
    return re.sub(r'.\x08', '', r.stdout)   # no overstrike bold


def check_man(cli, page, gui=None, gui_page=None):
    top, commands = parse_help(cli)
    text = rendered(page)
    heads = [i for i, line in enumerate(text.splitlines()) if re.match(r'^\S', line)]
    lines = text.splitlines()
    sections = {lines[i].strip(): '\n'.join(lines[i + 1:(heads + [len(lines)])[heads.index(i) + 1]]) for i in heads}
    for want in ('NAME', 'SYNOPSIS', 'DESCRIPTION', 'COMMANDS', 'EXIT STATUS', 'ENVIRONMENT'):
        if want not in sections:
            problems.append(f'{page}: no {want} section (has {sorted(sections)})')
    body = sections.get('COMMANDS', '').splitlines()
    starts = [i for i, line in enumerate(body) if re.match(r'^   \S+$', line)]
    subs = {body[i].strip(): '\n'.join(body[i + 1:(starts + [len(body)])[starts.index(i) + 1]]) for i in starts}
    for name, entry in commands.items():
        if name not in subs:
            problems.append(f'{page}: no section for the command {name}')
            continue
        for word in entry['options'] + entry['positionals']:
            if not re.search(r'(?<![\w-])' + re.escape(word) + r'(?![\w-])', subs[name]):
                problems.append(f'{page}: command {name}: {word} (in its --help) is missing')
        for opt, values in entry['choices'].items():
            for v in values:
                if v not in subs[name]:
                    problems.append(f'{page}: command {name}: {opt} value {v} is missing')
    extra = sorted(set(subs) - set(commands))
    if extra:
        problems.append(f'{page}: sections for commands --help does not list: {extra}')
    # The exit statuses and the environment of --help's footer.
    footer = top.split('Exit status:', 1)[-1]
    for code in re.findall(r'^  (\d+)  ', footer, re.M):
        if not re.search(r'^\s+' + code + r'(\s|$)', sections.get('EXIT STATUS', ''), re.M):
            problems.append(f'{page}: exit status {code} of --help is not under EXIT STATUS')
    for var in re.findall(r'^  ([A-Z_]+)  ', footer, re.M):
        if var not in sections.get('ENVIRONMENT', ''):
            problems.append(f'{page}: {var} of --help is not under ENVIRONMENT')
    if 'DUMPLENS_CACHE_DIR' not in sections.get('ENVIRONMENT', ''):
        problems.append(f'{page}: ENVIRONMENT does not name DUMPLENS_CACHE_DIR')
    if gui:
        env = dict(os.environ, QT_QPA_PLATFORM='offscreen')
        helptext = run([gui, '--help'], env=env).stdout
        text = rendered(gui_page)
        for opt in re.findall(r'^  (?:-\w, )?(--[\w-]+)', helptext, re.M):
            if opt not in text:
                problems.append(f'{gui_page}: {opt} of dumplens --help is missing')
        for want in ('NAME', 'SYNOPSIS', 'EXIT STATUS', 'ENVIRONMENT', 'DUMPLENS_CACHE_DIR', 'dumplens-cli(1)'):
            if want not in text:
                problems.append(f'{gui_page}: no {want}')


def complete(completion, words, cwd):
    """COMPREPLY of bash-completing `words` (the last one being completed), as bash would."""
    script = f'source {completion!r}; COMP_WORDS=({" ".join(repr(w) for w in words)}); ' \
             f'COMP_CWORD={len(words) - 1}; _dumplens_cli; printf "%s\\n" "${{COMPREPLY[@]}}"'
    r = run(['bash', '-c', script], check=False)
    if r.returncode != 0 or r.stderr.strip():
        problems.append(f'completing {words}: exit {r.returncode}, {r.stderr.strip()}')
    return [w for w in r.stdout.splitlines() if w]


def check_completion(cli, completion):
    _, commands = parse_help(cli)
    r = run(['bash', '-c', f'source {completion!r}; complete -p dumplens-cli'], check=False)
    if '_dumplens_cli' not in r.stdout:
        problems.append(f'complete -p dumplens-cli after sourcing {completion}: {r.stdout}{r.stderr}')
    with tempfile.TemporaryDirectory() as tmp:
        open(os.path.join(tmp, 'run_a.dlx'), 'w').close()
        os.chdir(tmp)
        got = complete(completion, ['dumplens-cli', ''], tmp)
        if sorted(got) != sorted(commands):
            problems.append(f'dumplens-cli <TAB>: {sorted(got)}, --help lists {sorted(commands)}')
        for name, entry in commands.items():
            if complete(completion, ['dumplens-cli', name[:-1]], tmp).count(name) != 1:
                problems.append(f'dumplens-cli {name[:-1]}<TAB> does not offer {name}')
            got = set(complete(completion, ['dumplens-cli', name, '-'], tmp))
            missing = set(entry['options']) - got
            if missing:
                problems.append(f'dumplens-cli {name} -<TAB> lacks {sorted(missing)}')
            for opt, values in entry['choices'].items():
                got = complete(completion, ['dumplens-cli', name, 'x', opt, ''], tmp)
                if sorted(got) != sorted(values):
                    problems.append(f'dumplens-cli {name} {opt} <TAB>: {got}, --help says {values}')
            if entry['positionals'] and complete(completion, ['dumplens-cli', name, 'run_'], tmp) != ['run_a.dlx']:
                problems.append(f'dumplens-cli {name} run_<TAB> does not complete the file run_a.dlx')


def generated(cli):
    return BEGIN + '\n' + run([cli, '--generate', 'markdown']).stdout + END


def check_doc(cli, doc):
    _, commands = parse_help(cli)
    text = open(doc, encoding='utf-8').read()
    if BEGIN not in text or END not in text:
        problems.append(f'{doc}: no generated part ({BEGIN} ... {END})')
        return
    part = text[text.index(BEGIN):text.index(END) + len(END)]
    if part != generated(cli):
        problems.append(f'{doc}: its generated part differs from what {cli} writes now: '
                        f'run scripts/cli-reference.py update-doc {cli} {doc}')
    for name, entry in commands.items():
        m = re.search(r'^### `' + re.escape(name) + r'`\n(.*?)(?=^### |\Z)', part, re.M | re.S)
        if not m:
            problems.append(f'{doc}: no section for the command {name}')
            continue
        for word in entry['options'] + entry['positionals']:
            if f'`{word}`' not in m.group(1):
                problems.append(f'{doc}: command {name}: {word} (in its --help) is missing')


def update_doc(cli, doc):
    text = open(doc, encoding='utf-8').read()
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + generated(cli) + text[text.index(END) + len(END):]
    else:
        text += '\n' + generated(cli) + '\n'
    open(doc, 'w', encoding='utf-8').write(text)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    mode, args = sys.argv[1], [os.path.abspath(a) for a in sys.argv[2:]]
    {'man': check_man, 'completion': check_completion, 'doc': check_doc, 'update-doc': update_doc}[mode](*args)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()

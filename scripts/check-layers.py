#!/usr/bin/env python3
"""Checks the layer table of docs/ARCHITECTURE.md against the #include lines of core/ and the
layer targets of core/CMakeLists.txt.

Each table row names a layer and the layers it includes; the code's include graph is measured
and must equal the table row by row, each layer's dumplens_layer(... LAYERS ...) target must link
exactly the layers of its row (the build then refuses any other include), and the rows must be in
an order where every layer includes only layers above it.
Usage: check-layers.py [repository root]. Exit 1 with a list of differences.
"""
import os, re, sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
INCLUDE = re.compile(r'#include\s+"(core/[^"]+)"')
# The formats' readers fill the indexer's shards, so they build with the index layer.
READER = re.compile(r'(_reader|_shard|cann_stats|reader_registry)\.(h|cpp)$')


def layer_of(path):
    parts = path.split('/')
    if parts[1] == 'formats':
        return 'index' if READER.search(parts[-1]) else 'formats'
    return parts[1]


def measured():
    graph = {}
    for folder, _, files in os.walk(os.path.join(root, 'core')):
        for name in files:
            if not name.endswith(('.h', '.cpp')):
                continue
            rel = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, '/')
            src = layer_of(rel)
            deps = graph.setdefault(src, {})
            with open(os.path.join(folder, name), encoding='utf-8') as f:
                for m in INCLUDE.finditer(f.read()):
                    dst = layer_of(m.group(1))
                    if dst != src:
                        deps.setdefault(dst, rel + ' includes ' + m.group(1))
    return graph


def table():
    rows = []
    with open(os.path.join(root, 'docs', 'ARCHITECTURE.md'), encoding='utf-8') as f:
        text = f.read()
    section = text.split('## Layers', 1)[1].split('\n## ', 1)[0]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) != 3 or not cells[0].startswith('`core/'):
            continue
        layer = cells[0].split('`')[1].split('/')[1]
        deps = set() if 'standard library' in cells[2] else {d.strip() for d in cells[2].split(',')}
        rows.append((layer, deps))
    return rows


def targets():
    """Layer name -> the layers its dumplens_layer() call links, from core/CMakeLists.txt."""
    with open(os.path.join(root, 'core', 'CMakeLists.txt'), encoding='utf-8') as f:
        text = re.sub(r'#[^\n]*', '', f.read())
    out = {}
    for m in re.finditer(r'^dumplens_layer\(([^)]*)\)', text, re.M):
        words = m.group(1).split()
        layers, keyword = set(), None
        for w in words[1:]:
            if w in ('FOLDER', 'SOURCES', 'EXCLUDE', 'LAYERS', 'PUBLIC', 'PRIVATE'):
                keyword = w
            elif keyword == 'LAYERS':
                layers.add(w)
        out[words[0]] = layers
    return out


def main():
    rows, code, linked = table(), measured(), targets()
    problems = []
    for layer, deps in rows:
        if layer not in linked:
            problems.append(f'{layer}: a row of the table without a dumplens_layer() target in core/CMakeLists.txt')
        elif linked[layer] != deps:
            problems.append(f'{layer}: core/CMakeLists.txt links {", ".join(sorted(linked[layer])) or "no layer"}, '
                            f'the table says {", ".join(sorted(deps)) or "the standard library"}')
    for layer in sorted(set(linked) - {layer for layer, _ in rows}):
        problems.append(f'{layer}: a dumplens_layer() target without a row in the table')
    order = [layer for layer, _ in rows]
    for i, (layer, deps) in enumerate(rows):
        actual = code.get(layer, {})
        for d in sorted(set(actual) - deps):
            problems.append(f'{layer}: includes {d}, the table does not say so ({actual[d]})')
        for d in sorted(deps - set(actual)):
            problems.append(f'{layer}: the table says it includes {d}, the code does not')
        for d in sorted(deps):
            if d in order and order.index(d) > i:
                problems.append(f'{layer}: includes {d}, which is below it in the table')
    for layer in sorted(set(code) - set(order)):
        problems.append(f'{layer}: a folder of core/ without a row in the table')
    for p in problems:
        print('check-layers:', p)
    if problems:
        print(f'check-layers: docs/ARCHITECTURE.md and core/ disagree in {len(problems)} place(s)')
        return 1
    print(f'check-layers: {len(rows)} layers; table, includes and CMake targets agree')
    return 0


if __name__ == '__main__':
    sys.exit(main())

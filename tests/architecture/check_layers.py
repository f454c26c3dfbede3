#!/usr/bin/env python3
"""Fails if a folder includes a folder above it, or one beside it (docs/architecture.md, "Layers").

Usage: check_layers.py SOURCE_ROOT

Every C++ file under the project's code folders is read; each `#include <fraglab/...>` names
the folder it reaches (the build's include/fraglab/ links: runtime/ and cli/ are the folders of
experiments/). LAYERS below lists the folders from the bottom up: a folder may include its own
files and those of any lower line, never a higher line nor another folder of its own line, so no
two folders can include each other. Inside a folder, no circle either: a file and its header
count as one module (X.cpp with X.hpp), and no module may reach itself through the modules it
includes. Project headers are included by their <fraglab/...> name only; quoted includes are
left to the tests' own helpers and generated files."""
import os
import re
import sys

# Bottom up. A new folder of code fails the check until it is given its place here (and in
# the drawing in docs/architecture.md).
LAYERS = [
    ["engine"],
    ["backends"],
    ["policies/rules"],
    ["policies/indexes", "policies/offline"],
    ["policies/compositions", "policies/presets"],
    ["runtime/io"],
    ["runtime/params", "runtime/pickle"],
    ["runtime/trace"],
    ["runtime/gen", "runtime/replay"],
    ["runtime/registry"],
    ["runtime/inspect"],
    ["runtime/output"],
    ["runtime/plan"],
    ["runtime/run"],
    ["cli", "tracer", "plugins"],
    ["python", "benchmarks"],
    ["tests"],
]
RANK = {unit: rank for rank, line in enumerate(LAYERS) for unit in line}
# Where each include name's first part lives in the source tree.
FOLDERS = {"runtime": "experiments/runtime", "cli": "experiments/cli", "python": "experiments/python",
           "tracer": "experiments/tracer"}
SOURCES = (".hpp", ".cpp", ".cu", ".cuh", ".h")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def unit_of(path):
    """The layer unit of a path written as an include name (without the fraglab/ prefix)."""
    parts = path.split("/")
    if parts[0] == "policies":
        if len(parts) == 2:
            return "policies/compositions" if parts[1] == "compositions.hpp" else "policies/rules"
        return "policies/" + parts[1]
    if parts[0] == "runtime":
        return "runtime/" + parts[1] if len(parts) > 2 else None
    return parts[0]


def include_name(relative):
    """A source file's path as its include name: experiments/runtime/x -> runtime/x."""
    for name, folder in FOLDERS.items():
        if relative.startswith(folder + "/"):
            return name + relative[len(folder):]
    return relative


def circles(modules):
    """The sets of modules that reach each other (Tarjan's strongly connected components)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(modules.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(modules):
        if v not in index:
            visit(v)
    return found


def main(root):
    problems, edges, modules = [], {}, {}
    for top in ["engine", "backends", "policies", "experiments", "plugins", "benchmarks", "tests"]:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for file in sorted(files):
                if not file.endswith(SOURCES):
                    continue
                relative = os.path.relpath(os.path.join(folder, file), root)
                here = "tests" if top == "tests" else unit_of(include_name(relative))
                if here == "tests":
                    continue  # the top: tests include any layer, and their own helpers by quoted path
                if here not in RANK:
                    problems.append(f"{relative}: folder not in LAYERS ({here}): give it its place")
                    continue
                with open(os.path.join(root, relative), encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        quote, name = m.groups()
                        if quote == '"':
                            if name.split("/")[0] in ("engine", "policies", "backends", "experiments", "plugins",
                                                       "benchmarks", "fraglab"):
                                problems.append(f"{relative}:{number}: expected #include <fraglab/{name}>, not \"{name}\"")
                            continue
                        if not name.startswith("fraglab/"):
                            continue
                        module = os.path.splitext(include_name(relative))[0]
                        modules.setdefault(module, set()).add(os.path.splitext(name[len("fraglab/"):])[0])
                        modules[module].discard(module)
                        there = unit_of(name[len("fraglab/"):])
                        if there not in RANK:
                            problems.append(f"{relative}:{number}: <{name}> is in no layer")
                        elif there != here:
                            edges[(here, there)] = edges.get((here, there), 0) + 1
                            if RANK[there] >= RANK[here]:
                                where = "beside" if RANK[there] == RANK[here] else "above"
                                problems.append(f"{relative}:{number}: {here} includes {there}, {where} it")
    for circle in circles(modules):
        problems.append("a circle of includes: " + " -> ".join(circle + circle[:1]))
    for problem in problems:
        print(problem, file=sys.stderr)
    if "--graph" in sys.argv:
        for (a, b), n in sorted(edges.items()):
            print(f"{a} -> {b} ({n})")
    print(f"{len(problems)} include(s) against the layers", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))

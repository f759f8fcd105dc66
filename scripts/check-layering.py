#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-layering: who calls whom, read from the objects (docs/design.md, "Map").

Each object's symbols (nm: the globals it defines, the ones it leaves
undefined) say which file calls which. The rules:

  1. the files of one folder never call each other in a loop;
  2. the folders never call each other in a loop (the layers of the map
     form an order: a folder calls only folders below it);
  3. nothing in lib/ calls anything in tools/;
  4. a tool's folder (tools/NAME) calls only itself, tools/common and lib/;
     tools/common calls no tool.

A symbol an object leaves undefined is resolved the way the link resolves
it: in the object's own folder if defined there, else in lib/, else in
whatever other folder defines it (a symbol several tools define, such as
their usage text, is private to each and resolved in its own folder).
Symbols no object defines (libc, liburcu...) are outside the check.

Usage: check-layering.py [--root DIR] OBJECT...
  --root DIR  the build directory: OBJECT's source file is its path under
              DIR with .c for .o (build/lib/query/fetch.o: lib/query/fetch.c)
Exit status: 0 clean, 1 a rule is broken (each break on stderr), 2 usage.
"""
import os
import subprocess
import sys


def usage(msg):
    sys.stderr.write("check-layering: %s\nusage: check-layering.py [--root DIR] OBJECT...\n" % msg)
    sys.exit(2)


def read_symbols(obj):
    """(defined, undefined): the object's global symbols (nm -P)."""
    out = subprocess.run(["nm", "-P", "-g", obj], check=True, capture_output=True,
                         text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind in ("U", "w", "v"):
            undefined.add(name)
        else:
            defined.add(name)
    return defined, undefined


def sccs(nodes, edges):
    """Tarjan's strongly connected components, each a sorted list."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        # Iterative, so a deep graph cannot exhaust Python's stack.
        work = [(v, iter(sorted(edges.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def shortest_cycle(comp, edges):
    """A shortest cycle through comp[0] inside the component: [a, b, ..., a]."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    while queue:
        nxt = []
        for v in queue:
            for w in sorted(edges.get(v, ())):
                if w not in members:
                    continue
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        queue = nxt
    return [start, start]


def is_lib(folder):
    return folder == "lib" or folder.startswith("lib/")


def is_tools(folder):
    return folder == "tools" or folder.startswith("tools/")


def main(argv):
    root = None
    objs = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--root":
            if i + 1 >= len(argv):
                usage("--root needs a directory")
            root = argv[i + 1]
            i += 2
            continue
        if a in ("-h", "--help"):
            sys.stdout.write(__doc__)
            return 0
        if a.startswith("-"):
            usage("unknown option %s" % a)
        objs.append(a)
        i += 1
    if not objs:
        usage("no object given")

    # Each object as its source: lib/query/fetch.c, in folder lib/query.
    src_of, folder_of = {}, {}
    defs = {}  # symbol -> set of sources defining it
    undef = {}
    for obj in objs:
        rel = os.path.relpath(obj, root) if root else obj
        if rel.startswith(".."):
            usage("%s is not under %s" % (obj, root))
        src = rel[:-2] + ".c" if rel.endswith(".o") else rel
        src_of[obj] = src
        folder_of[src] = os.path.dirname(src)
        try:
            d, u = read_symbols(obj)
        except (OSError, subprocess.CalledProcessError) as e:
            sys.stderr.write("check-layering: nm %s: %s\n" % (obj, e))
            return 2
        for s in d:
            defs.setdefault(s, set()).add(src)
        undef[src] = u

    # File edges: caller -> callee, with the symbols that make each.
    calls = {}  # (caller, callee) -> sorted symbols
    for src, syms in undef.items():
        folder = folder_of[src]
        for s in syms:
            cands = defs.get(s)
            if not cands:
                continue
            own = {c for c in cands if folder_of[c] == folder}
            lib = {c for c in cands if is_lib(folder_of[c])}
            for callee in own or lib or cands:
                if callee != src:
                    calls.setdefault((src, callee), set()).add(s)

    def edge_text(a, b, short):
        syms = sorted(calls[(a, b)])
        more = ", ..." if len(syms) > 3 else ""
        name = os.path.basename if short else (lambda x: x)
        return "%s -> %s (%s%s)" % (name(a), name(b), ", ".join(syms[:3]), more)

    errors = []

    # Rule 1: loops inside a folder.
    by_folder = {}
    for (a, b) in calls:
        if folder_of[a] == folder_of[b]:
            by_folder.setdefault(folder_of[a], {}).setdefault(a, set()).add(b)
    for folder in sorted(by_folder):
        edges = by_folder[folder]
        nodes = set(edges) | {b for bs in edges.values() for b in bs}
        for comp in sccs(nodes, edges):
            if len(comp) < 2:
                continue
            cyc = shortest_cycle(comp, edges)
            steps = ", ".join(edge_text(cyc[k], cyc[k + 1], True) for k in range(len(cyc) - 1))
            errors.append("%s: files call each other in a loop: %s\n    (the loop's files: %s)"
                          % (folder, steps, " ".join(os.path.basename(c) for c in comp)))

    # Rules 3 and 4: lib/ never calls tools/; a tool calls no other tool.
    for (a, b) in sorted(calls):
        fa, fb = folder_of[a], folder_of[b]
        if fa == fb:
            continue
        if is_lib(fa) and is_tools(fb):
            errors.append("%s: lib/ calls into tools/: %s" % (fa, edge_text(a, b, False)))
        elif is_tools(fa) and is_tools(fb) and fb != "tools/common":
            errors.append("%s: calls another tool's code: %s" % (fa, edge_text(a, b, False)))

    # Rule 2: loops between folders.
    fedges = {}
    for (a, b) in calls:
        if folder_of[a] != folder_of[b]:
            fedges.setdefault(folder_of[a], set()).add(folder_of[b])
    fnodes = set(fedges) | {b for bs in fedges.values() for b in bs}
    for comp in sccs(fnodes, fedges):
        if len(comp) < 2:
            continue
        cyc = shortest_cycle(comp, fedges)
        steps = []
        for k in range(len(cyc) - 1):
            fa, fb = cyc[k], cyc[k + 1]
            pair = next(p for p in sorted(calls) if folder_of[p[0]] == fa and folder_of[p[1]] == fb)
            steps.append("%s -> %s: %s" % (fa, fb, edge_text(pair[0], pair[1], False)))
        errors.append("folders call each other in a loop:\n    " + "\n    ".join(steps))

    for e in errors:
        sys.stderr.write("check-layering: %s\n" % e)
    if errors:
        sys.stderr.write("check-layering: %d rule break(s) in %d objects (docs/design.md, \"Map\", "
                         "says who may call whom)\n" % (len(errors), len(objs)))
        return 1
    nfolders = len(set(folder_of.values()))
    print("check-layering: %d objects in %d folders: no loop inside a folder or between folders, "
          "lib/ calls nothing in tools/, no tool calls another's code" % (len(objs), nfolders))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

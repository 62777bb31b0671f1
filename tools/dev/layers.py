#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that every include and every call of kring goes down a layer.

The layers are the tables of docs/ARCHITECTURE.md between the markers
<!-- layers: ROOT --> and <!-- /layers -->, one per side (ROOT: kmod/ for
the kernel module, ./ for libkring and the tool). Each row is

    | LAYER | what | `file` `file` ... |

with LAYER a number (lowest first) or "N (table)" for an ops table: a file
of layer N whose symbols any layer may use (the upward calls that go
through a table of operations, sources/sources.c). File names may be
globs, relative to ROOT.

Rules, for the files each table names (every .c/.h of kmod/, every file
of userlib/include/kring/, userlib/src/, userlib/perf_data/, userlib/wire/
and tools/kring/ must be in one row, and only one):

  includes  a file includes only files of its own layer or below it
            ("..." resolved against its own directory, then as <...>;
            <...> against the side's include paths, ANGLED; anything
            else is outside);
  calls     an object uses only symbols (functions and data, strong
            definitions: what nm lists as T, D, R or B) of objects of its
            own layer or below, or of an ops table. From the objects of a
            module build (--kmod-build, the directory
            tools/dev/build-modules.sh prints) and of the user build
            (--user-build, $KRING_BUILD/user with libkring and the tool
            built);
  cycles    no two files depend on each other, even in one layer: the
            graph of the includes and the calls above (what uses an ops
            table excepted, the one sanctioned way up) has no cycle.

The user side has components too, the table between <!-- components: ./ -->
and <!-- /components -->, one row per component:

    | name | `file` ... | `public file` ... | shared with | raw offsets |

Every file of the side is in one component, and

  components  a file includes a file of another component only if it is
              one of that component's public files, or that component is
              shared with the file's (its names in "shared with");
  offsets     a file of a component whose "raw offsets" cell is "no" reads
              no record bytes at a literal offset: no load_at<>, no
              data() + N, no bytes[N] (comments aside). Those reads belong
              in the parsers of libkring and perf_data.

Includes are resolved as above, then against the directories of the
side's private files (ELSEWHERE): an include that only a build's extra
include path or a relative path lets through still names its file.

Prints every edge that goes up and every cycle, and exits 1 if there is
one. With --graph,
prints a side's graph instead (its includes, its calls, or its includes
for graphviz), paths relative to the repository.

    tools/dev/layers.py [--kmod-build DIR] [--user-build DIR]
    tools/dev/layers.py --graph includes|dot [--side kmod|user]
    tools/dev/layers.py --graph calls --side kmod --kmod-build DIR
"""
import argparse
import fnmatch
import glob
import os
import re
import signal
import subprocess
import sys

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DOC = os.path.join(TOP, "docs", "ARCHITECTURE.md")
# What each side's table must cover, relative to the repository.
SIDES = {
    "kmod/": ["kmod/*.c", "kmod/*.h", "kmod/sources/*.c", "kmod/sources/*.h",
              "kmod/include/kring/*.h", "kmod/examples/*.c"],
    "./": ["userlib/include/kring/*.hpp", "userlib/src/*.cpp", "userlib/src/*.hpp",
           "userlib/perf_data/include/kring/*.hpp", "userlib/perf_data/src/*.cpp",
           "userlib/perf_data/src/*.hpp", "userlib/wire/*.hpp", "tools/kring/*.cpp",
           "tools/kring/*.hpp"],
}
# Where an include that is not next to its file is looked for, in order, on
# each side (the include paths of its builds).
ANGLED = {"kmod/": ["kmod/include"],
          "./": ["userlib/include", "userlib/perf_data/include", "userlib/wire"]}
# Where else an include of the side may find a file (its private
# directories): an include that resolves only here reaches across.
ELSEWHERE = {"kmod/": [],
             "./": ["userlib/src", "userlib/perf_data/src", "userlib/wire", "tools/kring"]}
# A read of record bytes at a literal offset (see "offsets" above).
RAW_OFFSET = [
    (re.compile(r"\bload_at\s*<"), "load_at<>"),
    (re.compile(r"\.data\(\)\s*\)?\s*\+\s*(0x[0-9a-fA-F]+|[0-9]+)\b"), "data() + a literal"),
    (re.compile(r"\bbytes(\(\))?\s*\[\s*(0x[0-9a-fA-F]+|[0-9]+)\s*\]"), "bytes[a literal]"),
]
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def read_tables():
    """{root: {file: (layer, is_table)}} from the document."""
    text = open(DOC, encoding="utf-8").read()
    tables = {}
    for m in re.finditer(r"<!-- layers: (\S+) -->(.*?)<!-- /layers -->", text, re.S):
        root, body = m.group(1), m.group(2)
        files = {}
        for line in body.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 3 or not re.match(r"^\d+( \(table\))?$", cells[0]):
                continue
            layer = int(cells[0].split()[0])
            table = cells[0].endswith("(table)")
            for pat in re.findall(r"`([^`]+)`", cells[2]):
                path = os.path.normpath(os.path.join(root, pat))
                hits = sorted(glob.glob(os.path.join(TOP, path)))
                if not hits:
                    sys.exit(f"layers.py: {DOC}: {pat} ({root}) names no file")
                for h in hits:
                    rel = os.path.relpath(h, TOP)
                    if rel in files:
                        sys.exit(f"layers.py: {rel} is in two rows")
                    files[rel] = (layer, table)
        tables[root] = files
    if set(tables) != set(SIDES):
        sys.exit(f"layers.py: {DOC} has layer tables for {sorted(tables)}, not {sorted(SIDES)}")
    return tables


def covered(root, files):
    errors = []
    for pat in SIDES[root]:
        for h in sorted(glob.glob(os.path.join(TOP, pat))):
            rel = os.path.relpath(h, TOP)
            if rel not in files:
                errors.append(f"{rel}: in no layer of docs/ARCHITECTURE.md")
    return errors


def include_edges(root, files):
    """[(file, included file)] for the includes that resolve to files of the side."""
    edges = []
    for f in sorted(files):
        src = open(os.path.join(TOP, f), encoding="utf-8").read()
        for kind, inc in INCLUDE.findall(src):
            cands = [os.path.join(os.path.dirname(f), inc)] if kind == '"' else []
            cands += [os.path.join(d, inc) for d in ANGLED[root] + ELSEWHERE[root]]
            for c in cands:
                c = os.path.normpath(c)
                if c in files:
                    edges.append((f, c))
                    break
    return edges


def check_includes(root, files):
    errors = []
    for f, c in include_edges(root, files):
        if files[c][0] > files[f][0]:
            errors.append(f"include up: {f} (layer {files[f][0]}) includes "
                          f"{c} (layer {files[c][0]})")
    return errors


def expand(root, pats, what):
    """The files of the side that the backquoted globs of @pats name."""
    files = []
    for pat in re.findall(r"`([^`]+)`", pats):
        hits = sorted(glob.glob(os.path.join(TOP, os.path.normpath(os.path.join(root, pat)))))
        if not hits:
            sys.exit(f"layers.py: {DOC}: {pat} ({what}) names no file")
        files += [os.path.relpath(h, TOP) for h in hits]
    return files


def read_components():
    """{root: {name: {files, public, shared, offsets}}} from the document."""
    text = open(DOC, encoding="utf-8").read()
    comps = {}
    for m in re.finditer(r"<!-- components: (\S+) -->(.*?)<!-- /components -->", text, re.S):
        root, side = m.group(1), {}
        for line in m.group(2).splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 5 or not re.match(r"^[a-z_]+$", cells[0]):
                continue
            side[cells[0]] = {"files": set(expand(root, cells[1], cells[0])),
                              "public": set(expand(root, cells[2], cells[0])),
                              "shared": set(cells[3].replace(",", " ").split()),
                              "offsets": cells[4] != "no"}
        comps[root] = side
    return comps


def component_of(comps):
    """{file: component name}; exits when a file is in two components."""
    owner = {}
    for name, c in comps.items():
        for f in c["files"]:
            if f in owner:
                sys.exit(f"layers.py: {f} is in components {owner[f]} and {name}")
            owner[f] = name
    return owner


def check_components(root, files, comps):
    """Includes across components and raw offsets (see the docstring)."""
    owner = component_of(comps)
    errors = [f"{f}: in no component of docs/ARCHITECTURE.md" for f in sorted(files)
              if f not in owner]
    for f, c in include_edges(root, files):
        a, b = owner.get(f), owner.get(c)
        if not a or not b or a == b or c in comps[b]["public"] or a in comps[b]["shared"]:
            continue
        errors.append(f"include across: {f} ({a}) includes {c}, private to {b}")
    for f in sorted(files):
        if owner.get(f) and not comps[owner[f]]["offsets"]:
            errors += raw_offsets(f)
    return errors


def raw_offsets(f):
    src = open(os.path.join(TOP, f), encoding="utf-8").read()
    # Comments and string literals out, newlines kept for the line numbers.
    src = re.sub(r"//[^\n]*|/\*.*?\*/|'(\\.|[^'\\\n])'|\"(\\.|[^\"\\\n])*\"",
                 lambda m: re.sub(r"[^\n]", " ", m.group(0)), src, flags=re.S)
    errors = []
    for n, line in enumerate(src.splitlines(), 1):
        for pat, what in RAW_OFFSET:
            if pat.search(line):
                errors.append(f"raw offset: {f}:{n}: {what} (a parser of libkring or "
                              f"perf_data reads records)")
    return errors


def nm(obj, *flags):
    out = subprocess.run(["nm", *flags, obj], check=True, capture_output=True, text=True).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def call_edges(objs):
    """{file: {file whose symbols it uses: [symbols]}}; objs: {object: source file}."""
    defs = {}
    for o, f in objs.items():
        for fields in nm(o, "--defined-only"):
            if len(fields) == 3 and fields[1] in "TDRB" and not fields[2].startswith("__"):
                defs.setdefault(fields[2], f)
    edges = {}
    for o, f in sorted(objs.items(), key=lambda x: x[1]):
        uses = edges.setdefault(f, {})
        for fields in nm(o, "--undefined-only"):
            sym = fields[-1]
            g = defs.get(sym)
            if g is not None and g != f:
                uses.setdefault(g, []).append(sym)
    return edges


def check_calls(calls, files):
    """@calls: call_edges()."""
    errors = []
    for f, uses in calls.items():
        layer = files[f][0]
        for g, syms in sorted(uses.items()):
            glayer, table = files[g]
            if glayer > layer and not table:
                errors.append(f"call up: {f} (layer {layer}) uses {g} (layer {glayer}): "
                              + " ".join(sorted(syms)[:5]))
    return errors


def components(edges):
    """The strongly connected components of more than one node of the graph
    @edges ({node: set of nodes}), each sorted: Tarjan's, iteratively."""
    index, low, on, stack, sccs = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        return (v, iter(sorted(edges.get(v, ()))))

    for root in sorted(edges):
        if root in index:
            continue
        work = [visit(root)]
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None and w not in index:
                work.append(visit(w))
            elif w is not None:
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    scc = []
                    while not scc or scc[-1] != v:
                        scc.append(stack.pop())
                        on.discard(scc[-1])
                    if len(scc) > 1:
                        sccs.append(sorted(scc))
    return sorted(sccs)


def shortest_cycle(edges, scc):
    """A shortest cycle from the first node of @scc back to it: [a, ..., a]."""
    start, members = scc[0], set(scc)
    prev, queue = {start: None}, [start]
    for v in queue:
        for w in sorted(edges.get(v, ())):
            if w == start:
                path = [start]
                while v is not None:
                    path.append(v)
                    v = prev[v]
                return path[::-1]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    raise AssertionError(f"no cycle in {scc}")


def check_cycles(files, includes, calls):
    """One line per cycle of the include and call graph of @files: each
    strongly connected component of more than one file, shown by one of
    its shortest cycles. @includes: [(file, included)]; @calls:
    call_edges(). What uses an ops table is no edge: the table is the way
    up (a source's ops call the channel layer that calls them)."""
    edges, why = {}, {}
    for f, c in includes:
        edges.setdefault(f, set()).add(c)
        why.setdefault((f, c), "includes")
    for f, uses in calls.items():
        for g, syms in uses.items():
            if not files[g][1]:
                edges.setdefault(f, set()).add(g)
                why[(f, g)] = "calls " + " ".join(sorted(syms)[:3])
    errors = []
    for scc in components(edges):
        path = shortest_cycle(edges, scc)
        steps = "".join(f" -> {b} ({why[(a, b)]})" for a, b in zip(path, path[1:]))
        more = f" [{len(scc)} files: {' '.join(scc)}]" if len(scc) > len(path) - 1 else ""
        errors.append(f"cycle: {path[0]}{steps}{more}")
    return errors


def print_graph(kind, edges):
    """@edges: {file: [files]}, printed as "file: a b" lines or as dot."""
    if kind == "dot":
        print("digraph kring {")
        for f, to in sorted(edges.items()):
            for g in to:
                print(f'\t"{f}" -> "{g}";')
        print("}")
        return
    for f, to in sorted(edges.items()):
        print(f"{f}:" + "".join(f" {g}" for g in to))


def kmod_objects(build, files):
    objs = {}
    for o in glob.glob(os.path.join(build, "kmod", "**", "*.o"), recursive=True):
        rel = os.path.relpath(o, build)
        src = rel[:-2] + ".c"
        if rel.endswith(".mod.o") or src not in files or not os.path.exists(os.path.join(build, src)):
            continue
        objs[o] = src
    if not objs:
        sys.exit(f"layers.py: no object of kmod/ in {build}")
    return objs


def user_objects(build, files):
    objs = {}
    for d, prefix in (("userlib/CMakeFiles/kring.dir", "userlib/"),
                      ("userlib/perf_data/CMakeFiles/kring_perf_data.dir", "userlib/perf_data/"),
                      ("tools/kring/CMakeFiles/kring_tool.dir", "tools/kring/")):
        base = os.path.join(build, d)
        for o in glob.glob(os.path.join(base, "**", "*.o"), recursive=True):
            src = prefix + os.path.relpath(o, base)[:-2]
            if src in files:
                objs[o] = src
    if not objs:
        sys.exit(f"layers.py: no object of libkring or the tool in {build}")
    return objs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kmod-build", help="a module build directory (build-modules.sh)")
    ap.add_argument("--user-build", help="the user build directory ($KRING_BUILD/user)")
    ap.add_argument("--graph", choices=["includes", "calls", "dot"],
                    help="print a side's graph instead of checking it: its includes "
                         "(\"file: included ...\"), its calls (\"file: used ...\", from "
                         "--kmod-build or --user-build) or its includes for graphviz")
    ap.add_argument("--side", choices=["kmod", "user"], default="kmod",
                    help="the side --graph prints (default kmod)")
    args = ap.parse_args()
    tables = read_tables()
    if args.graph:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # | head
        root = "kmod/" if args.side == "kmod" else "./"
        files = tables[root]
        if args.graph == "calls":
            build = args.kmod_build if args.side == "kmod" else args.user_build
            if not build:
                sys.exit("layers.py: --graph calls needs --kmod-build or --user-build")
            objs = (kmod_objects if args.side == "kmod" else user_objects)(build, files)
            edges = {f: sorted(u) for f, u in call_edges(objs).items()}
        else:
            edges = {f: [] for f in files}
            for f, c in include_edges(root, files):
                edges[f].append(c)
        print_graph(args.graph, edges)
        return 0
    errors = []
    comps = read_components()
    builds = {"kmod/": (args.kmod_build, kmod_objects), "./": (args.user_build, user_objects)}
    for root, files in tables.items():
        errors += covered(root, files)
        errors += check_includes(root, files)
        if root in comps:
            errors += check_components(root, files, comps[root])
        build, objects = builds[root]
        calls = {}
        if build:
            calls = call_edges(objects(build, files))
            errors += check_calls(calls, files)
        errors += check_cycles(files, include_edges(root, files), calls)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

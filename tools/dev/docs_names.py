#!/usr/bin/env python3
"""Every name of kring's own and every path of the tree that the docs cite
exists: a renamed function, a moved file or a removed test that a document
still names is a finding.

Reads README.md and docs/*.md. A name is a backticked token that starts
with kring_ or KRING_ (its identifier up to the first character that
cannot be in one; a trailing * makes it a prefix); it must occur as a whole word in a file git tracks
outside docs/. A path is a backticked token, or a bare word, that starts
with a top-level directory of the tree (kmod/, userlib/, tools/, tests/,
uapi/, docs/, .ci/) and has no placeholder (<...>, *, X., an upper-case
component); it must exist. Exempt: perf's paths in the kernel's tree
(tools/perf/, tools/lib/), build outputs (.ko), and the optimisation
history (docs/PERFORMANCE-HISTORY.md), which names what the code was.
Prints one line per finding (FILE:LINE: what) and exits 1 when there is any.
"""
import os
import re
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TICK = re.compile(r"`([^`\n]+)`")
NAME = re.compile(r"\b((?:kring|KRING)_[A-Za-z0-9_]*[A-Za-z0-9_*])")
PATH = re.compile(r"(?<![\w/.-])((?:kmod|userlib|tools|tests|uapi|docs|\.ci)/[A-Za-z0-9_./+*<>-]*[A-Za-z0-9_*>])")
PLACEHOLDER = re.compile(r"[<>*]|/X\.|/[A-Z]+(/|$)")
# Paths of the kernel's tree (perf's sources), build outputs, and the
# optimisation history, which names what the code was.
FOREIGN = ("tools/perf/", "tools/lib/")
SKIP_DOCS = ("docs/PERFORMANCE-HISTORY.md",)


def tracked_text():
    files = subprocess.run(["git", "ls-files", "-z"], cwd=TOP, check=True,
                           capture_output=True).stdout.decode().split("\0")
    words = set()
    for f in files:
        if not f or f.startswith("docs/") or f.endswith(".md"):
            continue
        p = os.path.join(TOP, f)
        if not os.path.isfile(p) or os.path.getsize(p) > 4 << 20:
            continue
        try:
            with open(p, encoding="utf-8", errors="replace") as fh:
                words.update(re.findall(r"[A-Za-z0-9_]+", fh.read()))
        except OSError:
            continue
    return words


def main():
    docs = ["README.md"] + sorted(
        os.path.join("docs", f) for f in os.listdir(os.path.join(TOP, "docs")) if f.endswith(".md"))
    words = tracked_text()
    findings = []
    for doc in docs:
        if doc in SKIP_DOCS:
            continue
        with open(os.path.join(TOP, doc), encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        for no, line in enumerate(lines, 1):
            for tok in TICK.findall(line):
                for name in NAME.findall(tok):
                    if name.endswith("*"):
                        stem = name.rstrip("*")
                        if any(w.startswith(stem) for w in words):
                            continue
                        name = stem
                    elif name in words:
                        continue
                    findings.append(f"{doc}:{no}: names `{name}`, which no file of the tree defines or uses")
            for path in PATH.findall(line):
                if PLACEHOLDER.search(path) or path.startswith(FOREIGN) or path.endswith(".ko"):
                    continue
                path = path.rstrip(".")
                if not os.path.exists(os.path.join(TOP, path)):
                    findings.append(f"{doc}:{no}: cites {path}, which does not exist")
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())

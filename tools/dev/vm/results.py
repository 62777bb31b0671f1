#!/usr/bin/env python3
"""Turn test output into kring's result lines and summarise them.

  results.py guest LOG PREFIX     GoogleTest and KTAP blocks of a guest console
  results.py junit FILE PREFIX    a ctest --output-junit file
  results.py summary RESULTS      print skips, failures and "N passed, N failed"

Result lines are "PASS name", "FAIL name" or "SKIP name: reason".
"""
import re
import sys
import xml.etree.ElementTree as ET

BEGIN = re.compile(r"^==== KRING-BEGIN (\w+) (\S+)")
END = re.compile(r"^==== KRING-END (\w+) (\S+)(?: rc=(\d+))?")
GTEST_RESULT = re.compile(r"^\[\s*(OK|FAILED|SKIPPED)\s*\] (\S+) \(\d+ ms\)")
GTEST_RUN = re.compile(r"^\[ RUN\s*\] (\S+)")
KTAP_RESULT = re.compile(r"^(\s*)(ok|not ok) \d+ (.*?)\s*(?:#\s*(SKIP.*))?$")
# Console lines may carry a printk timestamp or a trailing CR.
STRIP = re.compile(r"^\[\s*\d+\.\d+\] ")


def blocks(lines):
    """Yield (kind, name, rc, body_lines, complete) for each marked block."""
    cur = None
    for raw in lines:
        line = raw.rstrip("\r\n")
        m = BEGIN.match(line)
        if m:
            if cur:
                yield cur[0], cur[1], None, cur[2], False
            cur = (m.group(1), m.group(2), [])
            continue
        m = END.match(line)
        if m and cur and m.group(2) == cur[1]:
            rc = int(m.group(3)) if m.group(3) is not None else None
            yield cur[0], cur[1], rc, cur[2], True
            cur = None
            continue
        if cur:
            cur[2].append(line)
    if cur:
        yield cur[0], cur[1], None, cur[2], False


def gtest(prefix, name, rc, body, complete):
    out = []
    running = None
    for line in body:
        m = GTEST_RUN.match(line)
        if m:
            running = m.group(1)
            continue
        m = GTEST_RESULT.match(line)
        if not m:
            continue
        status, test = m.groups()
        running = None
        if status == "OK":
            out.append(f"PASS {prefix}/{name}/{test}")
        elif status == "SKIPPED":
            reason = skip_reason(body, test)
            out.append(f"SKIP {prefix}/{name}/{test}: {reason}")
        else:
            out.append(f"FAIL {prefix}/{name}/{test}")
    if running:
        out.append(f"FAIL {prefix}/{name}/{running} (crashed or hung)")
    if not complete:
        out.append(f"FAIL {prefix}/{name} (output incomplete)")
    elif rc and not any(r.startswith("FAIL") for r in out):
        out.append(f"FAIL {prefix}/{name} (exit status {rc})")
    if complete and not out:
        out.append(f"FAIL {prefix}/{name} (ran no test)")
    return out


def skip_reason(body, test):
    """The message GTEST_SKIP() printed for @test, if any."""
    inside = False
    for line in body:
        if line.startswith("[ RUN") and line.endswith(test):
            inside = True
            continue
        if inside:
            if line.startswith("["):
                break
            if line.strip() and not line.startswith("/"):
                return line.strip()
            if "Skipped" in line:
                continue
    return "skipped"


def ktap(prefix, name, body, complete):
    out = []
    prev_indent = None
    for raw in body:
        line = STRIP.sub("", raw)
        m = KTAP_RESULT.match(line)
        if not m:
            continue
        indent = len(m.group(1))
        leaf = prev_indent is None or prev_indent <= indent
        prev_indent = indent
        if indent == 0:
            # The suite's own line closes the block.
            if m.group(2) == "not ok" and not any(r.startswith("FAIL") for r in out):
                out.append(f"FAIL {prefix}/{name} (suite failed)")
            continue
        if not leaf:
            continue
        test = m.group(3).replace(" ", "_")
        if m.group(4):
            out.append(f"SKIP {prefix}/{name}/{test}: {m.group(4)}")
        elif m.group(2) == "ok":
            out.append(f"PASS {prefix}/{name}/{test}")
        else:
            out.append(f"FAIL {prefix}/{name}/{test}")
    if not complete or prev_indent != 0:
        out.append(f"FAIL {prefix}/{name} (KTAP output incomplete)")
    return out


def guest(log, prefix):
    with open(log, errors="replace") as f:
        lines = f.readlines()
    out = []
    for kind, name, rc, body, complete in blocks(lines):
        if kind == "gtest":
            out += gtest(prefix, name, rc, body, complete)
        elif kind == "ktap":
            out += ktap(prefix, name, body, complete)
        elif kind == "step":
            # rc 77 (automake's): skipped, the reason on a line "SKIP: why".
            why = [l[len("SKIP: "):] for l in body if l.startswith("SKIP: ")]
            if rc == 77 and why:
                out.append(f"SKIP {prefix}/{name}: {why[-1]}")
            else:
                out.append(f"{'PASS' if rc == 0 else 'FAIL'} {prefix}/{name}")
    for line in lines:
        line = line.strip()
        if line.startswith("KRING-RESULT "):
            out.append(line[len("KRING-RESULT "):])
    return out


def junit(path, prefix):
    out = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name")
        status = case.get("status", "run")
        if case.find("failure") is not None or case.find("error") is not None or status == "fail":
            out.append(f"FAIL {prefix}/{name}")
        elif case.find("skipped") is not None or status in ("notrun", "disabled"):
            msg = case.find("skipped")
            reason = msg.get("message") if msg is not None and msg.get("message") else "skipped"
            out.append(f"SKIP {prefix}/{name}: {reason}")
        else:
            out.append(f"PASS {prefix}/{name}")
    if not out:
        out.append(f"FAIL {prefix} (ran no test)")
    return out


RUN_TAG = re.compile(r"^(vm/[^/@ ]+)@\d+")


def ever_failed(passed, failed):
    """Tests of repeated runs (vm/K@r/...) that failed at least once:
    {name with the run tag removed: (failures, runs)}, when runs > 1."""
    runs, bad = {}, {}
    for kind, results in (("pass", passed), ("fail", failed)):
        for rest in results:
            name = RUN_TAG.sub(r"\1", rest.split(" (")[0])
            runs[name] = runs.get(name, 0) + 1
            if kind == "fail":
                bad[name] = bad.get(name, 0) + 1
    return {n: (b, runs[n]) for n, b in bad.items() if runs[n] > 1}


def summary(path):
    passed, failed, skipped = [], [], []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            kind, _, rest = line.partition(" ")
            {"PASS": passed, "FAIL": failed, "SKIP": skipped}.get(kind, failed).append(rest or line)
    if skipped:
        print(f"skipped ({len(skipped)}, not counted as passes):")
        for s in skipped:
            print(f"  {s}")
    if failed:
        print(f"failed ({len(failed)}):")
        for s in failed:
            print(f"  {s}")
    repeats = ever_failed(passed, failed)
    if repeats:
        print("failed in some of the repeated runs (REPEAT):")
        for name, (bad, runs) in sorted(repeats.items()):
            print(f"  {name}: failed {bad} of {runs}")
    tail = f", {len(skipped)} skipped" if skipped else ""
    print(f"{len(passed)} passed, {len(failed)} failed{tail}")
    return 1 if failed or not passed else 0


def main(argv):
    if len(argv) == 4 and argv[1] == "guest":
        print("\n".join(guest(argv[2], argv[3])))
    elif len(argv) == 4 and argv[1] == "junit":
        print("\n".join(junit(argv[2], argv[3])))
    elif len(argv) == 3 and argv[1] == "summary":
        return summary(argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

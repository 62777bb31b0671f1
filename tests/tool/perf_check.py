#!/usr/bin/env python3
"""Host half of kring record's tests: Debian's perf reads guest recordings.

    perf_check.py OUTDIR TAG [--symfs DIR]

OUTDIR holds what tools/dev/vm/check-guest.sh left in /kring/out/ (brought
back by run.sh --outdir): *.data files of kring record, pingpong.expect
(tests/tool/pingpong.c's line) and kallsyms (the guest's /proc/kallsyms).
--symfs DIR: a root where perf finds the guest's binaries (kring/busy).
Prints one PASS/FAIL/SKIP line per check, "PASS tool/TAG/<check>" (the
lines check.sh appends to results.txt), and exits 1 if any failed.

Checks, each able to fail:
  perf-script/F, perf-report/F   perf script --show-switch-events and perf
      report --stdio read F with exit status 0 and no line of error or
      warning on stdout or stderr (files with AUX data too: kring keeps
      the AUXTRACE payloads where perf does not stop at them, docs/TOOL.md)
  pingpong-switches   the switches out of the ping-pong's parent that perf
      script shows inside the workload's own window equal its getrusage()
      count: at most S inside [t0, t1], at least S inside [t0_out, t1_out]
      (tests/vm/capture_sched_test.cpp's expectation)
  busy-top-symbol     perf report's first line names busy_hot
  busy-callgraph      busy-g.data (kring record -g): perf report -g caller
      --no-children names busy_hot first, and its call graph holds the
      chain main -> busy_worker -> busy_hot
  aux-snapshots       the triggered recording holds exactly two AUX
      snapshots per AUX ring more than the untriggered one, as perf sees
      them: PERF_RECORD_AUX records with the OVERWRITE flag in perf script
      -D, 3 per ring against 1
  sigint-complete     the recording stopped by SIGINT opens as a complete
      file (perf report --header-only names its data and features)
  busy-pprof          busy-g.pb.gz (kring export --pprof of busy-g.data,
      made in the guest): go tool pprof -traces shows busy_hot called by
      busy_worker called by main in the heaviest stack (skipped without go
      or a pprof export)
  sched-timehist      perf sched timehist on pingpong.data (the kernel's
      sched:sched_switch format, from the recording's tracing data) shows
      exactly as many switches out of the ping-pong's parent as perf script
      shows PERF_RECORD_SWITCH_CPU_WIDE OUT records of it: two record
      types kring writes from the same switches, read by two perf tools
  sched-latency       perf sched latency --pids lists the parent with at
      least 90% of its getrusage() switch count (a latency is measured for
      each switch in after a wakeup: sched:sched_wakeup is recorded too)
      and at most its switches in the whole recording
  sched-map           perf sched map stars the parent's code once per
      switch in: as many as perf script's PERF_RECORD_SWITCH_CPU_WIDE IN
      records of it
  sched-runtime       perf sched latency's Runtime of the parent (the
      sched:sched_stat_runtime samples kring record derives) equals, to
      0.002 ms, the time between its switches in and out on each CPU in
      perf script's PERF_RECORD_SWITCH_CPU_WIDE records
  producer-fields     producer.data (kring record -e sched -e producer,
      kring_example loaded into the producer channel): perf script prints
      exactly the records producer.expect counts as kring:kring_example
      samples, each with the field by name and the value the module wrote
      (total=N), decoded from the format in the recording's tracing data
  events-exec, events-exec-sort, events-faults   events-exec.data (kring
      record -a -e 'irq:*,sched:sched_process_exec' around execs of known
      paths, events-exec.expect): perf script prints each path as the
      decoded filename=, perf report --sort on that field lists each;
      events-faults.data (-e page-faults -c 1) holds page-faults samples.
      Skipped while the module lacks the event source (KRING_FEAT_EVENT)
  pipe-script, pipe-report   busy.pipe (kring record -o -, perf's pipe
      format) fed to perf script -i - and perf report -i - on stdin: no
      complaint, samples shown, busy_hot on top as in busy.data
"""
import os
import re
import shutil
import subprocess
import sys

BAD = re.compile(r"error|warning|failed|invalid|can't|cannot|truncat|out of order|lost",
                 re.IGNORECASE)
SWITCH = re.compile(r"^\s*(.*?)\s+(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+"
                    r"PERF_RECORD_SWITCH_CPU_WIDE (OUT|IN)\b")


def perf(args, stdin=None):
    p = subprocess.run(["perf"] + args, stdin=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, errors="replace")
    return p.returncode, p.stdout, p.stderr


class checker:
    def __init__(self, tag):
        self.tag = tag
        self.failed = 0

    def result(self, ok, name, why=""):
        verdict = "PASS" if ok else "FAIL"
        if not ok:
            self.failed += 1
        print(f"{verdict} tool/{self.tag}/{name}" + (f" ({why})" if why else ""), flush=True)

    def skip(self, name, why):
        print(f"SKIP tool/{self.tag}/{name} ({why})", flush=True)


def bad_lines(rc, out, err, report):
    """The error/warning lines of a perf run (report: only its comment-free
    head, where perf prints its own complaints; the table's symbol names
    could contain any word)."""
    lines = [l for l in err.splitlines() if l.strip() and BAD.search(l)]
    if report:
        lines += [l for l in out.splitlines() if l.startswith(("Warning", "Error"))]
    else:
        lines += [l for l in out.splitlines() if l.startswith(("Warning:", "Error:"))]
    if rc != 0:
        lines.insert(0, f"exit status {rc}")
    return lines


def callgraph_chain(out):
    """The caller-order call graph under perf report's first entry: the
    function names of its lines up to the next entry (perf report -g
    caller --no-children --stdio)."""
    names, started = [], False
    for l in out.splitlines():
        if not l.strip() or l.startswith("#"):
            continue
        if re.match(r"^\s+[\d.]+%\s", l):
            if started:
                break
            started = True
            continue
        if started:
            # "---name" starts the graph, "--12.34%--name" a branch (a
            # caller with more than one callee), "name" the rest.
            m = re.search(r"(?:---|--[\d.]+%--|\s)([A-Za-z_][\w.]*)\s*$", l)
            if m:
                names.append(m.group(1))
    return names


def check_pprof(c, path):
    """go tool pprof reads kring's pprof export: the heaviest stack is
    busy_hot <- busy_worker <- main (-traces lists leaf first)."""
    if not os.path.exists(path):
        c.skip("busy-pprof", "no busy-g.pb.gz: this guest's kring has no pprof support")
        return
    go = shutil.which("go")
    if not go:
        c.skip("busy-pprof", "go is not installed (golang-go; tools/dev/deps.sh)")
        return
    env = dict(os.environ, HOME=os.environ.get("HOME", "/tmp"), GOFLAGS="", GOTOOLCHAIN="local")
    p = subprocess.run([go, "tool", "pprof", "-traces", "-symbolize=none", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       errors="replace", env=env, timeout=300)
    print(p.stdout[:2000])
    best, stacks, cur, weight = None, [], [], 0
    for l in p.stdout.splitlines() + ["-----------"]:
        if l.startswith("-----"):
            if cur:
                stacks.append((weight, cur))
            cur, weight = [], 0
            continue
        m = re.match(r"^\s*([\d.]+)([a-zµ]*)\s+(\S+)", l)
        if m and not cur:
            unit = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0,
                    "hrs": 3600.0}.get(m.group(2), 1.0)
            weight = float(m.group(1)) * unit
            cur = [m.group(3)]
        elif l.strip() and cur and ":" not in l:
            cur.append(l.split()[0])
    if stacks:
        best = max(stacks, key=lambda s: s[0])[1]
    ok = p.returncode == 0 and best is not None and best[:3] == ["busy_hot", "busy_worker",
                                                                  "main"]
    c.result(ok, "busy-pprof",
             f"exit {p.returncode}: {p.stderr.strip()[:200]}" if p.returncode else
             f"heaviest stack: {' <- '.join(best or [])}")


def check_callgraph(c, path, symfs, kallsyms):
    rargs = ["report", "--stdio", "--no-children", "-g", "caller", "-i", path]
    if symfs:
        rargs += ["--symfs", symfs]
    if os.path.exists(kallsyms):
        rargs += ["--kallsyms", kallsyms]
    rc, out, err = perf(rargs)
    print(out[:3000])
    bad = bad_lines(rc, out, err, True)
    top = next((l for l in out.splitlines() if l.strip() and not l.startswith("#")), "")
    chain = callgraph_chain(out)
    want = ["main", "busy_worker", "busy_hot"]
    # In order, not necessarily adjacent (libc's frames come before main).
    it = iter(chain)
    ok = not bad and top.split()[-1:] == ["busy_hot"] and all(w in it for w in want)
    c.result(ok, "busy-callgraph",
             "; ".join(bad[:3]) if bad else f"top line: {top.strip()}; chain: {' -> '.join(chain)}")


def run_time_ns(script, tid):
    """The time @tid ran, from perf script's switch records: each IN on a
    CPU to the next OUT of the same task on that CPU."""
    since, total = {}, 0
    for line in script.splitlines():
        m = SWITCH.match(line)
        if not m or int(m.group(2)) != tid:
            continue
        cpu = int(m.group(3))
        t = int(m.group(4)) * 1000000000 + int(m.group(5).ljust(9, "0"))
        if m.group(6) == "IN":
            since[cpu] = t
        elif cpu in since:
            total += t - since.pop(cpu)
    return total


def switches_in(script, tid):
    """perf script's PERF_RECORD_SWITCH_CPU_WIDE IN records of @tid."""
    return sum(1 for line in script.splitlines()
               if (m := SWITCH.match(line)) and int(m.group(2)) == tid and m.group(6) == "IN")


def check_events(c, outdir, scripts):
    """perf's events through the event source (check-guest.sh record-events,
    skipped there while the module lacks it): perf script prints each exec'd
    path of events-exec.expect as the filename= of
    sched:sched_process_exec, perf report sorts on that field, and
    events-faults.data holds page-faults samples."""
    exp = os.path.join(outdir, "events-exec.expect")
    if "events-exec" not in scripts or not os.path.exists(exp):
        c.skip("events-exec", "no events-exec.data: the guest step needs the event source "
               "(KRING_FEAT_EVENT)")
        return
    want = open(exp).read().split()
    out = scripts["events-exec"]
    seen = [p for p in want if re.search(r"sched:sched_process_exec: filename=" + re.escape(p)
                                         + r" ", out)]
    c.result(want and seen == want, "events-exec",
             f"perf script shows {len(seen)} of {len(want)} exec'd paths: {' '.join(seen)}")
    rc, rep, err = perf(["report", "--stdio", "-i", os.path.join(outdir, "events-exec.data"),
                         "--sort", "sched:sched_process_exec.filename"])
    rows = [l for l in rep.splitlines() if l.strip() and not l.startswith("#")]
    sorted_ok = rc == 0 and all(any(l.rstrip().endswith(" " + p) for l in rows) for p in want)
    c.result(sorted_ok, "events-exec-sort",
             f"perf report --sort sched:sched_process_exec.filename: {len(rows)} rows")
    faults = scripts.get("events-faults", "")
    n = sum(1 for l in faults.splitlines() if " page-faults:" in l)
    c.result(n > 0, "events-faults", f"{n} page-faults samples in perf script")


def check_perf_sched(c, path, tid, want, switches_out, ran_ns, ins):
    """perf sched reads the sched tracepoints kring record wrote."""
    rc, out, err = perf(["sched", "timehist", "-i", path])
    print(out[:1500])
    bad = bad_lines(rc, out, err, False)
    n = sum(1 for l in out.splitlines() if re.search(r"\s\S+\[%d\]\s" % tid, l))
    c.result(not bad and n == switches_out, "sched-timehist",
             "; ".join(bad[:3]) if bad else
             f"{n} timehist lines of tid {tid}, {switches_out} switches out in perf script")
    rc, out, err = perf(["sched", "latency", "--pids", "-i", path])
    print(out[:3000])
    bad = bad_lines(rc, out, err, False)
    got = runtime_ms = None
    for l in out.splitlines():
        m = re.match(r"^\s*\S+:(\d+)\s*\|\s*([\d.]+) ms\s*\|\s*(\d+)\s*\|", l)
        if m and int(m.group(1)) == tid:
            runtime_ms, got = float(m.group(2)), int(m.group(3))
    ok = not bad and got is not None and want * 0.9 <= got <= switches_out + 1
    c.result(ok, "sched-latency",
             "; ".join(bad[:3]) if bad else
             f"tid {tid}: {got} switches in perf sched latency, getrusage {want}, "
             f"{switches_out} switches out recorded")
    # perf sched map: a line per switch, the task switched in starred; the
    # parent's code starred once per switch in.
    rc, out, err = perf(["sched", "map", "-i", path])
    print(out[:1500])
    bad = bad_lines(rc, out, err, False)
    m = re.search(r"(\S+)\s+=> \S*:%d\b" % tid, out)
    code = m.group(1) if m else None
    n = sum(1 for l in out.splitlines() if code and re.search(r"\*%s(\s|$)" % re.escape(code), l))
    c.result(not bad and code is not None and n == ins, "sched-map",
             "; ".join(bad[:3]) if bad else
             f"tid {tid} is {code}: switched in {n} times in perf sched map, {ins} switch-in "
             f"records in perf script")
    # Its Runtime column sums the sched:sched_stat_runtime samples kring
    # derives from the switches: the same sum as the switch records'
    # runs, to the column's rounding (0.001 ms).
    ran_ms = ran_ns / 1e6
    ok = not bad and runtime_ms is not None and ran_ns > 0 and abs(runtime_ms - ran_ms) <= 0.002
    c.result(ok, "sched-runtime",
             "; ".join(bad[:3]) if bad else
             f"tid {tid}: Runtime {runtime_ms} ms in perf sched latency, {ran_ms:.6f} ms "
             f"between its switches in and out in perf script")


def main():
    args = sys.argv[1:]
    symfs = None
    if "--symfs" in args:
        i = args.index("--symfs")
        symfs = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    outdir, tag = args
    c = checker(tag)
    files = sorted(f for f in os.listdir(outdir) if f.endswith(".data"))
    if not files:
        c.result(False, "files", f"no *.data file in {outdir}")
        return 1
    kallsyms = os.path.join(outdir, "kallsyms")
    scripts = {}
    for f in files:
        path = os.path.join(outdir, f)
        name = f[:-len(".data")]
        extra = []
        rc, out, err = perf(["script", "-i", path, "--show-switch-events", "--ns"] + extra)
        bad = bad_lines(rc, out, err, False)
        c.result(not bad and out.strip() != "", f"perf-script/{name}",
                 "; ".join(bad[:3]) if bad else ("no output" if not out.strip() else ""))
        scripts[name] = out
        rargs = ["report", "--stdio", "-i", path] + extra
        if symfs:
            rargs += ["--symfs", symfs]
        if os.path.exists(kallsyms):
            rargs += ["--kallsyms", kallsyms]
        rc, out, err = perf(rargs)
        bad = bad_lines(rc, out, err, True)
        top = next((l for l in out.splitlines() if l.strip() and not l.startswith("#")), "")
        c.result(not bad and top != "", f"perf-report/{name}",
                 "; ".join(bad[:3]) if bad else ("no table" if not top else ""))
        if name == "busy":
            sym = top.split()[-1] if top else ""
            c.result(sym == "busy_hot", "busy-top-symbol", f"top line: {top.strip()}")
        if name == "busy-g":
            check_callgraph(c, path, symfs, kallsyms)
            check_pprof(c, os.path.join(outdir, "busy-g.pb.gz"))
        if name == "sigint":
            rc, out, err = perf(["report", "--header-only", "-i", path])
            ok = rc == 0 and "# cmdline" in out and "# event" in out
            c.result(ok, "sigint-complete",
                     "" if ok else f"perf report --header-only: {err.strip()[:200]}")

    # The busy program streamed (kring record -o -): perf reads it through a
    # pipe as it reads the file, the same top symbol.
    pipe = os.path.join(outdir, "busy.pipe")
    if not os.path.exists(pipe):
        c.result(False, "pipe-report", "no busy.pipe")
    else:
        with open(pipe, "rb") as f:
            rc, out, err = perf(["script", "-i", "-", "--ns"], stdin=f)
        bad = bad_lines(rc, out, err, False)
        c.result(not bad and "cpu-clock" in out, "pipe-script", "; ".join(bad[:3]))
        rargs = ["report", "--stdio", "-i", "-"]
        if symfs:
            rargs += ["--symfs", symfs]
        if os.path.exists(kallsyms):
            rargs += ["--kallsyms", kallsyms]
        with open(pipe, "rb") as f:
            rc, out, err = perf(rargs, stdin=f)
        bad = bad_lines(rc, out, err, True)
        top = next((l for l in out.splitlines() if l.strip() and not l.startswith("#")), "")
        sym = top.split()[-1] if top else ""
        c.result(not bad and sym == "busy_hot", "pipe-report",
                 "; ".join(bad[:3]) if bad else f"top line: {top.strip()}")

    # The ping-pong's switches.
    exp = os.path.join(outdir, "pingpong.expect")
    if "pingpong" not in scripts or not os.path.exists(exp):
        c.result(False, "pingpong-switches", "no pingpong.data or pingpong.expect")
    else:
        e = dict(kv.split("=") for kv in open(exp).read().split()[1:])
        tid, want = int(e["tid"]), int(e["switches"])
        t0_out, t0, t1, t1_out = (int(e[k]) for k in ("t0_out", "t0", "t1", "t1_out"))
        inner = outer = total = 0
        for line in scripts["pingpong"].splitlines():
            m = SWITCH.match(line)
            if not m or m.group(6) != "OUT" or int(m.group(2)) != tid:
                continue
            t = int(m.group(4)) * 1000000000 + int(m.group(5).ljust(9, "0"))
            total += 1
            inner += t0 <= t <= t1
            outer += t0_out <= t <= t1_out
        ok = want > 0 and inner <= want <= outer
        c.result(ok, "pingpong-switches",
                 f"getrusage {want}, perf script {inner} in the window, {outer} around it, "
                 f"{total} in all")
        check_perf_sched(c, os.path.join(outdir, "pingpong.data"), tid, want, total,
                         run_time_ns(scripts["pingpong"], tid),
                         switches_in(scripts["pingpong"], tid))

    # A producer module's records, by field name (kring_example's format).
    exp = os.path.join(outdir, "producer.expect")
    if "producer" not in scripts or not os.path.exists(exp):
        c.result(False, "producer-fields", "no producer.data or producer.expect")
    else:
        e = dict(kv.split("=") for kv in open(exp).read().split())
        want, total = int(e["records"]), e["total"]
        lines = [l for l in scripts["producer"].splitlines() if " kring:kring_example:" in l]
        good = [l for l in lines if l.rstrip().endswith(f" kring:kring_example: total={total}")]
        print("\n".join(lines[:10]))
        ok = want > 0 and len(lines) == want and len(good) == want
        c.result(ok, "producer-fields",
                 f"{len(lines)} kring:kring_example samples, {len(good)} with total={total}, "
                 f"want {want}")

    check_events(c, outdir, scripts)

    # Two snapshots more with SIGUSR2 and the control fifo.
    if not all(os.path.exists(os.path.join(outdir, f))
                                           for f in ("aux-base.data", "aux-trig.data")):
        c.result(False, "aux-snapshots", "no aux-base.data and aux-trig.data")
    else:
        n = {}
        for k in ("aux-base", "aux-trig"):
            rc, out, err = perf(["script", "-D", "-i", os.path.join(outdir, k + ".data")])
            n[k] = sum(1 for l in out.splitlines()
                       if re.search(r"PERF_RECORD_AUX offset: .*flags: 0x2 \[O\]", l))
        ok = n["aux-base"] > 0 and n["aux-trig"] == 3 * n["aux-base"]
        c.result(ok, "aux-snapshots",
                 f"AUX snapshot records: {n['aux-base']} without triggers, {n['aux-trig']} "
                 f"with SIGUSR2 + fifo (want 3x: two more per ring)")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Sort the KCSAN reports of a guest console into kring's and the kernel's.

  kcsan-filter.py LOG

A KCSAN report names the accesses that raced, each followed by its stack,
whose first frame is the function that made the access. A report is
kring's when one of those first frames is in a kring module ([kring],
[kring_kunit], [kring_example]): a race on memory kring's code touches,
to be fixed or annotated. A report whose accesses are all in the kernel
proper (seen: the timekeeping core's seqcount-latch reads in
ktime_get_mono_fast_ns(), which KCSAN_STRICT reports as races of unknown
origin with the timer tick) is the kernel's own, whoever called it.

kring's clock wrappers (kring_clock_ns in kmod/ring_slow.c and its siblings in
kmod/clock.c) make no memory access of their own: each is one call to the
kernel's NMI-safe clock accessor. KCSAN has been seen to attribute that
accessor's seqcount-latch read to the wrapper's frame (the return address
after the call), so a first frame in a wrapper counts as the kernel's.

A report "at unknown origin" (KCSAN saw the value change under a read but
not who wrote it) comes with a stack that KCSAN has been seen to unwind
wrongly: a read of the timekeeping core's latch (tk_fast_mono) shown as
ring_publish() repeated thirty times. With the kernel's System.map
(KRING_SYSTEM_MAP, which run.sh sets for the kernels it built), such a
report on the timekeeping core's data is the kernel's, whatever the stack.

Prints the line numbers (1-based) of the "BUG: KCSAN:" lines of the
kernel's own reports, one per line, for console-check to leave out, and
lists those reports on stderr so they are seen, not hidden.
"""
import os
import re
import sys

BUG = re.compile(r"BUG: KCSAN: ")
ACCESS = re.compile(r"(^|, with )(read|write)( \(marked\))?( \(reordered\))? to 0x[0-9a-f]+ of \d+ bytes by ")
FRAME = re.compile(r"^\s*(\S+\+0x[0-9a-f]+/0x[0-9a-f]+)(\s+\[(\w+)\])?")
END = re.compile(r"^={20,}")
STRIP = re.compile(r"^\[\s*\d+\.\d+\] ")


# kring functions that are a bare call into the kernel's clock accessors.
CLOCK_WRAPPERS = {"kring_clock_ns", "kring_clock_raw", "kring_clock_boot", "kring_clock_local"}


def is_kring(frame, mod):
    """Whether an access's first frame is kring's own code."""
    return bool(mod and mod.startswith("kring")) and frame.split("+")[0] not in CLOCK_WRAPPERS


# The timekeeping core's data, read under its seqcount latch.
TIMEKEEPING = {"tk_fast_mono", "tk_fast_raw", "tk_core", "shadow_timekeeper"}
UNKNOWN = re.compile(r"race at unknown origin, with (read|write)( \(marked\))? to 0x([0-9a-f]+) ")


def load_symbols(path):
    """Sorted [(address, name)] of a System.map's data symbols, or []."""
    syms = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[1] in "dDbBrR":
                    syms.append((int(parts[0], 16), parts[2]))
    except OSError:
        return []
    syms.sort()
    return syms


def symbol_of(syms, addr):
    """The data symbol at or below @addr (within 4 KiB), or None."""
    lo, hi = 0, len(syms)
    while lo < hi:
        mid = (lo + hi) // 2
        if syms[mid][0] <= addr:
            lo = mid + 1
        else:
            hi = mid
    if lo and addr - syms[lo - 1][0] < 4096:
        return syms[lo - 1][1]
    return None


def reports(lines):
    """Yield (bug line index, [(first frame, module or None)], unknown-origin
    address or None) per report."""
    i = 0
    while i < len(lines):
        if not BUG.search(lines[i]):
            i += 1
            continue
        start, frames, unknown = i, [], None
        i += 1
        while i < len(lines) and not END.match(STRIP.sub("", lines[i])):
            text = STRIP.sub("", lines[i])
            u = UNKNOWN.search(text)
            if u:
                unknown = int(u.group(3), 16)
            if ACCESS.search(text) and i + 1 < len(lines):
                m = FRAME.match(STRIP.sub("", lines[i + 1]))
                if m:
                    frames.append((m.group(1), m.group(3)))
            i += 1
        yield start, frames, unknown


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], errors="replace") as f:
        lines = f.read().splitlines()
    syms = load_symbols(os.environ.get("KRING_SYSTEM_MAP", ""))
    for start, frames, unknown in reports(lines):
        ours = any(is_kring(fr, mod) for fr, mod in frames)
        if ours and unknown is not None and symbol_of(syms, unknown) in TIMEKEEPING:
            ours = False
            frames = [(f"{fr} (unwound; the read is of {symbol_of(syms, unknown)})", mod)
                      for fr, mod in frames[:1]]
        # A report without a recognisable access stays a failure.
        if frames and not ours:
            print(start + 1)
            where = " / ".join(fr for fr, _ in frames)
            print(f"kcsan-filter: the kernel's own race, not kring's (line {start + 1}): {where}",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

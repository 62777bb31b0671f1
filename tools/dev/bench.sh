#!/usr/bin/env bash
# `make bench`, in the guest (docs/PERFORMANCE.md): builds kring.ko and
# kring_bench.ko for each kernel, libkring, producer_bench,
# tracepoint_bench, e2e_bench and switch_bench, boots the kernel in QEMU,
# runs kring's producer loop against ftrace's ring buffer there, then one
# tracepoint into ftrace, perf and kring, then the same tracepoint end to
# end into consumers that sleep, then a context switch with another user's
# capture channels enabled (tests/bench/), and prints the tables.
#
#   tools/dev/bench.sh [KERNEL...]        default: stock-6.12
#   BENCH_ARGS="--pairs 15 --count 100000" producer_bench's options (the default)
#   TP_BENCH_ARGS="--pairs 9 --count 100000" tracepoint_bench's (the default)
#   E2E_BENCH_ARGS="--seconds 0.5"         e2e_bench's (the default)
#   SWITCH_BENCH_ARGS="--rounds 2000 --runs 5" switch_bench's (the default)
#
# Logs and the guest output go to $KRING_BUILD/bench/<kernel>-*.
set -euo pipefail
# Variables given to the outer make travel in MAKEFLAGS into every make we
# start: drop them.
unset MAKEFLAGS MAKEOVERRIDES MFLAGS
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KRING_BUILD:-$top/build}
out=$build/bench
args=${BENCH_ARGS:---pairs 15 --count 100000}
tp_args=${TP_BENCH_ARGS:---pairs 9 --count 100000}
e2e_args=${E2E_BENCH_ARGS:---seconds 0.5}
switch_args=${SWITCH_BENCH_ARGS:---rounds 2000 --runs 5}
[ $# -gt 0 ] || set -- stock-6.12
mkdir -p "$out"

echo "==> building user space"
"$top/tools/dev/build-user.sh" producer_bench tracepoint_bench e2e_bench switch_bench >"$out/user-build.log" 2>&1 ||
	{ tail -40 "$out/user-build.log"; exit 1; }
bench=$build/user/tests/bench/producer_bench
tp_bench=$build/user/tests/bench/tracepoint_bench
rc=0
for k in "$@"; do
	echo "==> $k: modules"
	mdir=$("$top/tools/dev/build-modules.sh" "$k" 2>"$out/$k-modules.log") ||
		{ tail -40 "$out/$k-modules.log"; rc=1; continue; }
	if [ ! -f "$mdir/tests/bench/kring_bench.ko" ]; then
		echo "bench.sh: $k has no ftrace ring buffer (CONFIG_RING_BUFFER): no kring_bench.ko" >&2
		rc=1
		continue
	fi
	image=$("$top/tools/dev/vm/kernel.sh" image "$k" 2>>"$out/$k-modules.log") ||
		{ tail -20 "$out/$k-modules.log"; rc=1; continue; }
	printf 'BENCH_ARGS=%q\nTP_BENCH_ARGS=%q\nE2E_BENCH_ARGS=%q\nSWITCH_BENCH_ARGS=%q\n' \
		"$args" "$tp_args" "$e2e_args" "$switch_args" >"$out/$k-env"
	echo "==> $k: guest (producer_bench $args)"
	if ! "$top/tools/dev/vm/run.sh" --image "$image" --script "$top/tools/dev/vm/bench-guest.sh" \
		--log "$out/$k-console.log" --timeout "${KRING_VM_TIMEOUT:-1800}" \
		--file "$mdir/kmod/kring.ko" --file "$mdir/tests/bench/kring_bench.ko" \
		--file "$bench:producer_bench" --file "$tp_bench:tracepoint_bench" \
		--file "$build/user/tests/bench/e2e_bench:e2e_bench" \
		--file "$build/user/tests/bench/switch_bench:switch_bench" \
		--file "$out/$k-env:env"; then
		echo "bench.sh: the guest failed on $k (console: $out/$k-console.log)" >&2
		rc=1
	fi
	# The table and summary lines, without the console's carriage returns.
	sed -n '/==== KRING-BENCH-BEGIN/,/==== KRING-BENCH-END/p' "$out/$k-console.log" |
		tr -d '\r' | tee "$out/$k-results.txt"
done
exit $rc

#!/usr/bin/env bash
# `make demo`: boot a kernel (default: Debian's stock 6.12) in QEMU, load
# kring and show what it does; the recordings the guest makes (60-record.sh,
# 70-profile.sh) come back to the host, where Debian's perf reads them: the
# call graph of a profiled program, a ping-pong's scheduling latencies, and
# where its SVG timeline is.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
k=${1:-stock-6.12}
echo "kring demo: building the module, the tool and fetching the $k kernel..."
ubuild=${KRING_BUILD:-$top/build}/user
mkdir -p "$ubuild"
if ! "$top/tools/dev/build-user.sh" kring_tool kring_busy kring_pingpong \
	>"$ubuild/demo-build.log" 2>&1; then
	tail -40 "$ubuild/demo-build.log" >&2
	echo "kring demo: building the kring tool failed (see $ubuild/demo-build.log)" >&2
	exit 1
fi
mdir=$("$top/tools/dev/build-modules.sh" "$k")
image=$("$top/tools/dev/vm/kernel.sh" image "$k")
log=${KRING_BUILD:-$top/build}/demo-console.log
script=$(mktemp /tmp/kring-demo.XXXXXX.sh)
trap 'rm -f "$script"' EXIT
# The guest script: every tools/dev/demo/NN-*.sh fragment in order, between
# loading and unloading the module.
{
	echo 'echo "==== KRING-DEMO-BEGIN"'
	echo 'echo "\$ insmod kring.ko"'
	echo 'insmod /kring/kring.ko || exit 1'
	cat "$top"/tools/dev/demo/[0-9][0-9]-*.sh
	echo 'echo "\$ rmmod kring"'
	echo 'rmmod kring || exit 1'
	echo 'echo "==== KRING-DEMO-END"'
} >"$script"
echo "kring demo: booting $(basename "$image") under QEMU (console log: $log)"
rc=0
outdir=${KRING_BUILD:-$top/build}/demo-out
rm -rf "$outdir"
"$top/tools/dev/vm/run.sh" --image "$image" --script "$script" --log "$log" --timeout 300 \
	--file "$mdir/kmod/kring.ko" --file "$ubuild/tools/kring/kring" \
	--file "$ubuild/tests/tool/busy:busy" --file "$ubuild/tests/tool/pingpong:pingpong" \
	--outdir "$outdir" || rc=$?
sed -n '/==== KRING-DEMO-BEGIN/,/==== KRING-DEMO-END/p' "$log" | grep -v '^==== KRING-DEMO' |
	grep -v -E '^\[ *[0-9]+\.[0-9]+\]'
# The recordings on the host, in Debian's perf (output into a file first:
# cut short by a pipe, perf would die of SIGPIPE and fail the demo).
perf_show() {
	local what=$1 lines=$2
	shift 2
	echo
	echo "# on the host: $what"
	echo "\$ perf $*"
	if perf "$@" >"$outdir/perf.out" 2>&1; then
		grep -v -e '^#' -e '^$' "$outdir/perf.out" | head -n "$lines"
	else
		cat "$outdir/perf.out"
		echo "kring demo: perf $1 failed" >&2
		rc=1
	fi
}
if [ "$rc" = 0 ] && [ -f "$outdir/busy-g.data" ] && [ -f "$outdir/pingpong.data" ]; then
	if command -v perf >/dev/null; then
		# perf finds the guest's busy under --symfs as /kring/busy.
		mkdir -p "$outdir/symfs/kring"
		cp "$ubuild/tests/tool/busy" "$outdir/symfs/kring/busy"
		perf_show "the profiled program's call graph (kring record -g)" 12 \
			report --stdio --no-children -g caller --symfs "$outdir/symfs" \
			--kallsyms "$outdir/kallsyms" -i "$outdir/busy-g.data"
		perf_show "the ping-pong's scheduling latencies (the kernel's sched tracepoints)" 8 \
			sched latency --pids -i "$outdir/pingpong.data"
	else
		echo "(perf is not installed: tools/dev/deps.sh installs linux-perf)"
	fi
	echo
	echo "# the ping-pong's timeline: open $outdir/pingpong.svg in a browser"
fi
[ "$rc" = 0 ] || echo "kring demo: the guest run failed (see $log)" >&2
exit $rc

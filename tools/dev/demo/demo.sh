#!/usr/bin/env bash
# `make demo`: boot a kernel (default: Debian's stock 6.12) in QEMU, load
# kring and show what it does; the recording the guest makes
# (60-record.sh) comes back to the host, where Debian's perf reports it.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
k=${1:-stock-6.12}
echo "kring demo: building the module, the tool and fetching the $k kernel..."
ubuild=${KRING_BUILD:-$top/build}/user
mkdir -p "$ubuild"
if ! "$top/tools/dev/build-user.sh" kring_tool >"$ubuild/demo-build.log" 2>&1; then
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
	--file "$mdir/kmod/kring.ko" --file "$ubuild/tools/kring/kring" --outdir "$outdir" || rc=$?
sed -n '/==== KRING-DEMO-BEGIN/,/==== KRING-DEMO-END/p' "$log" | grep -v '^==== KRING-DEMO' |
	grep -v -E '^\[ *[0-9]+\.[0-9]+\]'
# The same file on the host, in Debian's perf.
if [ "$rc" = 0 ] && [ -f "$outdir/demo.data" ]; then
	echo
	echo "# on the host: perf report on the guest's recording ($outdir/demo.data)"
	echo "\$ perf report --stdio --kallsyms demo-out/kallsyms -i demo-out/demo.data --sort comm,dso,sym"
	if command -v perf >/dev/null; then
		# Into a file first: cut short by a pipe, perf would die of
		# SIGPIPE and fail the demo (pipefail).
		if perf report --stdio --kallsyms "$outdir/kallsyms" -i "$outdir/demo.data" \
			--sort comm,dso,sym >"$outdir/demo-report.txt" 2>&1; then
			awk 'NF && n++ < 40' "$outdir/demo-report.txt"
		else
			cat "$outdir/demo-report.txt"
			echo "kring demo: perf report failed on $outdir/demo.data" >&2
			rc=1
		fi
	else
		echo "(perf is not installed: tools/dev/deps.sh installs linux-perf)"
	fi
fi
[ "$rc" = 0 ] || echo "kring demo: the guest run failed (see $log)" >&2
exit $rc

#!/usr/bin/env bash
# Whether the emulator survives kernel text patching while both vCPUs run:
# a stock Debian 6.12 guest, no kring in it, toggles the sched tracepoints
# for SECONDS (default 120) under load (text-poke-guest.sh). Exit 0 when
# the console stays clean, 1 with its report otherwise.
#
#   tools/dev/vm/text-poke-check.sh [SECONDS]
#   KRING_VM_QEMU=system tools/dev/vm/text-poke-check.sh   # the system's QEMU
#
# Debian 12's QEMU 7.2 fails it within seconds ("Oops: int3" in
# __schedule or ttwu_do_activate: a stale translation of patched text);
# the QEMU run.sh uses (tools/dev/vm/qemu.sh) passes (docs/TESTING.md).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
secs=${1:-120}
case $secs in '' | *[!0-9]*) echo "text-poke-check.sh: SECONDS must be a number" >&2; exit 2 ;; esac
image=$("$here/kernel.sh" image stock-6.12)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "$secs" >"$work/secs"
log=${KRING_VM_LOG:-$work/console.log}
if "$here/run.sh" --image "$image" --script "$here/text-poke-guest.sh" --file "$work/secs:secs" \
	--log "$log" --timeout $((secs + 300)); then
	grep -a 'text-poke-guest:' "$log"
	echo "text-poke-check: the emulator survived ${secs} s of text patching"
else
	echo "text-poke-check: the guest died${KRING_VM_LOG:+ (console: $log)}" >&2
	exit 1
fi

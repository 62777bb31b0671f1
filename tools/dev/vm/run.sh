#!/usr/bin/env bash
# Boot a kernel under QEMU (TCG) with an initramfs holding busybox, kring's
# modules and test binaries, run a guest script, and report its verdict.
#
#   tools/dev/vm/run.sh --image BZIMAGE --script GUEST.sh --log LOG
#                   [--file SRC[:DEST]]... [--timeout SECONDS] [--shell]
#                   [--mem MIB] [--cpus N] [--outdir DIR]
#
# The image's architecture picks the machine: an x86-64 bzImage boots in
# qemu-system-x86_64 -M pc (console ttyS0), an arm64 Image in
# qemu-system-aarch64 -M virt (console ttyAMA0, the PL011), each with a
# static busybox of its architecture (tools/dev/vm/busybox.sh). Programs
# given to an arm64 guest must be static (tools/dev/build-user.sh --arch
# arm64 builds them so).
#
# --file copies SRC into the guest at /kring/DEST (default: its basename).
# The guest script runs as /kring/run.sh with /proc, /sys, /dev, /tmp and
# debugfs mounted; its exit status is the guest's verdict.
#
# --outdir DIR: what the guest leaves in /kring/out/ comes back into DIR.
# When its script is done, /init sends a tar archive of /kring/out/ in
# base64 between two marker lines on a serial port: the second one (ttyS1,
# written to a file here) on x86-64, the console itself (ttyAMA0) on
# arm64, as -M virt has one UART (the lines are cut out of the console
# log). This script unpacks it into DIR after the guest powered off (an
# archive cut short is an error).
#
# Environment: KRING_VM_CMDLINE adds kernel command-line options;
# KRING_VM_TCG_THREAD=single runs both vCPUs on one host thread (default
# multi: one thread per vCPU, so guest CPUs really run in parallel).
# KRING_VM_QEMU=system runs the system's QEMU instead of the one
# tools/dev/vm/qemu.sh fetches (Debian 12's own has a TCG defect that kills
# x86 guests which patch kernel text: docs/TESTING.md).
#
# Exit status: 0 when the guest script exited 0 and the console shows no
# kernel report; 1 otherwise (offending lines are printed); 2 on a timeout.
# --shell boots the same guest with the console on this terminal and a
# shell after the script.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
image= script= log= timeout=600 shell=0 mem=2048 cpus=2 outdir=
files=()
while [ $# -gt 0 ]; do
	case $1 in
	--image) image=$2; shift 2 ;;
	--script) script=$2; shift 2 ;;
	--log) log=$2; shift 2 ;;
	--file) files+=("$2"); shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--shell) shell=1; shift ;;
	--outdir) outdir=$2; shift 2 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -n "$image" ] && [ -f "$image" ] || { echo "run.sh: no kernel image '$image'" >&2; exit 2; }
[ -n "$script" ] && [ -f "$script" ] || { echo "run.sh: no guest script '$script'" >&2; exit 2; }
[ -n "$log" ] || log=$(mktemp /tmp/kring-vm.XXXXXX.log)

case $(file -L -b "$image") in
*ARM64* | *aarch64*) arch=arm64 ;;
*) arch=amd64 ;;
esac
busybox=$("$here/busybox.sh" "$arch") || exit 2

work=$(mktemp -d /tmp/kring-vm.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,kring,etc,root}
cp "$busybox" "$root/bin/busybox"
for f in "${files[@]}"; do
	src=${f%%:*}
	dest=$(basename "$src")
	[ "$f" != "$src" ] && dest=${f#*:}
	[ -e "$src" ] || { echo "run.sh: no such file $src" >&2; exit 2; }
	mkdir -p "$(dirname "$root/kring/$dest")"
	cp -L "$src" "$root/kring/$dest"
	# A dynamically linked program brings its shared libraries along, at
	# the paths the host's loader found them (the host's architecture only).
	if [ -x "$src" ] && file -L "$src" | grep -q 'dynamically linked'; then
		[ "$arch" = amd64 ] ||
			{ echo "run.sh: $src is dynamically linked; an $arch guest takes static programs" >&2; exit 2; }
		for lib in $(ldd "$src" | grep -o '/[^ ]*'); do
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	fi
done
cp "$script" "$root/kring/run.sh"
install -m 0755 "$here/guest-init" "$root/init"
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "nobody:x:65534:65534:nobody:/:/bin/sh" >>"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
[ "$shell" = 1 ] && touch "$root/kring/.shell"
outport=ttyS1
[ "$arch" = arm64 ] && outport=ttyAMA0
[ -n "$outdir" ] && echo "$outport" >"$root/kring/.outdir"
(cd "$root" && find . | cpio -o -H newc --quiet) >"$work/initramfs.cpio"

# rcu_nocbs: RCU callbacks run late, in kthreads, where the kernel offers
# it (stock kernels): a module unloaded with callbacks pending shows it.
#
# tsc=reliable: under a loaded host the clocksource watchdog sees TCG's TSC
# skew against the HPET, marks it unstable and switches clocksource and
# sched_clock in the middle of a run. TCG's TSC follows the host's
# monotonic clock on every vCPU, so it needs no watchdog.
cmdline="loglevel=5 panic=-1 oops=panic nokaslr rcu_nocbs=0-$((cpus - 1))"
accel=(-accel "tcg,thread=${KRING_VM_TCG_THREAD:-multi}" -smp "$cpus" -m "$mem"
	-kernel "$image" -initrd "$work/initramfs.cpio" -no-reboot)
# The port of --outdir: a second serial port on x86-64 (the console is the
# first); on arm64 the console.
outserial=()
# The QEMU binary (qemu=(...)), its firmware first and its own modules (a
# module of another build aborts it); no sound card wanted, none probed.
qemu_of() {
	local bin
	if [ "${KRING_VM_QEMU:-}" = system ]; then
		qemu=("qemu-system-$1")
		return
	fi
	bin=$("$here/qemu.sh" bin "$1") || exit 2
	export QEMU_MODULE_DIR=${bin%/usr/bin/*}/usr/lib/x86_64-linux-gnu/qemu
	qemu=("$bin" -L "${bin%/usr/bin/*}/usr/share/qemu" -audio none)
}
# no5lvl on a KASAN kernel (its .config next to arch/, as a built kernel
# keeps it): -cpu max offers 5-level paging, and 6.12's identify_cpu()
# zeroes the boot CPU's feature bits with interrupts on, so an interrupt
# in that window sees pgtable_l5_enabled() false and KASAN calls its own
# direct-map accesses wild ("BUG: KASAN: wild-memory-access in
# do_raw_spin_lock" from handle_edge_irq under identify_cpu, before any
# module loads: docs/TESTING.md).
built=$(dirname "$image")/../../..
case $arch in
amd64)
	cmdline="console=ttyS0 $cmdline tsc=reliable"
	grep -q '^CONFIG_KASAN=y' "$built/.config" 2>/dev/null && cmdline+=" no5lvl"
	qemu_of x86_64
	qemu+=(-machine pc -cpu max "${accel[@]}")
	[ -n "$outdir" ] && outserial=(-serial "file:$work/out.serial")
	;;
arm64)
	# -cpu max: the newest architecture TCG emulates (LSE atomics, 4K
	# and 64K granules); pauth-impdef: its cheap pointer-authentication
	# hash, as the architected one costs TCG dearly.
	cmdline="console=ttyAMA0 $cmdline"
	qemu_of aarch64
	qemu+=(-machine virt -cpu max,pauth-impdef=on "${accel[@]}")
	;;
esac
cmdline+=${KRING_VM_CMDLINE:+ $KRING_VM_CMDLINE}

# unpack_outdir: the guest's archive of /kring/out/ into $outdir.
unpack_outdir() {
	[ -n "$outdir" ] || return 0
	mkdir -p "$outdir"
	local s=$work/out.serial
	[ "$arch" = arm64 ] && s=$log
	if ! grep -a -q '^KRING-OUT-END' "$s" 2>/dev/null; then
		echo "run.sh: the guest sent no complete archive of /kring/out (--outdir $outdir)" >&2
		return 1
	fi
	tr -d '\r' <"$s" | sed -n '/^KRING-OUT-BEGIN/,/^KRING-OUT-END/p' | grep -v '^KRING-OUT-' |
		base64 -d | tar -C "$outdir" -xf - || {
		echo "run.sh: the archive of /kring/out did not unpack into $outdir" >&2
		return 1
	}
}

if [ "$shell" = 1 ]; then
	if [ -z "$outdir" ]; then
		exec "${qemu[@]}" -nographic -append "$cmdline" -serial mon:stdio
	fi
	"${qemu[@]}" -nographic -append "$cmdline" -serial mon:stdio "${outserial[@]}"
	unpack_outdir
	exit
fi

# The kernels built here keep their System.map next to arch/: it lets
# console-check name the data a KCSAN report is about (kcsan-filter.py).
[ -f "$built/System.map" ] && export KRING_SYSTEM_MAP=$built/System.map

boot() {
	: >"$log"
	rc=0
	timeout --foreground -k 10 "$timeout" "${qemu[@]}" -display none -monitor none \
		-serial "file:$log" "${outserial[@]}" -append "$cmdline" </dev/null >"$work/qemu.out" 2>&1 || rc=$?
}
boot
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "run.sh: guest timed out after ${timeout}s; console tail:" >&2
	tail -20 "$log" >&2
	exit 2
fi
if [ "$rc" != 0 ]; then
	echo "run.sh: qemu failed ($rc):" >&2
	cat "$work/qemu.out" >&2
	exit 1
fi

status=0
# On arm64 the archive came on the console: unpack it, then cut it out of
# the log, which is left the console's record (the checks below read it).
if [ "$arch" = arm64 ] && [ -n "$outdir" ]; then
	unpack_outdir || status=1
	sed -i '/^KRING-OUT-BEGIN/,/^KRING-OUT-END/d' "$log"
fi
if ! verdict=$(grep -a -o 'KRING-VERDICT rc=[0-9]*' "$log" | tail -1) || [ -z "$verdict" ]; then
	echo "run.sh: the guest ended without a verdict; console tail:" >&2
	tail -20 "$log" >&2
	status=1
elif [ "${verdict#KRING-VERDICT rc=}" != 0 ]; then
	echo "run.sh: guest script failed ($verdict)" >&2
	status=1
fi
if ! "$here/console-check" "$log"; then
	status=1
fi
if [ "$arch" != arm64 ]; then
	unpack_outdir || status=1
fi
exit $status

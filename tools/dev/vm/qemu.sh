#!/usr/bin/env bash
# The QEMU the guests run on: Debian 12's backports (bookworm-backports),
# downloaded into the cache and unpacked there, never installed.
#
#   tools/dev/vm/qemu.sh bin x86_64|aarch64  # qemu-system-ARCH to run; its
#                                            # firmware is in ../share/qemu,
#                                            # its modules in ../lib/*/qemu
#   tools/dev/vm/qemu.sh libs                # the Debian packages of the
#                                            # libraries it links (deps.sh)
#   tools/dev/vm/qemu.sh version
#
# Why not Debian 12's own QEMU (7.2): its multi-threaded TCG keeps stale
# translations of kernel text that another vCPU patches, so a stock kernel
# dies of an "Oops: int3" at a static key or static call site that
# text_poke_bp() has already finished. tools/dev/vm/text-poke-check.sh
# shows it without kring: a stock 6.12 guest toggling the sched
# tracepoints while both vCPUs run dies within seconds on 7.2 and runs
# clean on the backports' QEMU (docs/TESTING.md).
#
# The version is whatever bookworm-backports carries, resolved again at
# most every 30 minutes and kept under $KRING_CACHE/qemu/VERSION; without
# the network, the newest one already unpacked is used, and said so.
# Firmware (SeaBIOS, iPXE) and the libraries come from Debian 12's
# packages (tools/dev/deps.sh installs them).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${KRING_CACHE:-$HOME/.cache/kring}
apt_dir=$cache/apt-bookworm-backports
suite=bookworm-backports
pkgs=(qemu-system-x86 qemu-system-arm qemu-system-common qemu-system-data)

# shellcheck source=tools/dev/vm/debian-apt.sh
. "$here/debian-apt.sh"

die() { echo "qemu.sh: $*" >&2; exit 1; }
log() { echo "qemu.sh: $*" >&2; }

# The version the suite carries now, or nothing without the network.
candidate() {
	debian_apt_refresh "$apt_dir" "$suite" || return 0
	debian_apt "$apt_dir" "$suite" apt-cache policy qemu-system-x86 2>/dev/null |
		awk '/Candidate:/ && $2 != "(none)" { print $2 }'
}

# The unpacked QEMU's folder, downloading and unpacking it if needed.
root() {
	local ver dir tmp p
	ver=$(candidate)
	if [ -z "$ver" ]; then
		dir=$(find "$cache/qemu" -mindepth 1 -maxdepth 1 -exec test -f {}/.unpacked \; -print 2>/dev/null |
			sort -V | tail -1)
		[ -n "$dir" ] || die "cannot reach Debian's $suite for QEMU, and none is cached"
		log "cannot reach Debian's $suite: using the cached QEMU ${dir##*/}"
		echo "$dir"
		return
	fi
	dir=$cache/qemu/${ver//:/_}	# no colon in -L and module paths
	if [ ! -f "$dir/.unpacked" ]; then
		log "downloading and unpacking QEMU $ver from Debian's $suite"
		tmp=$(mktemp -d "$cache/dl.XXXXXX")
		for p in "${pkgs[@]}"; do
			(cd "$tmp" && debian_apt "$apt_dir" "$suite" apt-get download "$p=$ver" >&2) ||
				{ rm -rf "$tmp"; die "cannot download $p=$ver"; }
		done
		rm -rf "$dir" && mkdir -p "$dir"
		for p in "$tmp"/*.deb; do
			dpkg-deb -x "$p" "$dir" || { rm -rf "$tmp" "$dir"; die "cannot unpack ${p##*/}"; }
		done
		# What it links: the libraries' packages, for deps.sh.
		for p in "$tmp"/*.deb; do dpkg-deb -f "$p" Depends; done | tr ',' '\n' |
			sed 's/^ *//; s/[ (].*//' | grep -E '^lib|^zlib' | sort -u >"$dir/libs"
		rm -rf "$tmp"
		touch "$dir/.unpacked"
		# Older versions are dead weight now.
		find "$cache/qemu" -mindepth 1 -maxdepth 1 ! -path "$dir" -exec rm -rf {} + 2>/dev/null || true
	fi
	echo "$dir"
}

case ${1:-} in
bin)
	case ${2:-} in x86_64 | aarch64) ;; *) die "usage: qemu.sh bin x86_64|aarch64" ;; esac
	dir=$(root)
	bin=$dir/usr/bin/qemu-system-$2
	[ -x "$bin" ] || die "no $bin"
	if missing=$(ldd "$bin" 2>&1 | grep 'not found'); then
		die "$bin misses libraries (run tools/dev/deps.sh): $(echo "$missing" | awk '{ print $1 }' | tr '\n' ' ')"
	fi
	echo "$bin"
	;;
libs) cat "$(root)/libs" ;;
version) basename "$(root)" ;;
*) die "usage: qemu.sh bin ARCH | libs | version" ;;
esac

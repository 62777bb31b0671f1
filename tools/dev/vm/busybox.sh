#!/usr/bin/env bash
# Print the path of a static busybox for a guest architecture.
#
#   tools/dev/vm/busybox.sh amd64   # the host's /bin/busybox (busybox-static)
#   tools/dev/vm/busybox.sh arm64   # Debian's busybox-static for arm64
#
# A foreign architecture's busybox is Debian's package of the release the
# host runs, downloaded through an apt state of kring's own under the cache
# (the host's sources, its own lists and architecture: the system's apt
# configuration and dpkg's architectures are never touched), and kept
# there by package version.
set -euo pipefail

cache=${KRING_CACHE:-$HOME/.cache/kring}
die() { echo "busybox.sh: $*" >&2; exit 1; }

static() { file -L "$1" 2>/dev/null | grep -q 'statically linked'; }

arch=${1:-amd64}
case $arch in
amd64)
	static /bin/busybox || die "/bin/busybox is not busybox-static (run tools/dev/deps.sh)"
	echo /bin/busybox
	exit 0
	;;
arm64) ;;
*) die "no busybox for architecture '$arch' (amd64, arm64)" ;;
esac

dir=$cache/apt-$arch
foreign_apt() {
	local tool=$1
	shift
	mkdir -p "$dir/lists/partial" "$dir/archives/partial"
	"$tool" -q -o APT::Architecture="$arch" -o APT::Architectures::="$arch" \
		-o Dir::State::Lists="$dir/lists" -o Dir::State::status=/dev/null \
		-o Dir::Cache="$dir" -o Dir::Cache::archives="$dir/archives" \
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root "$@"
}

stamp=$dir/updated
ver=
if [ -n "$(find "$stamp" -mmin -1440 2>/dev/null)" ] ||
	{ foreign_apt apt-get update >/dev/null 2>&1 && touch "$stamp"; }; then
	ver=$(foreign_apt apt-cache policy busybox-static 2>/dev/null | awk '/Candidate:/ { print $2 }')
	[ "$ver" = "(none)" ] && ver=
fi
if [ -z "$ver" ]; then
	# Offline: the newest one already here.
	bb=$(find "$cache" -maxdepth 3 -path "*/busybox-static-$arch-*/bin/busybox" 2>/dev/null | sort -V | tail -1)
	[ -n "$bb" ] || die "cannot reach Debian for busybox-static:$arch, and none is cached"
	echo "busybox.sh: offline, using ${bb%/bin/busybox}" >&2
	echo "$bb"
	exit 0
fi
out=$cache/busybox/busybox-static-$arch-${ver//:/_}
if [ ! -f "$out/bin/busybox" ]; then
	echo "busybox.sh: downloading busybox-static:$arch ($ver)" >&2
	tmp=$(mktemp -d "$cache/dl.XXXXXX")
	(cd "$tmp" && foreign_apt apt-get download "busybox-static:$arch=$ver" >&2) ||
		{ rm -rf "$tmp"; die "cannot download busybox-static:$arch=$ver"; }
	rm -rf "$out" && mkdir -p "$out.new"
	dpkg-deb -x "$tmp"/busybox-static_*.deb "$out.new"
	rm -rf "$tmp"
	mv "$out.new" "$out"
	find "$cache/busybox" -mindepth 1 -maxdepth 1 -name "busybox-static-$arch-*" ! -path "$out" \
		-exec rm -rf {} + 2>/dev/null || true
fi
static "$out/bin/busybox" || die "$out/bin/busybox is not a static binary"
echo "$out/bin/busybox"

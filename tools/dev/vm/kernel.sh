#!/usr/bin/env bash
# Prepare one kernel of the test matrix and print what callers need.
#
#   tools/dev/vm/kernel.sh kdir  NAME   # directory to build out-of-tree modules against
#   tools/dev/vm/kernel.sh image NAME   # bzImage/vmlinuz to boot
#   tools/dev/vm/kernel.sh release NAME # `uname -r` of that kernel
#   tools/dev/vm/kernel.sh list         # the names below
#   tools/dev/vm/kernel.sh source       # the extracted linux-source-6.12 tree
#
# NAME is one of:
#   stock-6.1   Debian's linux-headers-amd64 / linux-image-amd64 (6.1)
#   stock-6.12  Debian's linux-headers-6.12-amd64 / linux-image-6.12-amd64
#   kunit       tinyconfig + tools/dev/vm/config/kunit.config, from linux-source-6.12
#   debug       kunit + tools/dev/vm/config/debug.config (KASAN, lockdep, UBSAN, ...)
#   kcsan       kunit + tools/dev/vm/config/kcsan.config (KCSAN, strict)
#
# Package versions are resolved through the meta-packages each time, so a
# security update is picked up. Everything fetched or built lives under
# $KRING_CACHE (default ~/.cache/kring), keyed by package version and by a
# hash of the config fragments, compiler and source version.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${KRING_CACHE:-$HOME/.cache/kring}
jobs=${KRING_JOBS:-$(nproc)}
mkdir -p "$cache"

die() { echo "kernel.sh: $*" >&2; exit 1; }
log() { echo "kernel.sh: $*" >&2; }

# Name of the versioned package a meta-package depends on, e.g.
# linux-headers-amd64 -> "linux-headers-6.1.0-56-amd64 6.1.192-2".
resolve_meta() {
	local dep
	dep=$(dpkg-query -W -f='${Depends}' "$1" 2>/dev/null) ||
		die "$1 is not installed (run tools/dev/deps.sh)"
	# "linux-headers-6.1.0-56-amd64 (= 6.1.192-2)"
	dep=${dep%%,*}
	local name=${dep%% *} ver=${dep#*(= }
	ver=${ver%)*}
	echo "$name $ver"
}

stock_meta() {
	case $1 in
	stock-6.1) echo linux-headers-amd64 ;;
	stock-6.12) echo linux-headers-6.12-amd64 ;;
	*) die "unknown stock kernel $1" ;;
	esac
}

stock_release() {
	local hdr ver
	read -r hdr ver < <(resolve_meta "$(stock_meta "$1")")
	echo "${hdr#linux-headers-}"
}

stock_kdir() {
	local rel
	rel=$(stock_release "$1")
	[ -d "/usr/src/linux-headers-$rel" ] || die "headers for $rel missing"
	echo "/usr/src/linux-headers-$rel"
}

stock_image() {
	local hdr ver rel dir
	read -r hdr ver < <(resolve_meta "$(stock_meta "$1")")
	rel=${hdr#linux-headers-}
	dir="$cache/stock/linux-image-$rel-$ver"
	if [ ! -f "$dir/boot/vmlinuz-$rel" ]; then
		log "fetching linux-image-$rel ($ver)"
		local tmp
		tmp=$(mktemp -d "$cache/dl.XXXXXX")
		chmod 0777 "$tmp"	# apt's sandbox user writes the download
		(cd "$tmp" && apt-get download -q "linux-image-$rel=$ver" >&2 ||
			{ apt-get update -q >&2 && apt-get download -q "linux-image-$rel=$ver" >&2; }) ||
			die "cannot download linux-image-$rel=$ver"
		mkdir -p "$dir.new"
		dpkg-deb -x "$tmp"/linux-image-*.deb "$dir.new"
		rm -rf "$tmp" "$dir"
		mv "$dir.new" "$dir"
		# Images of superseded package versions are dead weight now.
		find "$cache/stock" -mindepth 1 -maxdepth 1 -name "linux-image-$(echo "$rel" | cut -d. -f1,2).*" \
			! -path "$dir" -exec rm -rf {} + 2>/dev/null || true
	fi
	echo "$dir/boot/vmlinuz-$rel"
}

src_version() {
	dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null ||
		die "linux-source-6.12 is not installed (run tools/dev/deps.sh)"
}

# Extracted linux-source-6.12, shared by the kunit and debug builds.
source_tree() {
	local ver dir
	ver=$(src_version)
	dir="$cache/src/linux-source-6.12-$ver"
	if [ ! -f "$dir/.extracted" ]; then
		log "extracting linux-source-6.12 ($ver)"
		rm -rf "$dir" && mkdir -p "$dir"
		tar -C "$dir" --strip-components=1 -xf /usr/src/linux-source-6.12.tar.xz
		touch "$dir/.extracted"
	fi
	echo "$dir"
}

fragments() {
	case $1 in
	kunit) echo "$here/config/kunit.config" ;;
	debug) echo "$here/config/kunit.config $here/config/debug.config" ;;
	kcsan) echo "$here/config/kunit.config $here/config/kcsan.config" ;;
	*) die "unknown built kernel $1" ;;
	esac
}

# The options of a kernel's fragments, without their comments: rewording a
# comment does not rebuild a kernel.
options() {
	# shellcheck disable=SC2046
	grep -h -E '^(CONFIG_[A-Za-z0-9_]+=|# CONFIG_[A-Za-z0-9_]+ is not set)' $(fragments "$1")
}

built_dir() {
	local key
	key=$( { src_version; gcc --version | head -1; options "$1"; } |
		sha256sum | cut -c1-12)
	echo "$cache/build/$1-$key"
}

build_kernel() {
	local name=$1 out src frag
	out=$(built_dir "$name")
	[ -f "$out/.built" ] && { echo "$out"; return; }
	src=$(source_tree)
	log "building the $name kernel in $out (a few minutes)"
	rm -rf "$out" && mkdir -p "$out"
	make -s -C "$src" O="$out" tinyconfig >&2
	# shellcheck disable=SC2046
	(cd "$out" && "$src/scripts/kconfig/merge_config.sh" -m -O "$out" .config \
		$(fragments "$name") >/dev/null)
	make -s -C "$src" O="$out" olddefconfig >&2
	# Every option the fragments ask for must have survived olddefconfig.
	local missing=0 line opt
	# shellcheck disable=SC2046
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) grep -qx -- "$line" "$out/.config" || { log "not set: $line"; missing=1; } ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }; opt=${opt%% *}
			grep -q "^$opt=" "$out/.config" && { log "should be off: $opt"; missing=1; } ;;
		esac
	done < <(cat $(fragments "$name"))
	[ "$missing" = 0 ] || die "config fragment for $name did not apply"
	make -C "$src" O="$out" -j"$jobs" bzImage modules >"$out/build.log" 2>&1 ||
		{ tail -30 "$out/build.log" >&2; die "$name kernel build failed"; }
	touch "$out/.built"
	# Builds for older keys of this kernel are dead weight now.
	find "$cache/build" -mindepth 1 -maxdepth 1 -name "$name-*" ! -path "$out" \
		-exec rm -rf {} + 2>/dev/null || true
	echo "$out"
}

cmd=${1:-}
name=${2:-}
case $cmd in
list) echo "stock-6.1 stock-6.12 kunit debug kcsan" ;;
source) source_tree ;;
kdir)
	case $name in
	stock-*) stock_kdir "$name" ;;
	kunit | debug | kcsan) build_kernel "$name" ;;
	*) die "unknown kernel '$name' (try: $0 list)" ;;
	esac ;;
image)
	case $name in
	stock-*) stock_image "$name" ;;
	kunit | debug | kcsan) echo "$(build_kernel "$name")/arch/x86/boot/bzImage" ;;
	*) die "unknown kernel '$name' (try: $0 list)" ;;
	esac ;;
release)
	case $name in
	stock-*) stock_release "$name" ;;
	kunit | debug | kcsan) cat "$(build_kernel "$name")/include/config/kernel.release" ;;
	*) die "unknown kernel '$name' (try: $0 list)" ;;
	esac ;;
*) die "usage: $0 {kdir|image|release} NAME | list" ;;
esac

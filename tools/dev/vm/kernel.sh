#!/usr/bin/env bash
# Prepare one kernel of the test matrix and print what callers need.
#
#   tools/dev/vm/kernel.sh kdir  NAME   # directory to build out-of-tree modules against
#   tools/dev/vm/kernel.sh image NAME   # bzImage/vmlinuz to boot
#   tools/dev/vm/kernel.sh release NAME # `uname -r` of that kernel
#   tools/dev/vm/kernel.sh list         # the names below
#   tools/dev/vm/kernel.sh make-args NAME # make variables for modules built
#                                       # against NAME (ARCH=, CROSS_COMPILE=)
#   tools/dev/vm/kernel.sh arch NAME    # its Debian architecture: amd64, arm64
#   tools/dev/vm/kernel.sh source [SERIES] # an extracted source tree:
#                                       # 6.12 (default) or newest
#   tools/dev/vm/kernel.sh prepared NAME # a built kernel's tree configured
#                                       # and prepared for module builds
#                                       # only (make modules_prepare), or
#                                       # the built tree when there is one
#
# NAME is one of:
#   stock-6.1   Debian's linux-headers-amd64 / linux-image-amd64 (6.1)
#   stock-6.12  Debian's linux-headers-6.12-amd64 / linux-image-6.12-amd64
#   stock-6.12-rt  Debian's linux-headers-6.12-rt-amd64 / linux-image-6.12-rt-amd64
#               (PREEMPT_RT)
#   kunit       tinyconfig + tools/dev/vm/config/kunit.config, from linux-source-6.12
#   kcsan       kunit + tools/dev/vm/config/kcsan.config (KCSAN, strict), from 6.12
#   debug       kunit + tools/dev/vm/config/debug.config (KASAN, lockdep, UBSAN,
#               raw lock nesting, ...), from 6.12
#   rt-debug    debug + tools/dev/vm/config/rt.config: PREEMPT_RT instead of
#               PREEMPT, from 6.12
#   kunit-newest, debug-newest
#               kunit and debug from the newest Debian kernel source
#   arm64-4k, arm64-64k
#               kunit for arm64 (qemu-system-aarch64 -M virt) with 4 KiB
#               or 64 KiB pages, cross-built from linux-source-6.12
#               (gcc-aarch64-linux-gnu)
#
# "The newest Debian kernel source" is the highest linux-source-X.Y that
# Debian unstable carries, found and downloaded through an apt state of
# kring's own under the cache (the system's apt configuration is never
# touched), resolved again on every run: a new kernel that breaks kring is
# a defect to fix, not a version to pin. Without the network, the newest
# tree already extracted is used, and said so.
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

# shellcheck source=tools/dev/vm/debian-apt.sh
. "$here/debian-apt.sh"

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
	stock-6.12-rt) echo linux-headers-6.12-rt-amd64 ;;
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
		# Images of superseded package versions of this series and
		# flavour (amd64, rt-amd64) are dead weight now.
		find "$cache/stock" -mindepth 1 -maxdepth 1 \
			-name "linux-image-$(echo "$rel" | cut -d. -f1,2).*[0-9]-${rel##*[0-9]-}-*" \
			! -path "$dir" -exec rm -rf {} + 2>/dev/null || true
	fi
	echo "$dir/boot/vmlinuz-$rel"
}

# The series a built kernel is made from: 6.12 or newest.
series_of() {
	case $1 in
	kunit | kcsan | debug | rt-debug | arm64-4k | arm64-64k) echo 6.12 ;;
	kunit-newest | debug-newest) echo newest ;;
	*) die "unknown built kernel $1" ;;
	esac
}

# apt-get/apt-cache on Debian unstable's package lists (debian-apt.sh).
unstable_apt() {
	debian_apt "$cache/apt-unstable" unstable "$@"
}

# "linux-source-X.Y VERSION" of the newest kernel source unstable carries.
newest_package() {
	local pkg ver
	debian_apt_refresh "$cache/apt-unstable" unstable || return 1
	pkg=$(unstable_apt apt-cache search --names-only '^linux-source-[0-9]+\.[0-9]+$' 2>/dev/null |
		awk '{ print $1 }' | sort -V | tail -1)
	[ -n "$pkg" ] || return 1
	ver=$(unstable_apt apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2 }')
	[ -n "$ver" ] && [ "$ver" != "(none)" ] || return 1
	echo "$pkg $ver"
}

newest_source_tree() {
	local pkg ver dir tmp
	if read -r pkg ver < <(newest_package); then
		dir="$cache/src/$pkg-$ver"
		if [ ! -f "$dir/.extracted" ]; then
			log "downloading and extracting $pkg ($ver) from Debian unstable"
			tmp=$(mktemp -d "$cache/dl.XXXXXX")
			(cd "$tmp" && unstable_apt apt-get download "$pkg=$ver" >&2) ||
				{ rm -rf "$tmp"; die "cannot download $pkg=$ver"; }
			rm -rf "$dir" && mkdir -p "$dir"
			dpkg-deb --fsys-tarfile "$tmp"/"$pkg"_*.deb |
				tar -xO "./usr/src/$pkg.tar.xz" |
				tar -C "$dir" --strip-components=1 -xJf - ||
				{ rm -rf "$tmp" "$dir"; die "cannot extract $pkg=$ver"; }
			rm -rf "$tmp"
			touch "$dir/.extracted"
			# Older versions of the newest series, and older series, are
			# dead weight now (6.12's tree is linux-source-6.12's, kept).
			find "$cache/src" -mindepth 1 -maxdepth 1 -name 'linux-source-*' \
				! -path "$dir" ! -name "linux-source-6.12-$(src_version)" \
				-exec rm -rf {} + 2>/dev/null || true
		fi
	else
		dir=$(find "$cache/src" -mindepth 1 -maxdepth 1 -name 'linux-source-*' \
			! -name 'linux-source-6.12-*' -exec test -f {}/.extracted \; -print 2>/dev/null |
			sort -V | tail -1)
		[ -n "$dir" ] || die "cannot reach Debian unstable for the newest kernel source, and none is cached"
		log "cannot reach Debian unstable: using the cached ${dir##*/}"
	fi
	echo "$dir"
}

src_version() {
	dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null ||
		die "linux-source-6.12 is not installed (run tools/dev/deps.sh)"
}

# An extracted kernel source tree of a series: 6.12 (the installed
# linux-source-6.12, shared by the kunit and kcsan builds) or newest.
source_tree() {
	local ver dir
	case ${1:-6.12} in
	newest) newest_source_tree; return ;;
	6.12) ;;
	*) die "unknown source series $1" ;;
	esac
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
	local c=$here/config
	case $1 in
	kunit | kunit-newest) echo "$c/kunit.config $c/x86.config" ;;
	debug | debug-newest) echo "$c/kunit.config $c/x86.config $c/debug.config" ;;
	rt-debug) echo "$c/kunit.config $c/x86.config $c/debug.config $c/rt.config" ;;
	kcsan) echo "$c/kunit.config $c/x86.config $c/kcsan.config" ;;
	arm64-4k | arm64-64k) echo "$c/kunit.config $c/arm64.config $c/$1.config" ;;
	*) die "unknown built kernel $1" ;;
	esac
}

# A kernel's Debian architecture (the guest's programs are built for it).
arch_of() {
	case $1 in
	arm64-*) echo arm64 ;;
	*) echo amd64 ;;
	esac
}

# The make variables of a kernel's architecture: for the kernel's own
# build and for every module built against it (kernel.sh make-args).
make_args() {
	[ "$(arch_of "$1")" = arm64 ] && echo "ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-"
	return 0
}

# The compiler a kernel is built with (a part of its build's key).
compiler() {
	case $(arch_of "$1") in
	arm64) aarch64-linux-gnu-gcc --version | head -1 ;;
	*) gcc --version | head -1 ;;
	esac
}

# Where a built kernel's bootable image is.
image_path() {
	case $(arch_of "$1") in
	arm64) echo arch/arm64/boot/Image ;;
	*) echo arch/x86/boot/bzImage ;;
	esac
}

# The options of a kernel's fragments, without their comments: rewording a
# comment does not rebuild a kernel.
options() {
	# shellcheck disable=SC2046
	grep -h -E '^(CONFIG_[A-Za-z0-9_]+=|# CONFIG_[A-Za-z0-9_]+ is not set)' $(fragments "$1")
}

# The last line each option has in a kernel's fragments, in order.
requests() {
	options "$1" | awk '{ o = $0; sub(/^# /, "", o); sub(/[= ].*/, "", o)
		if (!(o in line)) order[n++] = o; line[o] = $0 }
		END { for (i = 0; i < n; i++) print line[order[i]] }'
}

keyglob='[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'

built_dir() {
	local key src
	src=$(source_tree "$(series_of "$1")")
	key=$( { source_key "$src"; compiler "$1"; options "$1"; } |
		sha256sum | cut -c1-12)
	echo "$cache/build/$1-$key"
}

# What names a source tree's version in a build's key: 6.12's is the
# installed package's version (as it always was), another's its directory.
source_key() {
	case ${1##*/} in
	linux-source-6.12-*) src_version ;;
	*) echo "${1##*/}" ;;
	esac
}

# Configure a built kernel's tree in $2 from the source $3: tinyconfig,
# the fragments, olddefconfig, and every requested option checked.
configure_kernel() {
	local name=$1 out=$2 src=$3 arch
	arch=$(make_args "$name")
	# shellcheck disable=SC2086
	make -s -C "$src" O="$out" $arch tinyconfig >&2
	# shellcheck disable=SC2046,SC2086
	(cd "$out" && env $arch "$src/scripts/kconfig/merge_config.sh" -m -O "$out" .config \
		$(fragments "$name") >/dev/null)
	# shellcheck disable=SC2086
	make -s -C "$src" O="$out" $arch olddefconfig >&2
	# Every option the fragments ask for must have survived olddefconfig.
	# A later fragment overrides an earlier one (rt.config turns off
	# debug.config's PREEMPT), as merge_config.sh does: the last line on
	# an option is the request.
	local missing=0 line opt
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) grep -qx -- "$line" "$out/.config" || { log "not set: $line"; missing=1; } ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }; opt=${opt%% *}
			grep -q "^$opt=" "$out/.config" && { log "should be off: $opt"; missing=1; } ;;
		esac
	done < <(requests "$name")
	[ "$missing" = 0 ] || die "config fragment for $name did not apply"
}

build_kernel() {
	local name=$1 out src
	out=$(built_dir "$name")
	[ -f "$out/.built" ] && { echo "$out"; return; }
	src=$(source_tree "$(series_of "$name")")
	log "building the $name kernel (${src##*/}) in $out (a few minutes)"
	rm -rf "$out" && mkdir -p "$out"
	configure_kernel "$name" "$out" "$src"
	# shellcheck disable=SC2046
	make -C "$src" O="$out" $(make_args "$name") -j"$jobs" "$(basename "$(image_path "$name")")" modules \
		>"$out/build.log" 2>&1 ||
		{ tail -30 "$out/build.log" >&2; die "$name kernel build failed"; }
	touch "$out/.built"
	# Builds for older keys of this kernel are dead weight now.
	# (The key is 12 hex digits: debug-* must not match debug-newest-*.)
	find "$cache/build" -mindepth 1 -maxdepth 1 \( -name "$name-$keyglob" -o -name "prepared-$name-$keyglob" \) \
		! -path "$out" -exec rm -rf {} + 2>/dev/null || true
	echo "$out"
}

# A tree to build modules against without building the kernel: the built
# one when it exists, else one configured like it and prepared
# (modules_prepare: no vmlinux, so no Module.symvers of the kernel's).
prepared_kernel() {
	local name=$1 built out src
	built=$(built_dir "$name")
	[ -f "$built/.built" ] && { echo "$built"; return; }
	out=$(dirname "$built")/prepared-$(basename "$built")
	[ -f "$out/.prepared" ] && { echo "$out"; return; }
	src=$(source_tree "$(series_of "$name")")
	log "preparing the $name kernel tree (${src##*/}) in $out"
	rm -rf "$out" && mkdir -p "$out"
	configure_kernel "$name" "$out" "$src"
	# shellcheck disable=SC2046
	make -C "$src" O="$out" $(make_args "$name") -j"$jobs" modules_prepare >"$out/build.log" 2>&1 ||
		{ tail -30 "$out/build.log" >&2; die "$name kernel tree preparation failed"; }
	touch "$out/.prepared"
	find "$cache/build" -mindepth 1 -maxdepth 1 -name "prepared-$name-$keyglob" ! -path "$out" \
		-exec rm -rf {} + 2>/dev/null || true
	echo "$out"
}

stock_kernels="stock-6.1 stock-6.12 stock-6.12-rt"
built_kernels="kunit kcsan debug rt-debug kunit-newest debug-newest arm64-4k arm64-64k"

# stock or built: how kernel NAME is had.
kind() {
	case " $stock_kernels " in *" $1 "*) echo stock; return ;; esac
	case " $built_kernels " in *" $1 "*) echo built; return ;; esac
	die "unknown kernel '$1' (try: $0 list)"
}

cmd=${1:-}
name=${2:-}
case $cmd in
list) echo "$stock_kernels $built_kernels" ;;
make-args) make_args "$name" ;;
arch) kind "$name" >/dev/null && arch_of "$name" ;;
source) source_tree "${2:-6.12}" ;;
prepared | kdir | image | release)
	k=$(kind "$name")
	case $cmd:$k in
	prepared:stock | kdir:stock) stock_kdir "$name" ;;
	image:stock) stock_image "$name" ;;
	release:stock) stock_release "$name" ;;
	prepared:built) prepared_kernel "$name" ;;
	kdir:built) build_kernel "$name" ;;
	image:built) echo "$(build_kernel "$name")/$(image_path "$name")" ;;
	release:built) cat "$(build_kernel "$name")/include/config/kernel.release" ;;
	esac ;;
*) die "usage: $0 {kdir|prepared|image|release|make-args|arch} NAME | source [SERIES] | list" ;;
esac

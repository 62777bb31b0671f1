#!/usr/bin/env bash
# The producer SDK, the way a driver outside this tree uses it, for one
# kernel of the matrix:
#   1. dkms.conf: valid shell with the variables dkms needs, its version
#      the project's, and its MAKE[0] builds kring.ko in a copy of the
#      tree (as dkms does in /var/lib/dkms/kring/<version>/build);
#   2. make install DESTDIR=<tmp> in that copy: kring.ko through the
#      kernel's modules_install, the headers and Module.symvers;
#   3. kmod/examples/ copied elsewhere and built with its own Makefile
#      against <tmp> only (KRING_SDK, KBUILD_EXTRA_SYMBOLS), W=1 -Werror.
#
#   tests/sdk/sdk_test.sh NAME OUT   -> OUT/kring_example.ko, the module the
#                                       guest tests load
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
name=${1:?usage: sdk_test.sh NAME OUT}
out=${2:?usage: sdk_test.sh NAME OUT}
kdir=$("$top/tools/dev/vm/kernel.sh" kdir "$name")
unset MAKEFLAGS MAKEOVERRIDES MFLAGS
# A foreign architecture's ARCH= and CROSS_COMPILE=, in the environment as
# a cross-building dkms has them: every make below reads them there.
for a in $("$top/tools/dev/vm/kernel.sh" make-args "$name"); do
	export "${a?}"
done
rm -rf "$out" && mkdir -p "$out"
fail() { echo "sdk_test.sh: $name: $*" >&2; exit 1; }

# 1. dkms.conf, read as dkms reads it (sourced by bash, in a subshell).
bash -n "$top/dkms.conf" || fail "dkms.conf is not valid shell"
src=$out/dkms/kring/build
mkdir -p "$src/tests"
cp -r "$top/Makefile" "$top/Kbuild" "$top/dkms.conf" "$top/kmod" "$top/uapi" "$src/"
cp -r "$top/tests/kunit" "$src/tests/"
find "$src" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' \) -delete
version=$(sed -n 's/^project(kring VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
(
	# What dkms sets before it sources dkms.conf (read there, not here).
	# shellcheck disable=SC2034
	kernel_source_dir=$kdir
	# shellcheck disable=SC2034
	kernelver=$(awk -F'"' '/UTS_RELEASE/ { print $2 }' "$kdir/include/generated/utsrelease.h")
	# shellcheck source=/dev/null
	. "$src/dkms.conf"
	[ "$PACKAGE_NAME" = kring ] || fail "dkms.conf: PACKAGE_NAME=$PACKAGE_NAME"
	[ "$PACKAGE_VERSION" = "$version" ] ||
		fail "dkms.conf: PACKAGE_VERSION=$PACKAGE_VERSION, CMakeLists.txt says $version"
	[ -n "${DEST_MODULE_LOCATION[0]:-}" ] || fail "dkms.conf: no DEST_MODULE_LOCATION[0]"
	[ -n "${MAKE[0]:-}" ] || fail "dkms.conf: no MAKE[0]"
	cd "$src"
	eval "${MAKE[0]} -j$(nproc)" >"$out/dkms-build.log" 2>&1 ||
		{ cat "$out/dkms-build.log" >&2; fail "dkms.conf: MAKE[0] failed"; }
	ko=$src/${BUILT_MODULE_LOCATION[0]}${BUILT_MODULE_NAME[0]}.ko
	[ -f "$ko" ] || fail "dkms.conf: MAKE[0] built no $ko"
	[ ! -e "$src/tests/kunit/kring_kunit.ko" ] || fail "dkms.conf: MAKE[0] built the KUnit suites"
)

# 2. make install into a staging root (nothing is rebuilt).
dest=$out/root
make -C "$src" KDIR="$kdir" DESTDIR="$dest" install >"$out/install.log" 2>&1 ||
	{ cat "$out/install.log" >&2; fail "make install failed"; }
release=$(awk -F'"' '/UTS_RELEASE/ { print $2 }' "$kdir/include/generated/utsrelease.h")
sdk=$dest/usr/local
for f in include/kring/producer.h include/kring/output.h include/linux/kring.h \
	"lib/kring/$release/Module.symvers"; do
	[ -f "$sdk/$f" ] || fail "make install: no $f"
done
ls "$dest/lib/modules/$release/updates/kmod/"kring.ko* >/dev/null 2>&1 ||
	fail "make install: no kring.ko under /lib/modules/$release/updates/kmod"
grep -q '__kring_channel_get' "$sdk/lib/kring/$release/Module.symvers" ||
	fail "make install: Module.symvers lacks the producer API"
# The public headers stand alone: nothing of kmod/ but themselves.
if grep -n '#include "' "$sdk"/include/kring/*.h; then
	fail "installed headers include private headers"
fi

# 3. The example, outside the tree, from the installed SDK alone.
ex=$out/example
cp -r "$top/kmod/examples" "$ex"
find "$ex" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' \) -delete
make -C "$ex" KDIR="$kdir" KRING_SDK="$sdk" W=1 -j"$(nproc)" >"$out/example-build.log" 2>&1 ||
	{ cat "$out/example-build.log" >&2; fail "example build failed"; }
if grep -E -i 'warning:' "$out/example-build.log" >&2; then
	fail "warnings building the example"
fi
cp "$ex/kring_example.ko" "$out/kring_example.ko"
echo "$name: dkms.conf builds kring.ko; make install gives the module, headers and Module.symvers; kmod/examples built from the installed SDK" >&2
echo "$out/kring_example.ko"

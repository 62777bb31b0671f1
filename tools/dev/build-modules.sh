#!/usr/bin/env bash
# Build kring.ko (and, where the kernel has KUnit, kring_kunit.ko; where it
# has ftrace's ring buffer, kring_bench.ko) for one kernel of the matrix,
# with W=1 and -Werror, in a copy of the sources so that builds for
# different kernels never share objects.
#   tools/dev/build-modules.sh NAME   -> prints the build directory
# With KRING_PREPARED=1 (make check-build) a built kernel's tree is only
# configured and prepared, not built (kernel.sh prepared): modpost cannot
# resolve the kernel's symbols there, and only those warnings are allowed.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
name=${1:?usage: build-modules.sh NAME}
out=${KRING_BUILD:-$top/build}/mod/$name
prepared=${KRING_PREPARED:-0}
modpost=()
if [ "$prepared" = 1 ]; then
	kdir=$("$top/tools/dev/vm/kernel.sh" prepared "$name")
	[ -f "$kdir/Module.symvers" ] || { out=$out-prepared; modpost=(KBUILD_MODPOST_WARN=1); }
else
	kdir=$("$top/tools/dev/vm/kernel.sh" kdir "$name")
fi
# The kernel's architecture (ARCH=, CROSS_COMPILE= for arm64), if not the host's.
read -r -a arch < <("$top/tools/dev/vm/kernel.sh" make-args "$name"; echo)
mkdir -p "$out"
rsync -a --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' \
	"$top/Kbuild" "$top/kmod" "$top/uapi" "$top/tests" "$out/"
# Only the module sources matter here: the KUnit suites and what they share
# (tests/common/test_record.h), the benchmark module (tests/bench/); drop
# the user-space test trees.
find "$out/tests" -mindepth 1 -maxdepth 1 ! -name kunit ! -name common ! -name bench -exec rm -rf {} +
if ! make -C "$kdir" M="$out" "${arch[@]}" W=1 -j"$(nproc)" "${modpost[@]}" modules >"$out/build.log" 2>&1; then
	cat "$out/build.log" >&2
	echo "build-modules.sh: module build failed for $name" >&2
	exit 1
fi
# W=1 warnings are errors through -Werror; anything else Kbuild printed
# as a warning (modpost, objtool) fails the build too.
# In a prepared tree, modpost's unresolved kernel symbols are expected.
if grep -E -i 'warning:' "$out/build.log" |
	{ if [ ${#modpost[@]} -gt 0 ]; then grep -v -E 'modpost: (".*" \[.*\] undefined!|suppressed [0-9]+ unresolved symbol warnings)|WARNING: .*Module.symvers is missing'; else cat; fi; } |
	grep . >&2; then
	echo "build-modules.sh: warnings building for $name" >&2
	exit 1
fi
echo "$out"

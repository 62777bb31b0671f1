#!/usr/bin/env bash
# `make check-build`: build kring (kring.ko, the KUnit suites, the benchmark
# module and the SDK example) against every kernel the project can get
# without booting one, W=1 -Werror, so that a compile break shows in
# minutes. Built kernels (kcsan, debug, ...) are only configured and
# prepared here unless their full build is already cached.
#
#   KERNELS="stock-6.1 stock-6.12 ..."   the kernels (default: all of them)
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KRING_BUILD:-$top/build}
kernels=${KERNELS:-stock-6.1 stock-6.12 stock-6.12-rt debug debug-newest arm64-4k arm64-64k}
out=$build/check-build
rm -rf "$out" && mkdir -p "$out"
unset MAKEFLAGS MAKEOVERRIDES MFLAGS
start=$(date +%s)
pass=0 fail=0
result() {
	echo "$1 $2"
	if [ "$1" = PASS ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}

for k in $kernels; do
	t0=$(date +%s)
	if ! mdir=$(KRING_PREPARED=1 "$top/tools/dev/build-modules.sh" "$k" 2>"$out/$k.log"); then
		tail -30 "$out/$k.log"
		result FAIL "check-build/$k (see $out/$k.log)"
		continue
	fi
	kdir=$("$top/tools/dev/vm/kernel.sh" prepared "$k" 2>/dev/null)
	# The example against the SDK headers and this build's Module.symvers,
	# as tests/sdk/sdk_test.sh builds it from an installed SDK.
	sdk=$out/$k-sdk ex=$out/$k-example
	mkdir -p "$sdk/include/kring" "$sdk/include/linux"
	cp "$top"/kmod/include/kring/*.h "$sdk/include/kring/"
	cp "$top/uapi/linux/kring.h" "$sdk/include/linux/"
	cp -r "$top/kmod/examples" "$ex"
	find "$ex" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' \) -delete
	modpost=()
	[ -f "$kdir/Module.symvers" ] || modpost=(KBUILD_MODPOST_WARN=1)
	read -r -a arch < <("$top/tools/dev/vm/kernel.sh" make-args "$k"; echo)
	if ! make -C "$kdir" M="$ex" "${arch[@]}" KRING_SDK="$sdk" KBUILD_EXTRA_SYMBOLS="$mdir/Module.symvers" \
		W=1 -j"$(nproc)" "${modpost[@]}" modules >"$out/$k-example.log" 2>&1 ||
		grep -i 'warning:' "$out/$k-example.log" |
		grep -v -E 'modpost: (".*" \[.*\] undefined!|suppressed [0-9]+ unresolved symbol warnings)|WARNING: .*Module.symvers is missing' |
			grep . >&2; then
		tail -30 "$out/$k-example.log"
		result FAIL "check-build/$k/example (see $out/$k-example.log)"
		continue
	fi
	mods=$(cd "$mdir" && find . -name '*.ko' | sort | tr '\n' ' ')
	result PASS "check-build/$k ($(basename "$kdir"): ${mods}kring_example.ko, $(($(date +%s) - t0))s)"
done
echo "check-build: $pass passed, $fail failed in $(($(date +%s) - start))s"
[ "$fail" = 0 ]

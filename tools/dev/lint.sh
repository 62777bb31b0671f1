#!/usr/bin/env bash
# Kernel-style checks of the module sources:
#   tools/dev/lint.sh checkpatch   scripts/checkpatch.pl --strict on every kernel file
#   tools/dev/lint.sh sparse       sparse (make C=2) against the stock 6.12 headers,
#                              the example producer built against the SDK headers
#   tools/dev/lint.sh format       clang-format (.clang-format) on every C++ file:
#                              libkring, the tool, the examples and the tests
#   tools/dev/lint.sh shellcheck   shellcheck on every shell script
#   tools/dev/lint.sh layers       every include and call goes down a layer and
#                              no two files depend on each other
#                              (tools/dev/layers.py, docs/ARCHITECTURE.md): the
#                              sources, a stock-6.12 module build and the user
#                              build (libkring and the tool, built if need be)
#   tools/dev/lint.sh size         no function of the product sources above 100
#                              lines and no such file above 1 000 lines
#                              (universal-ctags finds the functions)
#   tools/dev/lint.sh docs         every kring_*/KRING_* name and every path of
#                              the tree that README.md and docs/ cite exists
#                              (tools/dev/docs_names.py)
# Prints the findings and exits non-zero when there are any.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top"
kfiles=(kmod/*.c kmod/*.h kmod/include/kring/*.h kmod/sources/*.c kmod/examples/*.c tests/kunit/*.c
	tests/bench/kring_bench.c
	tests/common/*.h)

case ${1:-} in
checkpatch)
	# checkpatch.pl comes with the kernel source the test kernels use.
	src=$("$top/tools/dev/vm/kernel.sh" source)
	cp=(perl "$src/scripts/checkpatch.pl" --no-tree --strict --terse --show-types -f)
	out=$("${cp[@]}" "${kfiles[@]}" 2>&1 | grep -v -E '^total:|^$' || true)
	# The version tests live in compat.h by design (LINUX_VERSION_CODE
	# compared against KERNEL_VERSION reads as a constant to checkpatch).
	out+=$("${cp[@]}" --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON kmod/compat.h 2>&1 |
		grep -v -E '^total:|^$' || true)
	# uapi: BIT_ULL() is not in uapi; static __inline__ is what C89
	# consumers of a uapi header need.
	out+=$("${cp[@]}" --ignore BIT_MACRO,INLINE uapi/linux/kring.h uapi/linux/kring_test.h 2>&1 |
		grep -v -E '^total:|^$' || true)
	# compat.h was already checked above with its own exceptions. The
	# SDK's KRING_FORMAT_FIELD() and _ARRAY() name a struct, a member and
	# a type several times each (offsetof(), sizeof_field(), the type
	# check): names, never an expression that could be evaluated twice.
	out=$(echo "$out" | grep -v -E '^kmod/compat.h:.*(LINUX_VERSION_CODE|CONSTANT_COMPARISON)' |
		grep -v -E '^kmod/include/kring/producer.h:.*MACRO_ARG_REUSE' | sed '/^$/d' || true)
	if [ -n "$out" ]; then
		echo "$out"
		exit 1
	fi ;;
sparse)
	kdir=$("$top/tools/dev/vm/kernel.sh" kdir stock-6.12)
	out=${KRING_BUILD:-$top/build}/sparse
	mkdir -p "$out"
	rsync -a --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' \
		Kbuild kmod uapi "$out/"
	mkdir -p "$out/tests" && rsync -a --delete tests/kunit tests/common tests/bench "$out/tests/"
	log=$(make -C "$kdir" M="$out" C=2 CF="-D__CHECK_ENDIAN__" -j"$(nproc)" modules 2>&1) ||
		{ echo "$log"; exit 1; }
	# The example producer builds outside the tree, against the SDK: its
	# headers laid out as make install lays them, kring's Module.symvers.
	rm -rf "$out/sdk" "$out/example"
	mkdir -p "$out/sdk/include/linux"
	cp -r kmod/include/kring "$out/sdk/include/"
	cp uapi/linux/kring.h "$out/sdk/include/linux/"
	cp -r kmod/examples "$out/example"
	log+=$(make -C "$kdir" M="$out/example" C=2 CF="-D__CHECK_ENDIAN__" \
		KRING_SDK="$out/sdk" KBUILD_EXTRA_SYMBOLS="$out/Module.symvers" modules 2>&1) ||
		{ echo "$log"; exit 1; }
	warn=$(echo "$log" | grep -E 'warning:|error:' || true)
	if [ -n "$warn" ]; then
		echo "$warn"
		exit 1
	fi ;;
format)
	# One C++ style for the library, the tool and every C++ test.
	mapfile -t cxx < <(git ls-files '*.cpp' '*.hpp')
	clang-format --dry-run -Werror "${cxx[@]}" ;;
shellcheck)
	# Warnings and errors; shellcheck's notes (quoting style, mostly where
	# the guest's scripts split lists on purpose) are not findings here.
	# SC1007: `a= b=` in one line assigns empty strings on purpose
	# (tools/dev/vm/run.sh declares its options so). SC2054: commas in an
	# array element are QEMU's option syntax (run.sh: -cpu max,pauth-...).
	sc=(shellcheck -x -S warning -e SC1007,SC2054)
	mapfile -t files < <({ git ls-files '*.sh'
		git grep -lE '^#!/bin/(ba)?sh|^#!/usr/bin/env (ba)?sh' -- ':!*.sh'; } | sort -u)
	with=() without=()
	for f in "${files[@]}"; do
		if [ "$(head -c2 "$f")" = '#!' ]; then with+=("$f"); else without+=("$f"); fi
	done
	# Files without a shebang are the guest's (busybox sh) and the demo's
	# fragments, which run inside the guest's script.
	rc=0
	"${sc[@]}" "${with[@]}" || rc=1
	[ ${#without[@]} -eq 0 ] || "${sc[@]}" -s sh "${without[@]}" || rc=1
	exit $rc ;;
layers)
	mdir=$("$top/tools/dev/build-modules.sh" stock-6.12)
	"$top/tools/dev/build-user.sh" kring kring_tool >/dev/null
	python3 "$top/tools/dev/layers.py" --kmod-build "$mdir" \
		--user-build "${KRING_BUILD:-$top/build}/user" ;;
docs)
	python3 "$top/tools/dev/docs_names.py" ;;
size)
	# The product sources: the module, its sources and SDK headers,
	# libkring, the tool; not the tests, the examples or the scripts.
	# (No generated table lives in these directories; one would be
	# exempted here by name.)
	mapfile -t files < <(git ls-files ':(glob)kmod/*.[ch]' ':(glob)kmod/sources/*' \
		':(glob)kmod/include/kring/*.h' ':(glob)userlib/**' ':(glob)tools/kring/*' |
		grep -E '\.(c|h|cpp|hpp)$')
	ctags --version 2>/dev/null | grep -q 'Universal Ctags' ||
		{ echo "lint.sh size: needs universal-ctags (tools/dev/deps.sh)" >&2; exit 1; }
	rc=0
	for f in "${files[@]}"; do
		n=$(wc -l <"$f")
		[ "$n" -le 1000 ] && continue
		echo "$f: $n lines (limit 1000)"
		rc=1
	done
	# A function's lines: its first (the name) to its last (the brace).
	long=$(ctags -x --_xformat='%{input}	%{line}	%{end}	%{name}' --languages=C,C++ \
		--kinds-C=f --kinds-C++=f --fields=+e "${files[@]}" |
		awk -F'\t' '$3 !~ /^[0-9]+$/ { print $1 ":" $2 ": " $4 "(): no end found"; next }
			$3 - $2 + 1 > 100 { print $1 ":" $2 ": " $4 "() is " $3 - $2 + 1 " lines (limit 100)" }')
	if [ -n "$long" ]; then
		echo "$long"
		rc=1
	fi
	exit $rc ;;
*)
	echo "usage: $0 {checkpatch|sparse|format|shellcheck|layers|size}" >&2
	exit 2 ;;
esac

#!/usr/bin/env bash
# `make check`: build everything, run the host tests, the in-guest tests on
# every kernel of KERNELS and KUnit where the kernel has it, and end with
# "N passed, N failed" (skips listed and counted apart). Non-zero exit on
# any failure.
#
#   KERNELS="stock-6.1 stock-6.12 kcsan debug arm64-64k"
#                                               kernels to boot (empty: none)
#   GTEST_FILTER=...                            only these GoogleTest cases
#   REPEAT=N                                    boot every kernel N times and
#                                               list every test that ever failed
#   GTEST_REPEAT=N                              in the guest, run the chosen
#                                               GoogleTest cases N times in
#                                               one boot (with GTEST_FILTER)
#   KRING_FULL=1                                the long modes (make check-full)
#   FUZZ_SEED=N                                 replay the syscall fuzzer's
#                                               run N (default: a new seed)
#   KRING_GUEST_STEPS=record                    in the guest, only the kring
#                                               record steps (and their host
#                                               check with perf); =tool: only
#                                               the tool's other steps; =bench:
#                                               only bench-smoke; =kunit: only
#                                               the KUnit suites
#   LOAD=1                                      a busy loop on every host CPU
#                                               while the guests run; LOAD=2
#                                               also one per guest CPU while
#                                               the in-guest test binaries run
#   tools/dev/check.sh --no-host                     skip the host tests
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KRING_BUILD:-$top/build}
kernels=${KERNELS-stock-6.1 stock-6.12 kcsan debug arm64-64k}
repeat=${REPEAT:-1}
full=${KRING_FULL:-0}
case $repeat in '' | *[!0-9]* | 0) echo "check.sh: REPEAT must be a positive number" >&2; exit 2 ;; esac
load=${LOAD:-0}
case $load in 0 | 1 | 2) ;; *) echo "check.sh: LOAD must be 0, 1 or 2" >&2; exit 2 ;; esac
# A guest's bound, for a hung guest only: the debug kernel's whole run
# takes about 12 minutes on an idle 2-core host under TCG, and a loaded
# or slower machine may take twice that. check-full fuzzes for longer (up
# to 5*10^5 operations on debug and kcsan).
vm_timeout=${KRING_VM_TIMEOUT:-1800}
[ "$full" = 1 ] && vm_timeout=${KRING_VM_TIMEOUT:-3000}
fuzz_seed=${FUZZ_SEED:-$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')}
case $fuzz_seed in '' | *[!0-9]*) echo "check.sh: FUZZ_SEED must be a number" >&2; exit 2 ;; esac
host=1
# GoogleTest reads GTEST_FILTER from the environment, even when ctest only
# lists the tests: keep it away from everything but the chosen runs.
filter=${GTEST_FILTER:-}
unset GTEST_FILTER
gtest_repeat=${GTEST_REPEAT:-1}
unset GTEST_REPEAT
case $gtest_repeat in '' | *[!0-9]* | 0) echo "check.sh: GTEST_REPEAT must be a positive number" >&2; exit 2 ;; esac
# Variables given to the outer make travel in MAKEFLAGS into every make we
# start (and from there into the environment of test discovery): drop them.
unset MAKEFLAGS MAKEOVERRIDES MFLAGS
ctest_filter=()
if [ -n "$filter" ]; then
	# gtest filter (A.*:B.c) -> ctest regex (^(A\..*|B\.c)$)
	re=$(printf '%s' "$filter" | sed -e 's/\./\\./g' -e 's/\*/.*/g' -e 's/?/./g' -e 's/:/|/g')
	ctest_filter=(-R "^($re)\$")
fi
[ "${1:-}" = --no-host ] && host=0
out=$build/check
rm -rf "$out" && mkdir -p "$out"
results=$out/results.txt
: >"$results"
start=$(date +%s)

say() { printf '==> %s\n' "$*"; }

# LOAD=1|2: a CPU hog on every host CPU (busy shell loops at the nice
# level of this script) while a guest runs. No test may assume that a
# timer, a wakeup or a grace period comes within a while: on a loaded
# host they come late, and this makes a developer's run find such a test
# rather than CI. The hogs go when the guest does, and on any exit.
hogs=()
start_load() {
	[ "$load" -ge 1 ] || return 0
	local _
	for _ in $(seq "$(nproc)"); do
		(while :; do :; done) &
		hogs+=($!)
	done
}
stop_load() {
	[ ${#hogs[@]} -gt 0 ] || return 0
	kill "${hogs[@]}" 2>/dev/null
	wait "${hogs[@]}" 2>/dev/null
	hogs=()
}
trap stop_load EXIT
trap 'stop_load; exit 130' INT TERM
record() { echo "$1 $2" >>"$results"; }
elapsed() { echo "$(($(date +%s) - start))s"; }

# 1. user space: libkring, tools, host and guest test binaries
say "building user space ($(elapsed))"
if "$top/tools/dev/build-user.sh" >"$out/user-build.log" 2>&1; then
	record PASS build/user
else
	tail -40 "$out/user-build.log"
	record FAIL build/user
fi
ubuild=$build/user

# An arm64 kernel in KERNELS: the guest's programs cross-built for it.
kernel_arch() { "$top/tools/dev/vm/kernel.sh" arch "$1"; }
ubuild_arm64=
for k in $kernels; do
	[ "$(kernel_arch "$k")" = arm64 ] || continue
	say "building the arm64 guest programs ($(elapsed))"
	if ubuild_arm64=$("$top/tools/dev/build-user.sh" --arch arm64 2>"$out/user-arm64-build.log"); then
		record PASS build/user-arm64
	else
		tail -40 "$out/user-arm64-build.log"
		record FAIL build/user-arm64
		ubuild_arm64=
	fi
	break
done

# guest_files BUILD: the --file arguments of a kernel's guest (files[]):
# its modules ($mdir, $example) and the programs of the user build BUILD.
guest_files() {
	local gb=$1 t w
	files=(--file "$mdir/kmod/kring.ko")
	[ -f "$mdir/tests/kunit/kring_kunit.ko" ] && files+=(--file "$mdir/tests/kunit/kring_kunit.ko")
	[ -n "$example" ] && files+=(--file "$example")
	files+=(--file "$gb/tools/kring/kring:kring")
	# kring record's workloads (tests/tool/).
	for w in busy pingpong; do
		[ -x "$gb/tests/tool/$w" ] && files+=(--file "$gb/tests/tool/$w:$w")
	done
	# The producer benchmark, run once briefly (make bench runs it in earnest).
	[ -f "$mdir/tests/bench/kring_bench.ko" ] && [ -x "$gb/tests/bench/producer_bench" ] &&
		files+=(--file "$mdir/tests/bench/kring_bench.ko"
			--file "$gb/tests/bench/producer_bench:producer_bench"
			--file "$gb/tests/bench/tracepoint_bench:tracepoint_bench"
			--file "$gb/tests/bench/e2e_bench:e2e_bench")
	# The syscall fuzzer; its length depends on the kernel (check-guest.sh).
	[ -x "$gb/tests/fuzz/kring_fuzz" ] &&
		files+=(--file "$gb/tests/fuzz/kring_fuzz:kring_fuzz")
	[ -x "$gb/tests/stress/kring_stress" ] &&
		files+=(--file "$gb/tests/stress/kring_stress:kring_stress")
	for t in "$gb"/tests/vm/kring_vm_*; do
		[ -x "$t" ] && files+=(--file "$t:bin/$(basename "$t")")
	done
}

if [ "$host" = 1 ] && [ -n "$filter" ] &&
	! (cd "$ubuild" && ctest -N "${ctest_filter[@]}") 2>/dev/null | grep -q 'Test *#'; then
	say "host tests: none selected by GTEST_FILTER"
	host=0
fi
# The host tests: every ctest test of the user build, among them the
# hostile-file suite (tool.hostile, tool.hostile.asan: every viewing
# command on crafted files, the second with the tool's ASan + UBSan build
# kring-asan, docs/TESTING.md).
if [ "$host" = 1 ] && [ -x "$ubuild/tests/userlib/kring_userlib_tests" ]; then
	say "host tests ($(elapsed))"
	(cd "$ubuild" && ctest --output-junit "$out/host-junit.xml" \
		"${ctest_filter[@]}" --output-on-failure -j"$(nproc)") \
		>"$out/host-tests.log" 2>&1
	grep -E 'tests passed|Failed|\*\*\*' "$out/host-tests.log" | tail -20
	if [ -f "$out/host-junit.xml" ]; then
		python3 "$top/tools/dev/vm/results.py" junit "$out/host-junit.xml" host >>"$results"
	else
		record FAIL "host/ctest (no result file)"
	fi
fi

# libFuzzer on libkring and the ring core, a fixed budget per target
# (tools/dev/fuzz.sh; check-full fuzzes longer).
if [ "$host" = 1 ] && [ -z "$filter" ]; then
	fsecs=15
	[ "$full" = 1 ] && fsecs=300
	say "libFuzzer, $fsecs s per target ($(elapsed))"
	"$top/tools/dev/fuzz.sh" "$fsecs" >"$out/libfuzzer.log" 2>&1
	grep -E '^libfuzzer |ERROR|invariant broken|SUMMARY' "$out/libfuzzer.log"
	if grep -qE '^(PASS|FAIL) libfuzzer/' "$out/libfuzzer.log"; then
		grep -E '^(PASS|FAIL) libfuzzer/' "$out/libfuzzer.log" >>"$results"
	else
		tail -20 "$out/libfuzzer.log"
		record FAIL "libfuzzer (see $out/libfuzzer.log)"
	fi
fi

# 2. style: checkpatch --strict and sparse on kernel code, clang-format on
# C++, shellcheck on the scripts; the layers of docs/ARCHITECTURE.md;
# the size of the product's functions and files; the names the docs cite
for l in checkpatch sparse format shellcheck layers size docs; do
	say "lint: $l ($(elapsed))"
	if "$top/tools/dev/lint.sh" "$l" >"$out/lint-$l.log" 2>&1; then
		record PASS "lint/$l"
	else
		head -30 "$out/lint-$l.log"
		record FAIL "lint/$l (see $out/lint-$l.log)"
	fi
done

# 3. kernels
for k in $kernels; do
	say "kernel $k: module build ($(elapsed))"
	if ! mdir=$("$top/tools/dev/build-modules.sh" "$k" 2>"$out/$k-modules.log"); then
		tail -40 "$out/$k-modules.log"
		record FAIL "build/$k"
		continue
	fi
	record PASS "build/$k"
	# The example producer, built from the installed SDK as an outside
	# driver is (tests/sdk/sdk_test.sh): the one the guest tests load.
	say "kernel $k: producer SDK ($(elapsed))"
	if example=$("$top/tests/sdk/sdk_test.sh" "$k" "$build/sdk/$k" 2>"$out/$k-sdk.log"); then
		record PASS "sdk/$k"
	else
		tail -40 "$out/$k-sdk.log"
		record FAIL "sdk/$k (see $out/$k-sdk.log)"
		example=
	fi
	if ! image=$("$top/tools/dev/vm/kernel.sh" image "$k" 2>>"$out/$k-modules.log"); then
		tail -20 "$out/$k-modules.log"
		record FAIL "vm/$k (no kernel image)"
		continue
	fi
	# The guest's programs, of the kernel's architecture.
	gb=$ubuild
	[ "$(kernel_arch "$k")" = arm64 ] && gb=$ubuild_arm64
	if [ -z "$gb" ]; then
		record FAIL "vm/$k (no guest programs for its architecture)"
		continue
	fi
	guest_files "$gb"
	# With REPEAT=N the kernel boots N times; run r>1 reports as vm/K@r
	# and fuzzes with seed FUZZ_SEED+r-1.
	for r in $(seq 1 "$repeat"); do
		tag=$k of=
		[ "$r" -gt 1 ] && tag=$k@$r
		[ "$repeat" -gt 1 ] && of=" (run $r of $repeat)"
		{
			printf 'GTEST_FILTER=%q\n' "$filter"
			printf 'KRING_GTEST_REPEAT=%q\n' "$gtest_repeat"
			printf 'KRING_FULL=%q\n' "$full"
			printf 'KRING_KERNEL=%q\n' "$k"
			printf 'FUZZ_SEED=%q\n' "$((fuzz_seed + r - 1))"
			printf 'KRING_GUEST_STEPS=%q\n' "${KRING_GUEST_STEPS:-}"
			printf 'KRING_LOAD=%q\n' "$load"
		} >"$out/$tag-env"
		loaded=
		[ "$load" -ge 1 ] && loaded=", $(nproc) host CPUs busy"
		[ "$load" -ge 2 ] && loaded="$loaded and every guest CPU"
		say "kernel $k: guest tests$of, fuzz seed $((fuzz_seed + r - 1))$loaded ($(elapsed))"
		start_load
		"$top/tools/dev/vm/run.sh" --image "$image" --script "$top/tools/dev/vm/check-guest.sh" \
			--log "$out/$tag-console.log" --timeout "$vm_timeout" "${files[@]}" \
			--file "$out/$tag-env:env" --outdir "$out/$tag-out" \
			2>"$out/$tag-vm.err"
		vmrc=$?
		stop_load
		python3 "$top/tools/dev/vm/results.py" guest "$out/$tag-console.log" "vm/$tag" >>"$results"
		# The guest's recordings (kring record steps), read by the host's
		# perf: tests/tool/perf_check.py, one result per check.
		if ls "$out/$tag-out"/*.data >/dev/null 2>&1; then
			say "kernel $k: perf reads the guest's recordings ($(elapsed))"
			mkdir -p "$out/symfs/kring"
			cp "$gb/tests/tool/busy" "$gb/tests/tool/pingpong" "$out/symfs/kring/"
			python3 "$top/tests/tool/perf_check.py" "$out/$tag-out" "$tag" \
				--symfs "$out/symfs" >"$out/$tag-perf-check.log" 2>&1
			grep -E '^(PASS|FAIL|SKIP) ' "$out/$tag-perf-check.log" >>"$results"
			grep -E '^FAIL ' "$out/$tag-perf-check.log"
			grep -qE '^(PASS|FAIL) ' "$out/$tag-perf-check.log" ||
				record FAIL "tool/$tag/perf-check (see $out/$tag-perf-check.log)"
		fi
		if [ "$vmrc" != 0 ]; then
			cat "$out/$tag-vm.err"
			if grep -q '^console-check: first report' "$out/$tag-vm.err"; then
				echo "==> vm/$tag: the console's first kernel report"
				sed -n '/^console-check: first report/,$p' "$out/$tag-vm.err" | tail -n +2
			fi >>"$out/reports.txt"
			record FAIL "vm/$tag/guest (console: $out/$tag-console.log)"
		else
			record PASS "vm/$tag/guest"
		fi
	done
done

# A filter that selects nothing anywhere is a mistake, not a pass.
if [ -n "$filter" ] && ! grep -qvE '^(PASS|FAIL) (build/|sdk/|lint/|vm/[^/ ]+/guest)' "$results"; then
	record FAIL "GTEST_FILTER=$filter selected no test"
fi
say "done in $(elapsed); logs in $out"
rc=0
python3 "$top/tools/dev/vm/results.py" summary "$results" || rc=$?
# A CI log is read from its end: the kernel reports that failed a guest
# come last.
[ -s "$out/reports.txt" ] && cat "$out/reports.txt"
exit $rc

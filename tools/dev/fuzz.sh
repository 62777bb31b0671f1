#!/usr/bin/env bash
# libFuzzer on libkring, the ring core and the kring tool's tracepoint
# decoder (tests/fuzz/libfuzzer/): build the harnesses with clang (ASan +
# UBSan), then run each for a fixed time from its seed corpus (committed,
# or for tracepoint written by seeds_tracepoint) plus what earlier runs on
# this machine found.
#
#   tools/dev/fuzz.sh [SECONDS] [TARGET...]    default 15 s, every target
#
# Targets: records reader merger aux ring perf_data tp_format tracepoint. Inputs that reach new
# coverage are kept in $KRING_BUILD/libfuzzer/corpus/TARGET (git-ignored); a
# crash or a broken invariant leaves its input in
# $KRING_BUILD/libfuzzer/crashes/TARGET and prints the command that replays
# it. Prints "PASS|FAIL libfuzzer/T" lines (make check collects them); exits
# non-zero on any failure.
set -uo pipefail
unset MAKEFLAGS MAKEOVERRIDES MFLAGS
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
b=${KRING_BUILD:-$top/build}/libfuzzer
secs=${1:-15}
case $secs in '' | *[!0-9]*) echo "fuzz.sh: SECONDS must be a number" >&2; exit 2 ;; esac
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(records reader merger aux ring perf_data tp_format tracepoint)
cc=$(command -v clang-14 || command -v clang) || { echo "fuzz.sh: clang not found (tools/dev/deps.sh installs it)" >&2; exit 1; }
cxx=$(command -v clang++-14 || command -v clang++) || { echo "fuzz.sh: clang++ not found" >&2; exit 1; }
mkdir -p "$b"
# shellcheck source=tools/dev/ccache.sh
. "$top/tools/dev/ccache.sh" "$top"
# A build directory configured from another source folder (the harnesses
# lived in tests/libfuzzer/ before) is started afresh.
src=$top/tests/fuzz/libfuzzer
if [ -f "$b/build/CMakeCache.txt" ] &&
	! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$src" "$b/build/CMakeCache.txt"; then
	rm -rf "$b/build"
fi
if ! { cmake -S "$src" -B "$b/build" -DCMAKE_C_COMPILER="$cc" \
	-DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE= "${ccache_cmake[@]}" >/dev/null &&
	cmake --build "$b/build" -j"$(nproc)" >"$b/build.log" 2>&1; }; then
	tail -30 "$b/build.log"
	echo "FAIL libfuzzer/build"
	exit 1
fi
rc=0
for t in "${targets[@]}"; do
	bin=$b/build/fuzz_$t
	if [ ! -x "$bin" ]; then
		echo "fuzz.sh: no target $t" >&2
		echo "FAIL libfuzzer/$t"
		rc=1
		continue
	fi
	mkdir -p "$b/corpus/$t" "$b/crashes/$t"
	log=$b/$t.log
	# New inputs go into the first folder; the seeds follow it.
	dirs=("$b/corpus/$t")
	[ -d "$top/tests/fuzz/libfuzzer/corpus/$t" ] && dirs+=("$top/tests/fuzz/libfuzzer/corpus/$t")
	if [ -x "$b/build/seeds_$t" ]; then
		rm -rf "$b/seeds/$t" && mkdir -p "$b/seeds/$t" &&
			"$b/build/seeds_$t" "$b/seeds/$t" >"$log" 2>&1 || {
			cat "$log"
			echo "FAIL libfuzzer/$t (seeds)"
			rc=1
			continue
		}
		dirs+=("$b/seeds/$t")
	fi
	# -fork would need more cores than CI has; one process, one budget.
	"$bin" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$b/crashes/$t/" "${dirs[@]}" >"$log" 2>&1
	r=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	if [ $r = 0 ]; then
		echo "libfuzzer $t: ${runs:-?} inputs in ${secs} s, ${cov:-cov: ?}"
		echo "PASS libfuzzer/$t"
	else
		grep -E 'ERROR|invariant broken|SUMMARY|^    #[0-9] ' "$log" | head -20
		art=$(ls -t "$b/crashes/$t" 2>/dev/null | head -n 1)
		echo "libfuzzer $t: failed after ${runs:-?} inputs; replay: $bin $b/crashes/$t/$art"
		echo "FAIL libfuzzer/$t (log: $log)"
		rc=1
	fi
done
exit $rc

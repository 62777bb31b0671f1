#!/usr/bin/env bash
# The host benchmarks (docs/PERFORMANCE.md):
#
# 1. Instructions per record of the ring core against a bare SPSC ring
#    (tests/bench/core_bench.c), counted by callgrind: the instructions of
#    the benchmark loop, divided by the records. Deterministic: the figures
#    move only when the code (or the compiler) does. One table (payload
#    sizes 8, 32, 64, 256 B; floor, forward, overwrite, full: forward
#    with a consumer that never reads, every record after the first lap
#    lost; copy: forward through kring_output_copy() instead of in place;
#    onecall: forward through kring_output_write(), header and body in one
#    call; stamped: through kring_output_write_stamped(), the SAMPLE
#    writer's call, its time and sequence number stored by the ring, from
#    32 B)
#    and one line per run:
#    summary core_bench variant=V size=N ir_per_record=X
# 2. libkring's reader against libperf's perf_mmap__read_event() on the
#    same rings (tests/bench/consume_bench.cpp, Google Benchmark):
#    libperf is built here from Debian's linux-source-6.12 (tools/lib/perf)
#    into the cache, never into the tree. Records/s at 32, 64, 256 B.
#
#   tools/dev/core-bench.sh [COUNT]     default 100000 records per run
set -euo pipefail
unset MAKEFLAGS MAKEOVERRIDES MFLAGS
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KRING_BUILD:-$top/build}
count=${1:-100000}
out=$build/bench/core
mkdir -p "$out"
command -v valgrind >/dev/null || { echo "core-bench.sh: valgrind is missing (tools/dev/deps.sh installs it)" >&2; exit 1; }

"$top/tools/dev/build-user.sh" kring_core_bench >"$out/build.log" 2>&1 ||
	{ tail -40 "$out/build.log"; exit 1; }
bin=$build/user/tests/host/kring_core_bench

# Ir of bench_run() for one variant and size, per record.
ir_per_record() {
	local v=$1 size=$2 f=$out/callgrind.$1.$2
	valgrind --tool=callgrind --collect-atstart=no --toggle-collect=bench_run \
		--callgrind-out-file="$f" "$bin" "$v" "$size" "$count" >"$f.log" 2>&1 ||
		{ cat "$f.log" >&2; echo "core-bench.sh: $v $size failed" >&2; return 1; }
	awk -v n="$count" '/^(summary|totals):/ { t = $2 } END {
		if (t == "") exit 1; printf "%.1f\n", t / n }' "$f"
}

printf '%-6s %10s %10s %10s %14s %14s %10s %10s %10s %14s %10s\n' size floor forward overwrite \
	'forward/floor' 'overwrite/floor' full copy onecall 'onecall/floor' stamped
lines=()
for size in 8 32 64 256; do
	fl=$(ir_per_record floor "$size")
	fw=$(ir_per_record forward "$size")
	ow=$(ir_per_record overwrite "$size")
	fu=$(ir_per_record full "$size")
	co=$(ir_per_record copy "$size")
	oc=$(ir_per_record onecall "$size")
	st=-
	[ "$size" -lt 16 ] || st=$(ir_per_record stamped "$size")
	printf '%-6s %10s %10s %10s %14s %14s %10s %10s %10s %14s %10s\n' "$size B" "$fl" "$fw" "$ow" \
		"$(awk -v a="$fw" -v b="$fl" 'BEGIN { printf "%.2f", a / b }')" \
		"$(awk -v a="$ow" -v b="$fl" 'BEGIN { printf "%.2f", a / b }')" "$fu" "$co" "$oc" \
		"$(awk -v a="$oc" -v b="$fl" 'BEGIN { printf "%.2f", a / b }')" "$st"
	for v in floor:$fl forward:$fw overwrite:$ow full:$fu copy:$co onecall:$oc stamped:$st; do
		[ "${v#*:}" != - ] || continue
		lines+=("summary core_bench variant=${v%%:*} size=$size ir_per_record=${v#*:}")
	done
done
printf '%s\n' "${lines[@]}"

# 2. The readers.
echo "==> libperf (linux-source-6.12 tools/lib/perf)"
src=$("$top/tools/dev/vm/kernel.sh" source)
cache=${KRING_CACHE:-$HOME/.cache/kring}
lp=$cache/libperf/$(basename "$src")
if [ ! -f "$lp/.built" ]; then
	rm -rf "$lp" && mkdir -p "$lp/build"
	make -s -C "$src/tools/lib/perf" O="$lp/build" DESTDIR="$lp/inst" prefix= \
		install_lib install_headers >"$out/libperf-build.log" 2>&1 ||
		{ tail -20 "$out/libperf-build.log"; exit 1; }
	mkdir -p "$lp/dist"
	cp -r "$lp/inst/include" "$lp/dist/"
	cp "$lp/build/libperf.a" "$lp/build/libapi.a" "$lp/dist/"
	touch "$lp/.built"
fi
cmake -S "$top" -B "$build/user" -DKRING_LIBPERF_DIR="$lp/dist" -DKRING_LINUX_SRC="$src" >/dev/null
cmake --build "$build/user" -j"$(nproc)" --target kring_consume_bench >"$out/consume-build.log" 2>&1 ||
	{ tail -40 "$out/consume-build.log"; exit 1; }
# The reader's copy path (mirror=0) reads the same unmirrored ring as libperf.
"$build/user/tests/userlib/kring_consume_bench" \
	--benchmark_filter='BM_Libperf|BM_Reader/size:(32|64|256)/mirror:0' \
	--benchmark_min_time=0.2 --benchmark_repetitions=5 \
	--benchmark_report_aggregates_only=true --benchmark_format=json \
	--benchmark_out="$out/readers.json" --benchmark_out_format=json >/dev/null
python3 - "$out/readers.json" <<'PY'
import json, sys
rows = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    name = b["run_name"]
    size = int(name.split("size:")[1].split("/")[0])
    kind = "kring"
    if name.startswith("BM_Libperf"):
        kind = "batch" if name.endswith("batch:1") else "libperf"
    rows.setdefault(size, {})[kind] = b["items_per_second"]
print("%-6s %15s %22s %8s %22s %8s" % ("size", "libkring rec/s", "libperf rec/s", "ratio",
                                       "libperf batched rec/s", "ratio"))
for size in sorted(rows):
    r = rows[size]
    if len(r) != 3:
        sys.exit("core-bench.sh: missing reader figures for %d B" % size)
    print("%-6s %14.1fM %21.1fM %7.2fx %21.1fM %7.2fx" % (
        "%d B" % size, r["kring"] / 1e6, r["libperf"] / 1e6, r["kring"] / r["libperf"],
        r["batch"] / 1e6, r["kring"] / r["batch"]))
for size in sorted(rows):
    r = rows[size]
    print("summary reader_bench size=%d libkring_per_s=%.0f libperf_per_s=%.0f "
          "libperf_batched_per_s=%.0f ratio=%.2f ratio_batched=%.2f" % (
              size, r["kring"], r["libperf"], r["batch"], r["kring"] / r["libperf"],
              r["kring"] / r["batch"]))
PY

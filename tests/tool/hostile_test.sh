#!/usr/bin/env bash
# Every viewing command of the kring tool (report, report --svg, script,
# script --json, script -i - on standard input, export --chrome, export
# --pprof) on every file of the hostile corpus that hostile_gen makes
# (tests/tool/hostile_gen.cpp), each run bounded in time and memory. What
# each must do is its case's class (docs/TESTING.md, "Hostile files"):
#
#   every run   exits (no signal, not killed at the bound), with 0 or 1,
#               no sanitizer report, every stderr line "kring: ..."
#   refused     exit 1, exactly one stderr line, nothing on stdout
#   damaged     exit 1, exactly one stderr line
#   unparsed    report: exit 1, one stderr line; the others as readable
#   formats     a tracepoint format refused (docs/TOOL.md): exit 1, one
#               stderr line; export --pprof, which decodes no tracepoint
#               field, as readable
#   readable    exit 0, stderr at most 10 lines, each "kring: warning: "
#
#   hostile_test.sh KRING HOSTILE_GEN [asan]
#
# asan: KRING is an ASan + UBSan build, whose shadow memory needs more
# address space than the bound below: its memory is bounded by ASan's
# own hard_rss_limit_mb and max_allocation_size_mb instead of prlimit
# --as. Prints "PASS|FAIL hostile/<case>/<command>" lines and a closing
# "N passed, N failed"; exits non-zero on any failure.
set -uo pipefail
kring=${1:?usage: hostile_test.sh KRING HOSTILE_GEN [asan]}
gen=${2:?usage: hostile_test.sh KRING HOSTILE_GEN [asan]}
flavour=${3:-}
# A hang, not a slow machine: the largest case takes a few seconds
# (several under ASan) where it is not broken.
bound_s=${KRING_HOSTILE_TIMEOUT:-120}
mem_mb=2048

dir=$(mktemp -d /tmp/kring-hostile.XXXXXX)
trap 'rm -rf "$dir"' EXIT
if ! "$gen" "$dir" >"$dir/gen.log" 2>&1; then
	cat "$dir/gen.log"
	echo "FAIL hostile/generator"
	exit 1
fi

limit=(prlimit --as=$((mem_mb << 20)) --)
if [ "$flavour" = asan ]; then
	limit=()
	export ASAN_OPTIONS="hard_rss_limit_mb=$mem_mb:max_allocation_size_mb=$mem_mb:allocator_may_return_null=0:detect_leaks=1:abort_on_error=0:exitcode=86"
	export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86"
fi

passed=0
failed=0
# check CASE CLASS NAME KRING-ARGS...: one run, judged.
check() {
	local c=$1 cls=$2 name=$3 st why=
	shift 3
	local out=$dir/out err=$dir/err in=/dev/null
	if [ "$name" = script-stdin ]; then
		in=$dir/$c.data
		# A FIFO no one writes, a device: not what a shell redirects from.
		[ -f "$in" ] && [ ! -L "$in" ] || in=/dev/null
	fi
	timeout -s KILL "$bound_s" "${limit[@]}" "$kring" "$@" <"$in" >"$out" 2>"$err"
	st=$?
	local nerr
	nerr=$(wc -l <"$err")
	if [ $st -ge 128 ] || [ $st = 124 ]; then
		why="killed by signal $((st - 128)) (bound ${bound_s} s, ${mem_mb} MB)"
	elif grep -qE 'Sanitizer|runtime error:|LeakSanitizer' "$err"; then
		why="sanitizer report"
	elif [ $st != 0 ] && [ $st != 1 ]; then
		why="exit status $st"
	elif grep -qv '^kring: ' "$err"; then
		why="a stderr line not 'kring: ...'"
	else
		local want_st=1 want_err=one
		case $cls/$name in
		refused/* | damaged/*) ;;
		unparsed/report*) ;;
		unparsed/*) want_st=0 want_err=warnings ;;
		formats/export-pprof) want_st=0 want_err=warnings ;;
		formats/*) ;;
		readable/*) want_st=0 want_err=warnings ;;
		*) why="unknown class $cls" ;;
		esac
		# The stdin run of a path that is not a file reads an empty stream.
		if [ "$name" = script-stdin ] && [ "$in" = /dev/null ]; then
			want_st=1 want_err=one
		fi
		if [ -z "$why" ] && [ "$st" != "$want_st" ]; then
			why="exit status $st, not $want_st"
		elif [ -z "$why" ]; then
			case $want_err in
			one) [ "$nerr" = 1 ] || why="$nerr stderr lines, not one" ;;
			warnings)
				if [ "$nerr" -gt 10 ]; then
					why="$nerr stderr lines, more than 10"
				elif grep -qv '^kring: warning: ' "$err"; then
					why="a stderr line not a warning"
				fi
				;;
			esac
		fi
		if [ -z "$why" ] && [ "$cls" = refused ] && [ -s "$out" ]; then
			why="output on stdout for a refused file"
		fi
	fi
	if [ -z "$why" ]; then
		passed=$((passed + 1))
		echo "PASS hostile/$c/$name"
	else
		failed=$((failed + 1))
		echo "FAIL hostile/$c/$name: $why: kring $*"
		head -c 2000 "$err" | sed 's/^/    /'
	fi
}

while read -r c cls; do
	f=$dir/$c.data
	check "$c" "$cls" report report "$f"
	check "$c" "$cls" report-svg report "$f" --svg "$dir/t.svg"
	check "$c" "$cls" script script "$f"
	check "$c" "$cls" script-json script --json "$f"
	check "$c" "$cls" script-stdin script -i -
	check "$c" "$cls" export-chrome export --chrome "$dir/t.json" "$f"
	check "$c" "$cls" export-pprof export --pprof "$dir/t.pb.gz" "$f"
done <"$dir/cases.txt"
echo "$passed passed, $failed failed"
[ $failed = 0 ]

# Guest half of `make check` (runs as /kring/run.sh inside the VM).
# /kring holds kring.ko, maybe kring_kunit.ko, the test binaries in bin/ and
# env (settings from the host). Output blocks are parsed by results.py.
[ -f /kring/env ] && . /kring/env
rc=0
# KRING_GUEST_STEPS=record: only the kring record steps (and the module's
# load and unload around them), for working on them; =tool: only the
# kring tool's other steps; =bench: only bench-smoke; =kunit: only the
# KUnit suites; empty: everything.
only=${KRING_GUEST_STEPS:-}
case $only in '' | record | tool | bench | kunit) ;; *) echo "check-guest: unknown KRING_GUEST_STEPS=$only (record, tool, bench, kunit)"; exit 1 ;; esac

# The lifetime test (Lifetime.*, tests/vm/lifetime_test.cpp) runs 10^4
# cycles in check-full, 2000 in make check (10^4 take 3 minutes on a stock
# kernel under TCG; a leak shows in the exact charge count and in kmemleak
# after one cycle).
[ "${KRING_FULL:-0}" = 1 ] || export KRING_LIFETIME_CYCLES=2000

# wait_for SECONDS CMD...: run CMD every 0.1 s until it succeeds; fails
# after SECONDS. No step waits a fixed time for something asynchronous
# (a process getting ready, a tool acting on a trigger): it waits for the
# thing itself, with a bound only a defect reaches.
wait_for() {
	limit=$(($1 * 10)); shift
	i=0
	until "$@"; do
		i=$((i + 1))
		[ $i -ge $limit ] && { echo "wait_for: '$*' still false after $((limit / 10)) s"; return 1; }
		sleep 0.1
	done
}
# lines_at_least N PATTERN FILE: FILE has N lines matching PATTERN.
lines_at_least() { [ "$(grep -c "$2" "$3" 2>/dev/null)" -ge "$1" ]; }
# sigint_routed PID: PID blocks SIGINT (the kring tool's triggers take it
# through a signalfd from then on; before, the signal is lost).
sigint_routed() {
	m=$(sed -n 's/^SigBlk:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
	[ -n "$m" ] && [ $((0x${m#"${m%?}"} & 2)) != 0 ]
}

# KRING_LOAD=2 (make check LOAD=2): a busy process per CPU while the test
# binaries run, so that a test which assumes an idle CPU, or that a thread
# runs the moment it wakes, fails here rather than somewhere else.
guest_hogs=
start_guest_load() {
	[ "${KRING_LOAD:-0}" -ge 2 ] 2>/dev/null || return 0
	n=$(grep -c '^processor' /proc/cpuinfo)
	for _ in $(seq "$n"); do
		sh -c 'while :; do :; done' &
		guest_hogs="$guest_hogs $!"
	done
	echo "guest load: $n busy processes"
}
stop_guest_load() {
	[ -n "$guest_hogs" ] || return 0
	kill $guest_hogs
	wait $guest_hogs 2>/dev/null
	guest_hogs=
}

# A step that returns 77 after printing "SKIP: REASON" is reported as
# skipped with that reason (results.py), never as a pass.
step() { # step NAME CMD...: run CMD, report it as one result
	name=$1; shift
	echo "==== KRING-BEGIN step $name"
	t0=$(cut -d' ' -f1 /proc/uptime)
	"$@"
	r=$?
	echo "==== KRING-END step $name rc=$r secs=$(awk -v t0="$t0" '{ printf "%.1f", $1 - t0 }' /proc/uptime)"
	[ $r = 0 ] || [ $r = 77 ] || rc=1
	return $r
}

# Load kring and attach its probes by configuring a capture source once
# (the tool-sched step checks that source; a kernel without it has nothing
# to attach).
load_kring() {
	insmod /kring/kring.ko "$@" || return 1
	[ -x /kring/kring ] || return 0
	/kring/kring sched --duration 0 >/tmp/attach.out 2>&1 ||
		echo "probes not attached: $(tail -n 1 /tmp/attach.out)"
	return 0
}

# The default policy: only root may open /dev/kring.
default_policy() {
	insmod /kring/kring.ko || return 1
	m=$(ls -l /dev/kring | cut -c1-10)
	rmmod kring
	echo "default /dev/kring mode: $m"
	[ "$m" = "crw-------" ]
}
[ -z "$only" ] && step default-policy default_policy
# The tests open it as an unprivileged user too.
if ! step insmod-kring load_kring dev_mode=0666; then
	dmesg | tail -20
	exit 1
fi

# gtest_progress PID OUT: wait until PID ends; meanwhile, every 300 s, one
# console line naming the case it runs (the last "[ RUN" of OUT), so that a
# guest stopped by the host's timeout shows where it was. A binary's own
# output stays whole in OUT, printed after it ends, away from the kernel's
# lines. (Run in the background, a binary starts with SIGINT and SIGQUIT
# ignored and stdin from /dev/null, as POSIX says: no test uses either.)
gtest_progress() {
	secs=0
	while kill -0 "$1" 2>/dev/null; do
		sleep 1
		secs=$((secs + 1))
		[ $((secs % 300)) = 0 ] &&
			echo "==== KRING-PROGRESS ${secs}s: $(grep '^\[ RUN' "$2" | tail -n 1)"
	done
	return 0
}
[ -z "$only" ] && start_guest_load
for t in /kring/bin/*; do
	[ -x "$t" ] && [ -z "$only" ] || continue
	name=$(basename "$t")
	# A filter that selects none of this binary's cases leaves it out.
	if [ -n "${GTEST_FILTER:-}" ] &&
		! "$t" --gtest_list_tests --gtest_filter="$GTEST_FILTER" 2>/dev/null | grep -q '^  '; then
		continue
	fi
	echo "==== KRING-BEGIN gtest $name"
	if [ -n "${GTEST_FILTER:-}" ]; then
		"$t" --gtest_color=no --gtest_filter="$GTEST_FILTER" \
			--gtest_repeat="${KRING_GTEST_REPEAT:-1}" >/tmp/"$name".out 2>&1 &
	else
		"$t" --gtest_color=no >/tmp/"$name".out 2>&1 &
	fi
	gtest_progress $! /tmp/"$name".out
	wait $!
	r=$?
	cat /tmp/"$name".out
	echo "==== KRING-END gtest $name rc=$r"
	[ $r = 0 ] || rc=1
done
stop_guest_load

# Hostile input again as the unprivileged user nobody, with the test
# generators opened to every user as an administrator may: what it may do
# works, what it may not is refused, nothing crashes (not when a test
# filter narrows the run).
hostile_as_nobody() {
	echo 1 >/sys/module/kring/parameters/test_sources
	su nobody -s /bin/sh -c \
		"cd /tmp && /kring/bin/kring_vm_tests --gtest_color=no --gtest_filter='Hostile.*'"
	r=$?
	echo 0 >/sys/module/kring/parameters/test_sources
	return $r
}
if [ -x /kring/bin/kring_vm_tests ] && [ -z "${GTEST_FILTER:-}" ] && [ -z "$only" ]; then
	echo "==== KRING-BEGIN gtest kring_vm_tests@nobody"
	hostile_as_nobody >/tmp/hostile-nobody.out 2>&1
	r=$?
	cat /tmp/hostile-nobody.out
	echo "==== KRING-END gtest kring_vm_tests@nobody rc=$r"
	[ $r = 0 ] || rc=1
fi

# The kring tool end to end (not when a test filter narrows the run). The
# checks read its exit status (0 ok, 1 runtime error, 2 usage error) and
# its machine-readable last line, "summary <command> key=value ...";
# `kring synth` verifies every record and exits 1 on a mismatch.
# summary_field KEY FILE: the value of KEY in the last summary line of FILE.
summary_field() {
	grep '^summary ' "$2" | tail -n 1 | tr ' ' '\n' | sed -n "s/^$1=//p"
}
# tool_exits STATUS ARGS...: fails unless kring exits with STATUS after
# exactly one error line "kring: ..." on stderr.
tool_exits() {
	want=$1; shift
	/kring/kring "$@" >/tmp/tool.out 2>/tmp/tool.err
	r=$?
	cat /tmp/tool.out /tmp/tool.err
	[ $r = "$want" ] && [ "$(wc -l </tmp/tool.err)" = 1 ] && grep -q '^kring: ' /tmp/tool.err
}
# Snapshots on SIGUSR2 and through the control fifo: three intact windows
# (and any empty ones taken before the tracer's first packet).
# Each trigger goes once the tool has acted on the one before (it prints a
# line per snapshot; a stop read with a snapshot request would end it
# first), and the first once the fifo exists (its signals are routed).
aux_triggers() {
	rm -f /tmp/aux-ctl
	/kring/kring aux --snapshot --order 2 --ms 0 --control /tmp/aux-ctl >/tmp/aux.out 2>&1 &
	p=$!
	wait_for 120 test -p /tmp/aux-ctl &&
		aux_trigger_until signal 1 &&
		aux_trigger_until fifo 2
	echo stop >/tmp/aux-ctl
	wait $p
	r=$?
	cat /tmp/aux.out
	n=$(summary_field snapshots /tmp/aux.out)
	[ $r = 0 ] && [ "$(summary_field intact /tmp/aux.out)" -ge 3 ] &&
		[ $(($(summary_field intact /tmp/aux.out) + $(summary_field empty /tmp/aux.out))) = "$n" ]
}
# Trigger snapshots of aux_triggers' tracer ($p) by $1 (signal or fifo)
# until $2 intact windows were taken. The tracer's first packet comes with
# its first timer tick, whenever the guest runs it: a snapshot before that
# is empty (reported so, not a fault), and the next trigger comes once its
# verdict is out. A tracer that has written nothing after 100 triggers,
# each waited for, is a defect.
aux_trigger_until() {
	i=0
	while [ "$(grep -c ': intact$' /tmp/aux.out)" -lt "$2" ]; do
		i=$((i + 1))
		[ $i -le 100 ] || return 1
		n=$(grep -c 'SYNC): ' /tmp/aux.out)
		if [ "$1" = signal ]; then
			kill -USR2 $p || return 1
		else
			echo snapshot >/tmp/aux-ctl || return 1
		fi
		wait_for 120 lines_at_least $((n + 1)) 'SYNC): ' /tmp/aux.out || return 1
	done
}
# A snapshot taken before the tracer's first packet is empty, not a fault:
# task mode on a stopped task, which never runs while traced, so nothing is
# written (one snapshot through the fifo, one at the end; exit 0).
aux_empty() {
	sh -c 'kill -STOP $$' &
	t=$!
	wait_for 120 grep -q '^State:[[:space:]]*T' /proc/$t/status || return 1
	rm -f /tmp/aux-ctl
	/kring/kring aux --snapshot --pid $t --order 2 --ms 0 --control /tmp/aux-ctl >/tmp/aux.out 2>&1 &
	p=$!
	wait_for 120 test -p /tmp/aux-ctl &&
		echo snapshot >/tmp/aux-ctl &&
		wait_for 120 lines_at_least 1 'SYNC): ' /tmp/aux.out
	echo stop >/tmp/aux-ctl
	wait $p
	r=$?
	kill -KILL $t
	cat /tmp/aux.out
	[ $r = 0 ] && [ "$(summary_field snapshots /tmp/aux.out)" = 2 ] &&
		[ "$(summary_field empty /tmp/aux.out)" = 2 ]
}
# Task mode on a busy shell loop (always runnable: a second is ample for it
# to run while traced, whoever else wants the CPU).
aux_task() {
	sh -c 'while :; do :; done' &
	p=$!
	/kring/kring aux --pid $p --order 4 --ms 1000 >/tmp/aux.out 2>&1
	r=$?
	kill $p
	cat /tmp/aux.out
	[ $r = 0 ] && [ "$(summary_field itrace_start /tmp/aux.out)" = 1 ] &&
		[ "$(summary_field packets /tmp/aux.out)" -gt 0 ]
}
if [ -x /kring/kring ] &&
	{ { [ -z "${GTEST_FILTER:-}" ] && [ -z "$only" ]; } || [ "$only" = tool ]; }; then
	step tool-synth /kring/kring synth --count 20000 --order 2 --sleep-us 500
	step tool-synth-mirror /kring/kring synth --count 20000 --order 3 --mirror --sleep-us 0
	step tool-bad-device tool_exits 1 --device /nonexistent/kring info
	step tool-bad-order tool_exits 2 synth --order 99
	step tool-bad-option tool_exits 2 synth --no-such-option
	step tool-aux /kring/kring aux --order 1 --ms 200 --sleep-ms 20
	step tool-aux-snapshot /kring/kring aux --snapshot --order 2 --ms 200
	step tool-aux-triggers aux_triggers
	step tool-aux-empty aux_empty
	step tool-aux-task aux_task
	step tool-aux-bad-cpu tool_exits 1 aux --cpu 4096
	step tool-sched /kring/kring sched --duration 1
	# kring stat: live counters of every CPU's sched and timer channels
	# (control pages, nothing consumed), rows of 200 ms for a second (five
	# when the tool wakes on time; a wake-up past the end ends it, so at
	# least one); its own naps switch, so the sched rows count records.
	tool_stat() {
		/kring/kring stat -a -I 200 -d 1 -e sched -e timer:1000 >/tmp/stat.out 2>&1
		r=$?
		cat /tmp/stat.out
		[ $r = 0 ] && [ "$(summary_field intervals /tmp/stat.out)" -ge 1 ] &&
			[ "$(summary_field written /tmp/stat.out)" -gt 0 ] &&
			[ "$(summary_field produced /tmp/stat.out)" -ge "$(summary_field written /tmp/stat.out)" ] &&
			grep -q '^ .* all sched ' /tmp/stat.out
	}
	step tool-stat tool_stat
	step tool-stat-bad-cpu tool_exits 1 stat -C 4096 -d 1
	tool_stat_nodev() {
		tool_exits 1 --device /nonexistent stat -d 1 &&
			[ "$(cat /tmp/tool.err)" = "kring: cannot open /nonexistent: No such file or directory (is the module loaded? try: sudo insmod kmod/kring.ko)" ]
	}
	step tool-stat-no-device tool_stat_nodev
	# report, script and export on a real recording (a second of every
	# CPU's sched and timer): they agree with each other and with what
	# kring record says it wrote.
	tool_view() {
		/kring/kring record -a -e sched -e timer -d 1 -o /tmp/view.data >/tmp/view-rec.out 2>&1 ||
			{ cat /tmp/view-rec.out; return 1; }
		/kring/kring report --svg /tmp/view.svg /tmp/view.data >/tmp/view.out 2>&1
		r=$?
		tail -n 1 /tmp/view-rec.out
		cat /tmp/view.out
		/kring/kring script /tmp/view.data >/tmp/view.script &&
			/kring/kring export --chrome /tmp/view.json /tmp/view.data >/tmp/view-export.out &&
			tail -n 1 /tmp/view-export.out || return 1
		view_records=$(summary_field records /tmp/view.out)
		echo "script: $(grep -vc '^summary ' /tmp/view.script) lines," \
			"$(grep -c ' switch-out ' /tmp/view.script) switch-out, $(grep -c ' sample ' /tmp/view.script) sample"
		[ $r = 0 ] && [ "$(summary_field truncated /tmp/view.out)" = 0 ] &&
			[ "$(summary_field switch_out /tmp/view.out)" = "$(summary_field switches /tmp/view-rec.out)" ] &&
			[ "$(summary_field samples /tmp/view.out)" = "$(summary_field samples /tmp/view-rec.out)" ] &&
			[ "$(summary_field switches /tmp/view.out)" -gt 0 ] &&
			[ "$(summary_field samples /tmp/view.out)" -gt 0 ] &&
			[ "$(grep -vc '^summary ' /tmp/view.script)" = "$view_records" ] &&
			[ "$(grep -c ' switch-out ' /tmp/view.script)" = "$(summary_field switch_out /tmp/view.out)" ] &&
			[ "$(grep -c ' sample ' /tmp/view.script)" = "$(summary_field samples /tmp/view.out)" ] &&
			[ "$(summary_field cpus /tmp/view-export.out)" = 2 ] &&
			[ "$(grep -c '<g class="cpu"' /tmp/view.svg)" = 2 ]
	}
	step tool-view tool_view
fi

# kring record end to end (not when a test filter narrows the run): files
# in /kring/out/, which run.sh --outdir brings back to the host, where
# tests/tool/perf_check.py runs Debian's perf on them (check.sh). Here each
# step checks the tool's exit status and its summary line.
# rec_ok FILE KEY=VALUE...: the summary of FILE has every KEY=VALUE.
rec_ok() {
	f=$1; shift
	for kv in "$@"; do
		v=$(summary_field "${kv%%=*}" "$f")
		[ "$v" = "${kv#*=}" ] || { echo "record: ${kv%%=*}=$v, want ${kv#*=}"; return 1; }
	done
}
# A known ping-pong (tests/tool/pingpong.c) as a command, sched with
# wakeups and timer, into 4 MiB rings (the wakeups double its records): its
# own count of switches goes to pingpong.expect;
# perf sched reads the sched tracepoints (perf_check.py).
rec_pingpong() {
	/kring/kring record -e sched:wakeups -e timer -m 1024 -o /kring/out/pingpong.data -- \
		/kring/pingpong 2000 /kring/out/pingpong.expect >/tmp/rec.out 2>&1
	r=$?
	cat /tmp/rec.out /kring/out/pingpong.expect
	[ $r = 0 ] && rec_ok /tmp/rec.out command_status=0 lost=0 bad=0 &&
		[ "$(summary_field switches /tmp/rec.out)" -gt 2000 ]
}
# A hot function under the timer (tests/tool/busy.c); a second record to
# the same name keeps the first as busy.data.old, as perf does.
rec_busy() {
	/kring/kring record -e timer -o /kring/out/busy.data -- /kring/busy 1500 >/tmp/rec.out 2>&1
	r=$?
	cat /tmp/rec.out
	[ $r = 0 ] && rec_ok /tmp/rec.out command_status=0 lost=0 bad=0 || return 1
	[ "$(summary_field samples /tmp/rec.out)" -gt 100 ] || return 1
	/kring/kring record -e timer -o /tmp/old.data -- /kring/busy 10 >/dev/null &&
		/kring/kring record -e timer -o /tmp/old.data -- /kring/busy 10 >/dev/null &&
		[ -s /tmp/old.data.old ] && [ -s /tmp/old.data ] && echo "old file kept as /tmp/old.data.old"
}
# The same with call chains (-g): perf report -g on the host shows main ->
# busy_worker -> busy_hot (perf_check.py busy-callgraph), and so does go
# tool pprof on its pprof export, made here where /kring/busy's symbols are
# (busy-pprof; a kring built without pprof support, the arm64 guests',
# says so and the host says skipped).
rec_busy_g() {
	/kring/kring record -g -e timer -o /kring/out/busy-g.data -- /kring/busy 1500 >/tmp/rec.out 2>&1
	r=$?
	cat /tmp/rec.out
	[ $r = 0 ] && rec_ok /tmp/rec.out command_status=0 lost=0 bad=0 &&
		[ "$(summary_field samples /tmp/rec.out)" -gt 100 ] || return 1
	/kring/kring export --pprof /kring/out/busy-g.pb.gz /kring/out/busy-g.data >/tmp/exp.out 2>&1
	r=$?
	cat /tmp/exp.out
	[ $r = 0 ] || grep -q 'built without pprof support' /tmp/exp.out
}
# System-wide sched + timer + AUX snapshots: one snapshot per AUX ring at
# the end without triggers; with SIGUSR2 and 'snapshot' in the control fifo,
# two more (summary snapshots= per ring; the host counts AUXTRACE records).
rec_aux_base() {
	/kring/kring record -a -e sched -e timer -e aux --snapshot -m 256 -d 2 \
		-o /kring/out/aux-base.data >/tmp/rec.out 2>&1
	r=$?
	cat /tmp/rec.out
	[ $r = 0 ] && rec_ok /tmp/rec.out snapshots=1 lost=0 bad=0
}
rec_aux_trig() {
	rm -f /tmp/rec-ctl
	/kring/kring record -a -e sched -e timer -e aux --snapshot -m 256 \
		--control fifo:/tmp/rec-ctl -o /kring/out/aux-trig.data >/tmp/rec.out 2>&1 &
	p=$!
	# The fifo exists once the signals are routed to the recorder; it
	# takes the triggers in order, each snapshot before a stop read with it.
	wait_for 120 test -p /tmp/rec-ctl
	sleep 1
	kill -USR2 $p
	sleep 0.5
	echo snapshot >/tmp/rec-ctl
	sleep 0.5
	echo stop >/tmp/rec-ctl
	wait $p
	r=$?
	cat /tmp/rec.out
	[ $r = 0 ] && rec_ok /tmp/rec.out snapshots=3 lost=0 bad=0
}
# SIGINT after 1 s (once the recorder takes SIGINT: a background job
# ignores it until then): a complete file (kring report reads it whole;
# perf on the host).
rec_sigint() {
	/kring/kring record -a -e sched -e timer -m 256 -o /kring/out/sigint.data >/tmp/rec.out 2>&1 &
	p=$!
	wait_for 120 sigint_routed $p
	sleep 1
	kill -INT $p
	wait $p
	r=$?
	cat /tmp/rec.out
	[ $r = 0 ] && rec_ok /tmp/rec.out stopped_by_signal=1 bad=0 || return 1
	/kring/kring report /kring/out/sigint.data >/tmp/rep.out 2>&1
	r=$?
	if [ $r != 0 ] || [ "$(summary_field truncated /tmp/rep.out)" != 0 ]; then
		cat /tmp/rep.out
		return 1
	fi
	echo "kring report read the whole file: $(grep '^summary' /tmp/rep.out)"
}
# The busy program again, streamed (-o -, perf's pipe format) through a
# pipe: the summary on stderr, the command's output kept out of the stream,
# kring report -i - reads it whole (perf on the host: busy.pipe). A reader
# that goes away after 4 KiB: one line on stderr, exit 1, and the recording
# stops there (each round is sent as it completes): the command, which
# would run for 60 s, gets SIGTERM (status 143). A system-wide stream
# interrupted by SIGINT ends complete.
rec_pipe() {
	{ /kring/kring record -e timer -o - -- /kring/busy 1500 2>/tmp/rec.out; echo $? >/tmp/rec.rc; } |
		cat >/kring/out/busy.pipe
	r=$(cat /tmp/rec.rc)
	cat /tmp/rec.out
	[ "$r" = 0 ] && rec_ok /tmp/rec.out command_status=0 lost=0 bad=0 || return 1
	/kring/kring report -i - </kring/out/busy.pipe >/tmp/rep.out 2>&1
	r=$?
	if [ $r != 0 ] || [ "$(summary_field truncated /tmp/rep.out)" != 0 ] ||
		[ "$(summary_field samples /tmp/rep.out)" != "$(summary_field samples /tmp/rec.out)" ]; then
		cat /tmp/rep.out
		return 1
	fi
	echo "kring report -i - read the whole stream: $(grep '^summary' /tmp/rep.out)"
	{ /kring/kring record -e timer -o - -- /kring/busy 60000 2>/tmp/rec.out; echo $? >/tmp/rec.rc; } |
		head -c 4096 >/dev/null
	r=$(cat /tmp/rec.rc)
	cat /tmp/rec.out
	[ "$r" = 1 ] && [ "$(grep -c '^kring: ' /tmp/rec.out)" = 1 ] &&
		grep -q '^kring: .*Broken pipe' /tmp/rec.out && rec_ok /tmp/rec.out command_status=143 ||
		return 1
	# Ctrl-C on a stream: SIGINT once the recorder takes it, and the
	# stream still ends complete (its features last), read whole.
	rm -f /tmp/rec.pid
	{
		/kring/kring record -a -e sched -e timer -o - 2>/tmp/rec.out &
		echo $! >/tmp/rec.pid
		wait $!
		echo $? >/tmp/rec.rc
	} | cat >/kring/out/sigint.pipe &
	pp=$!
	wait_for 120 test -s /tmp/rec.pid
	p=$(cat /tmp/rec.pid)
	wait_for 120 sigint_routed "$p"
	sleep 1
	kill -INT "$p"
	wait $pp
	r=$(cat /tmp/rec.rc)
	cat /tmp/rec.out
	[ "$r" = 0 ] && rec_ok /tmp/rec.out stopped_by_signal=1 bad=0 || return 1
	/kring/kring report -i - </kring/out/sigint.pipe >/tmp/rep.out 2>&1
	r=$?
	if [ $r != 0 ] || [ "$(summary_field truncated /tmp/rep.out)" != 0 ]; then
		cat /tmp/rep.out
		return 1
	fi
	echo "kring report -i - read the whole interrupted stream: $(grep '^summary' /tmp/rep.out)"
}
# A producer module's records (-e producer): the command loads
# kmod/examples/kring_example.c into the channel whose id it finds in
# KRING_CHANNEL_ID. The module writes N SAMPLE records of text, which it
# does not describe (counted, not written), and two records of its own
# type, described, each holding N (total=N): kring:kring_example samples.
# With -e sched: the tracing data holds the kernel's sched formats and the
# producer's. kring script decodes them here, perf script on the host
# (perf_check.py producer-fields, from producer.expect).
rec_producer() {
	[ -r /kring/kring_example.ko ] || { echo "no /kring/kring_example.ko (see the sdk result)"; return 1; }
	n=7
	# shellcheck disable=SC2016 # expanded by the command's shell
	/kring/kring record -e sched -e producer -o /kring/out/producer.data -- \
		sh -c 'exec insmod /kring/kring_example.ko channel=$KRING_CHANNEL_ID count='$n \
		>/tmp/rec.out 2>&1
	r=$?
	cat /tmp/rec.out
	rmmod kring_example || return 1
	[ $r = 0 ] && rec_ok /tmp/rec.out command_status=0 lost=0 bad=0 producer_formats=1 \
		producer_records=2 producer_undescribed=$n producer_short=0 || return 1
	grep -q "^kring: note: $n producer records of types without a format were not written (type 0x9: $n)\$" \
		/tmp/rec.out || { echo "no note of the $n undescribed records"; return 1; }
	echo "records=2 total=$n" >/kring/out/producer.expect
	/kring/kring script /kring/out/producer.data >/tmp/script.out 2>&1
	r=$?
	grep ' evname=kring:kring_example ' /tmp/script.out
	tail -n 1 /tmp/script.out
	# Decoded with libtraceevent (decoded=0 from a kring built without it).
	[ $r = 0 ] && {
		[ "$(grep -c " tracepoint .* evname=kring:kring_example total=$n\$" /tmp/script.out)" = 2 ] ||
			[ "$(grep -c " tracepoint .* evname=kring:kring_example decoded=0\$" /tmp/script.out)" = 2 ]
	}
}
# perf's events through the event source (KRING_SOURCE_EVENT), skipped
# while the module lacks it (its feature bit, as kring info shows it).
# System-wide around a workload that execs three busybox applets by full
# paths of their own: kring script shows each path as the decoded
# filename= of sched:sched_process_exec, and on the host perf script must
# print them (perf_check.py events-exec, from events-exec.expect); irq:*
# rides along. Then every page fault of a known workload (-c 1): busy 10
# touches its stack and heap, so at least one.
has_feature() { /kring/kring info 2>/dev/null | grep -Eq "^features .*[( ]$1[ )]"; }
rec_events() {
	has_feature event || { echo "SKIP: needs the event source (KRING_FEAT_EVENT)"; return 77; }
	d=/tmp/evbin
	rm -rf $d && mkdir -p $d || return 1
	for a in true echo uname; do ln -s /bin/busybox $d/$a || return 1; done
	/kring/kring record -a -e 'irq:*,sched:sched_process_exec' -o /kring/out/events-exec.data \
		-- sh -c "$d/true; $d/echo x >/dev/null; $d/uname >/dev/null" >/tmp/rec.out 2>&1
	r=$?
	cat /tmp/rec.out
	[ $r = 0 ] && rec_ok /tmp/rec.out command_status=0 lost=0 bad=0 || return 1
	printf '%s\n' $d/true $d/echo $d/uname >/kring/out/events-exec.expect
	/kring/kring script /kring/out/events-exec.data >/tmp/script.out 2>&1 || return 1
	for a in true echo uname; do
		grep -q " evname=sched:sched_process_exec filename=$d/$a " /tmp/script.out ||
			grep -q " evname=sched:sched_process_exec decoded=0" /tmp/script.out ||
			{ echo "no exec of $d/$a in kring script"; return 1; }
	done
	/kring/kring record -e page-faults -c 1 -o /kring/out/events-faults.data -- /kring/busy 10 \
		>/tmp/rec.out 2>&1
	r=$?
	cat /tmp/rec.out
	[ $r = 0 ] && rec_ok /tmp/rec.out command_status=0 lost=0 bad=0 &&
		[ "$(summary_field event_samples /tmp/rec.out)" -gt 0 ]
}
if [ -x /kring/kring ] && [ -x /kring/pingpong ] && [ -x /kring/busy ] &&
	{ { [ -z "${GTEST_FILTER:-}" ] && [ -z "$only" ]; } || [ "$only" = record ]; }; then
	mkdir -p /kring/out
	cp /proc/kallsyms /kring/out/kallsyms
	step record-pingpong rec_pingpong
	step record-busy rec_busy
	step record-callgraph rec_busy_g
	step record-aux-base rec_aux_base
	step record-aux-trig rec_aux_trig
	step record-sigint rec_sigint
	step record-pipe rec_pipe
	step record-producer rec_producer
	step record-events rec_events
fi

# The syscall fuzzer (tests/fuzz/): seeded random programs of kring
# syscalls over several processes and threads, one worker as nobody, the
# test generators open to every user as an administrator may, CPU 1 going
# offline and back. Longest on the debug kernel (KASAN, lockdep, kmemleak)
# and longer again in check-full. A failure prints the seed to replay:
# FUZZ_SEED=N KERNELS=K GTEST_FILTER= tools/dev/check.sh, or in make
# vm-shell the "replay:" line it printed.
fuzz() {
	case ${KRING_KERNEL:-}:${KRING_FULL:-0} in
	debug*:1 | kcsan:1) ops=500000 ;;
	*:1) ops=100000 ;;
	debug*:0) ops=50000 ;;
	*) ops=20000 ;;
	esac
	echo 1 >/sys/module/kring/parameters/test_sources
	/kring/kring_fuzz --seed "${FUZZ_SEED:-1}" --ops $ops --hotplug --time-limit 1800
	r=$?
	echo 0 >/sys/module/kring/parameters/test_sources
	return $r
}
if [ -x /kring/kring_fuzz ] && [ -z "${GTEST_FILTER:-}" ] && [ -z "$only" ]; then
	step fuzz fuzz
fi

# Stress with exact accounting (tests/stress/): on every CPU a synthetic
# generator with softirq and hrtimer writers nesting in it, sched and
# timer capture channels and an AUX tracer, consumers at a random pace;
# passes when every record is intact and produced = delivered + lost.
stress() {
	secs=20
	[ "${KRING_FULL:-0}" = 1 ] && secs=300
	/kring/kring_stress --seconds $secs --seed "${FUZZ_SEED:-1}"
}
if [ -x /kring/kring_stress ] && [ -z "${GTEST_FILTER:-}" ] && [ -z "$only" ]; then
	step stress stress
fi

# The producer, tracepoint and end-to-end benchmarks once, briefly, as a smoke test
# (make bench runs them in earnest): passes when every ring (kring's,
# ftrace's, perf's) accounted for every record in every run; times are
# printed, never asserted.
bench_smoke() {
	insmod /kring/kring_bench.ko || return 1
	/kring/producer_bench --smoke
	r=$?
	/kring/producer_bench --smoke --kring-write call || r=1
	if [ -x /kring/tracepoint_bench ]; then
		/kring/tracepoint_bench --smoke || r=1
	fi
	if [ -x /kring/e2e_bench ]; then
		/kring/e2e_bench --smoke || r=1
	fi
	rmmod kring_bench
	return $r
}
if [ -x /kring/producer_bench ] && [ -f /kring/kring_bench.ko ] && [ -z "${GTEST_FILTER:-}" ] &&
	{ [ -z "$only" ] || [ "$only" = bench ]; }; then
	step bench-smoke bench_smoke
fi

if [ -f /kring/kring_kunit.ko ] && { [ -z "$only" ] || [ "$only" = kunit ]; }; then
	# KUnit suites run when the module loads; debugfs keeps their KTAP.
	if step insmod-kring_kunit insmod /kring/kring_kunit.ko; then
		for d in /sys/kernel/debug/kunit/kring_*; do
			[ -d "$d" ] || continue
			s=$(basename "$d")
			echo "==== KRING-BEGIN ktap $s"
			cat "$d/results"
			echo "==== KRING-END ktap $s"
		done
		step rmmod-kring_kunit rmmod kring_kunit
	fi
fi

# KUnit cases map and open channels from kernel threads, whose last fput()
# is deferred to a workqueue: the module can stay busy for a moment after
# kring_kunit is gone (longer on a loaded host). Anything that still holds
# it after a minute is a leak.
rmmod_kring() {
	wait_for 60 rmmod kring 2>/dev/null || rmmod kring
}
step rmmod-kring rmmod_kring
exit $rc

#!/bin/sh
# Guest script of text-poke-check.sh: toggle the sched tracepoints (each
# toggle rewrites their static keys' sites with text_poke_bp()) while both
# vCPUs run wakeup-heavy pipelines, for SECS seconds of uptime.
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
t=/sys/kernel/tracing/events/sched
secs=$(cat /kring/secs)
for _ in 1 2 3; do (yes | cat >/dev/null) & done
end=$(($(cut -d. -f1 /proc/uptime) + secs))
n=0
while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do
	for e in sched_wakeup sched_switch sched_waking; do echo 1 >"$t/$e/enable"; done
	for e in sched_wakeup sched_switch sched_waking; do echo 0 >"$t/$e/enable"; done
	n=$((n + 1))
done
echo "text-poke-guest: $n rounds of 6 tracepoint toggles in $secs s"
[ "$n" -gt 0 ]

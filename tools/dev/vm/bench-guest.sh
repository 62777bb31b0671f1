# Guest half of `make bench` (runs as /kring/run.sh inside the VM): load
# kring and the benchmark module, run producer_bench, tracepoint_bench,
# e2e_bench and switch_bench with the arguments the host put in /kring/env
# (BENCH_ARGS, TP_BENCH_ARGS, E2E_BENCH_ARGS, SWITCH_BENCH_ARGS),
# between markers tools/dev/bench.sh cuts the output at.
[ -f /kring/env ] && . /kring/env
insmod /kring/kring.ko || exit 1
insmod /kring/kring_bench.ko || exit 1
echo "==== KRING-BENCH-BEGIN $(uname -r)"
# shellcheck disable=SC2086 # BENCH_ARGS is a list of options
/kring/producer_bench $BENCH_ARGS
rc=$?
# shellcheck disable=SC2086 # TP_BENCH_ARGS is a list of options
/kring/tracepoint_bench $TP_BENCH_ARGS || rc=1
# shellcheck disable=SC2086 # E2E_BENCH_ARGS is a list of options
/kring/e2e_bench $E2E_BENCH_ARGS || rc=1
# shellcheck disable=SC2086 # SWITCH_BENCH_ARGS is a list of options
/kring/switch_bench $SWITCH_BENCH_ARGS || rc=1
echo "==== KRING-BENCH-END rc=$rc"
rmmod kring_bench
exit $rc

# Recording into perf.data: every CPU's context switches, a 1 kHz timer and
# the emulated tracer in snapshot mode for 3 s, one AUX snapshot on SIGUSR2
# on the way; then kring report on the file. demo.sh brings the file back
# to the host and runs perf report on it there.
echo
echo "# record: every CPU, sched + timer + AUX snapshots, 3 s, while two busy loops run"
mkdir -p /kring/out
cp /proc/kallsyms /kring/out/kallsyms
(i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done) &
b1=$!
(while :; do usleep 20000; done) &
s1=$!
echo "\$ kring record -a -e sched -e timer -e aux --snapshot -m 256 -d 3 -o /kring/out/demo.data &"
/kring/kring record -a -e sched -e timer -e aux --snapshot -m 256 -d 3 -o /kring/out/demo.data &
rec=$!
sleep 1
echo "\$ kill -USR2 $rec     # an AUX snapshot now (and one at the end)"
kill -USR2 $rec
wait $rec || exit 1
kill $b1 $s1 2>/dev/null
wait 2>/dev/null
echo
if /kring/kring report --help >/dev/null 2>&1; then
	echo "\$ kring report /kring/out/demo.data"
	/kring/kring report /kring/out/demo.data || exit 1
else
	echo "(this kring has no report command: skipped)"
fi

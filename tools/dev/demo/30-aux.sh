# The AUX area: kring's emulated hardware tracer writes packets straight
# into the AUX pages; AUX records in the data ring announce the extents.
echo
echo "# normal mode: a consumer that naps 20 ms loses data; every gap follows a TRUNCATED extent"
echo "\$ kring aux --order 1 --ms 200 --sleep-ms 20"
/kring/kring aux --order 1 --ms 200 --sleep-ms 20 || exit 1
echo
echo "# snapshot mode: the tracer overwrites a 4-page area; each request stops it,"
echo "# the newest window is decoded, and it resumes (SIGUSR2 or the control fifo)"
echo "\$ kring aux --snapshot --order 2 --ms 0 --control /tmp/aux-ctl &"
/kring/kring aux --snapshot --order 2 --ms 0 --control /tmp/aux-ctl &
aux=$!
sleep 1
echo "\$ kill -USR2 $aux"
kill -USR2 $aux
sleep 1
echo "\$ echo snapshot > /tmp/aux-ctl; echo stop > /tmp/aux-ctl"
echo snapshot >/tmp/aux-ctl
sleep 1
echo stop >/tmp/aux-ctl
wait $aux || exit 1
echo
echo "# task mode: the tracer follows one task on and off the CPUs; packets only"
echo "# for the time it ran (a shell loop: a burst of work, a 10 ms sleep, again)"
echo "\$ kring aux --pid <a shell loop sleeping 10 ms between bursts> --ms 300"
sh -c 'while :; do i=0; while [ $i -lt 200 ]; do i=$((i+1)); done; usleep 10000; done' &
loop=$!
/kring/kring aux --pid $loop --order 4 --ms 300 || { kill $loop; exit 1; }
kill $loop

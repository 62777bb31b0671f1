# A real capture: the sched source on every CPU (system-wide) for one
# second while a few tasks keep the CPUs busy, summarised per task.
echo
echo "# system-wide sched capture for 1 s while two busy loops and a sleeper run"
(i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done) &
b1=$!
(i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done) &
b2=$!
(for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.05; done) &
s1=$!
echo "\$ kring sched --all-cpus --duration 1 --top 12"
/kring/kring sched --all-cpus --duration 1 --top 12 || exit 1
kill $b1 $b2 $s1 2>/dev/null
wait 2>/dev/null
echo
echo "# one task followed with inherit: a shell that forks three children once the capture runs"
rm -f /tmp/kring-go && mkfifo /tmp/kring-go
sh -c 'read x </tmp/kring-go; for i in 1 2 3; do (j=0; while [ $j -lt 3000 ]; do j=$((j+1)); done) & done; wait' &
p=$!
echo "\$ kring sched --pid $p --all-cpus --inherit --duration 1"
/kring/kring sched --pid $p --all-cpus --inherit --duration 1 &
k=$!
sleep 0.2
echo go >/tmp/kring-go
wait $k || exit 1
wait 2>/dev/null
rm -f /tmp/kring-go

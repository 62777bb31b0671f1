# A program with symbols and frame pointers (tests/tool/busy.c: main ->
# busy_worker -> busy_hot) profiled with call chains, and a ping-pong of
# two processes (tests/tool/pingpong.c) recorded with its wakeups; the
# timeline of the second as SVG. demo.sh shows perf report -g and perf
# sched latency on the host, and where the SVG is.
echo
echo "# profile: a program's call graph (-g), and a ping-pong's scheduling"
echo "\$ kring record -g -e timer -o /kring/out/busy-g.data -- /kring/busy 1500"
/kring/kring record -g -e timer -o /kring/out/busy-g.data -- /kring/busy 1500 || exit 1
echo "\$ kring record -e sched:wakeups -m 256 -o /kring/out/pingpong.data -- /kring/pingpong 2000 /tmp/pingpong.expect"
/kring/kring record -e sched:wakeups -m 256 -o /kring/out/pingpong.data -- \
	/kring/pingpong 2000 /tmp/pingpong.expect || exit 1
echo "\$ kring report --svg /kring/out/pingpong.svg /kring/out/pingpong.data"
/kring/kring report --svg /kring/out/pingpong.svg /kring/out/pingpong.data >/dev/null || exit 1

# Guest half of `make check` (runs as /kring/run.sh inside the VM).
# /kring holds kring.ko, maybe kring_kunit.ko, the test binaries in bin/ and
# env (settings from the host). Output blocks are parsed by results.py.
[ -f /kring/env ] && . /kring/env
rc=0

step() { # step NAME CMD...: run CMD, report it as one result
	name=$1; shift
	echo "==== KRING-BEGIN step $name"
	"$@"
	r=$?
	echo "==== KRING-END step $name rc=$r"
	[ $r = 0 ] || rc=1
	return $r
}

if ! step insmod-kring insmod /kring/kring.ko; then
	dmesg | tail -20
	exit 1
fi

for t in /kring/bin/*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	echo "==== KRING-BEGIN gtest $name"
	if [ -n "${GTEST_FILTER:-}" ]; then
		"$t" --gtest_color=no --gtest_filter="$GTEST_FILTER" >/tmp/"$name".out 2>&1
	else
		"$t" --gtest_color=no >/tmp/"$name".out 2>&1
	fi
	r=$?
	cat /tmp/"$name".out
	echo "==== KRING-END gtest $name rc=$r"
	[ $r = 0 ] || rc=1
done

if [ -f /kring/kring_kunit.ko ]; then
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

step rmmod-kring rmmod kring
exit $rc

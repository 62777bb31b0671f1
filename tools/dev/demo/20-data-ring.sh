# The data ring at work: one synthetic generator per CPU, flat out, into a
# 4-page ring per CPU; the consumer naps 1 ms between passes, so records
# are lost, and every one of them is accounted for.
echo
echo "# a synthetic generator per CPU, 50000 records each, 4-page rings, a napping consumer"
echo "\$ kring synth --count 50000 --order 2 --sleep-us 1000"
/kring/kring synth --count 50000 --order 2 --sleep-us 1000 || exit 1
echo
echo "# the same with a 64-page mirrored ring and a consumer that never naps"
echo "\$ kring synth --count 50000 --order 6 --mirror --sleep-us 0"
/kring/kring synth --count 50000 --order 6 --mirror --sleep-us 0 || exit 1

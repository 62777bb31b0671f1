# libkring's merger: the per-CPU rings read as one stream ordered by time,
# every record verified, the order checked record by record.
echo
echo "# per-CPU synthetic generators merged into one time-ordered stream (libkring's merger)"
echo "\$ kring synth --count 20000 --rate 20000 --order 5 --merge --sleep-us 2000"
/kring/kring synth --count 20000 --rate 20000 --order 5 --merge --sleep-us 2000 || exit 1

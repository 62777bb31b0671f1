# The AUX area: kring's emulated hardware tracer writes packets straight
# into the AUX pages; AUX records in the data ring announce the extents.
echo
echo "# normal mode: a consumer that naps 20 ms loses data; every gap follows a TRUNCATED extent"
echo "\$ kring aux --order 1 --ms 200 --sleep-ms 20"
/kring/kring aux --order 1 --ms 200 --sleep-ms 20 || exit 1
echo
echo "# snapshot mode: the tracer overwrites a 4-page area; a snapshot returns the newest packets"
echo "\$ kring aux --snapshot --order 2 --ms 200"
/kring/kring aux --snapshot --order 2 --ms 200 || exit 1

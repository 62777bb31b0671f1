#!/usr/bin/env bash
# The man pages of the kring tool (the kring_man target, help2man from
# --help): kring.1 and kring-<command>.1 for every command the tool lists,
# each a man page titled after it (.TH KRING-REPORT) that names every long
# option its --help lists.
# usage: man_test.sh KRING_BINARY MAN_DIR
set -euo pipefail
kring=$1
dir=$2
fail=0
cmds=$("$kring" --help | sed -n '/^Subcommands:/,/^[^ ]/p' | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p')
[ -n "$cmds" ] || { echo "no commands in kring --help"; exit 1; }
check() { # page, title, help text
	local page=$1 title=$2 help=$3 opts o
	if [ ! -s "$page" ]; then
		echo "missing: $page"
		fail=1
		return
	fi
	grep -q "^\\.TH \"\\?$title\"\\? " "$page" || { echo "$page: not titled $title"; fail=1; }
	opts=$(echo "$help" | grep -o -- '--[a-z][a-z-]*' | sort -u)
	[ -n "$opts" ] || { echo "$page: --help lists no options"; fail=1; }
	for o in $opts; do
		# help2man writes a dash as \-
		if ! grep -q -- "$(echo "$o" | sed 's/-/\\\\-/g')" "$page"; then
			echo "$page: does not name $o"
			fail=1
		fi
	done
	echo "$page: $(echo "$opts" | wc -w) options named"
}
check "$dir/kring.1" KRING "$("$kring" --help)"
for c in $cmds; do
	check "$dir/kring-$c.1" "KRING-$(echo "$c" | tr a-z A-Z)" "$("$kring" "$c" --help)"
done
exit $fail

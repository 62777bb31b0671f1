#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Print the include graph of kring.ko's sources: one line per file of kmod/
# (sources/ and examples/ included) with the project headers it includes,
# followed by the header-to-header edges in dot form with --dot.
#
#   tools/dev/include-graph.sh              file: header header ...
#   tools/dev/include-graph.sh --dot        digraph for graphviz
#   tools/dev/include-graph.sh --calls DIR  file: the files whose symbols it
#	uses, from the objects of a module build (DIR: the build directory
#	tools/dev/build-modules.sh prints)
#
# Only quoted includes are followed: <linux/...> and the uapi header are
# outside the graph. Paths are relative to kmod/. tools/dev/layers.py
# (tools/dev/lint.sh layers) checks both graphs against the layers of
# docs/ARCHITECTURE.md.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)

dot=
case "${1:-}" in
--dot)
	dot=1
	;;
--calls)
	objdir=${2:?usage: include-graph.sh --calls BUILD_DIR}/kmod
	cd "$objdir"
	# Objects whose source is still there (a build directory keeps stale ones).
	objs=$(find . -name '*.o' ! -name '*.mod.o' ! -name kring.o |
	       sed 's|^\./||' | LC_ALL=C sort |
	       while read -r o; do [ -f "${o%.o}.c" ] && echo "$o"; done)
	defs=$(mktemp)
	trap 'rm -f "$defs"' EXIT
	for o in $objs; do
		nm --defined-only "$o" | awk -v f="${o%.o}.c" \
			'$2 ~ /^[TDRB]$/ && $3 !~ /^__/ { print $3, f }'
	done | LC_ALL=C sort -u >"$defs"
	for o in $objs; do
		printf '%s:' "${o%.o}.c"
		nm --undefined-only "$o" | awk '{ print $2 }' | LC_ALL=C sort -u |
			LC_ALL=C join - "$defs" | awk '{ print $2 }' |
			grep -v -x "${o%.o}.c" | LC_ALL=C sort -u | tr '\n' ' ' |
			sed 's/^/ /; s/ $//'
		printf '\n'
	done
	exit 0
	;;
esac
cd "$root/kmod"

files=$(find . -name '*.[ch]' | sed 's|^\./||' | LC_ALL=C sort)

# The project headers @1 includes, resolved against its own directory.
includes() {
	dir=$(dirname "$1")
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1" |
	while read -r inc; do
		p="$dir/$inc"
		# normalise a/../b and ./b
		p=$(echo "$p" | sed -e 's|^\./||' -e ':a' -e 's|[^/]*/\.\./||' -e 'ta')
		[ -f "$p" ] && echo "$p" || echo "$inc"
	done
}

if [ -n "$dot" ]; then
	echo "digraph kmod {"
	for f in $files; do
		for i in $(includes "$f"); do
			echo "	\"$f\" -> \"$i\";"
		done
	done
	echo "}"
	exit 0
fi

for f in $files; do
	printf '%s:' "$f"
	for i in $(includes "$f"); do
		printf ' %s' "$i"
	done
	printf '\n'
done

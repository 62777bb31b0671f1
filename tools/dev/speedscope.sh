#!/usr/bin/env bash
# speedscope, the offline viewer the browser tests (tests/tool/browser_test.cpp)
# open kring export --chrome's JSON in: its npm package, which ships a
# built release (dist/release/index.html), pinned to one version, checked
# against the sha512 integrity the npm registry publishes for it, and
# unpacked into the cache. Only tools/dev/deps.sh fetches it; the tests
# only ask where it is.
#
#   tools/dev/speedscope.sh fetch   # download and unpack unless present;
#                                   # print the release folder
#   tools/dev/speedscope.sh dir     # print the release folder; exit 1 if
#                                   # it was never fetched
set -euo pipefail

version=1.25.0
integrity=sha512-cpf9HWTZf1ijLXBJrk87Ve/54tnYx6rlf0gUThvn3ook6h63hLXVOQiMf44PT+XoV503cPfvfiT5gP5vojp6Ag==
cache=${KRING_CACHE:-$HOME/.cache/kring}
dir=$cache/speedscope/$version
release=$dir/package/dist/release

die() { echo "speedscope.sh: $*" >&2; exit 1; }

# The Subresource Integrity string of a file: sha512, base64.
sri() {
	python3 -c 'import base64, hashlib, sys
print("sha512-" + base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$1"
}

case ${1:-} in
dir)
	[ -f "$dir/.unpacked" ] ||
		die "speedscope $version is not in $cache/speedscope (tools/dev/deps.sh fetches it)"
	echo "$release"
	;;
fetch)
	if [ ! -f "$dir/.unpacked" ]; then
		command -v npm >/dev/null || die "npm is needed to fetch speedscope (tools/dev/deps.sh)"
		echo "speedscope.sh: fetching speedscope $version" >&2
		mkdir -p "$cache/speedscope"
		tmp=$(mktemp -d "$cache/speedscope/dl.XXXXXX")
		trap 'rm -rf "$tmp"' EXIT
		(cd "$tmp" && npm pack --silent "speedscope@$version" >/dev/null) ||
			die "npm pack speedscope@$version failed"
		tgz=$tmp/speedscope-$version.tgz
		[ -f "$tgz" ] || die "npm pack left no speedscope-$version.tgz"
		got=$(sri "$tgz")
		[ "$got" = "$integrity" ] ||
			die "speedscope-$version.tgz has integrity $got, not the pinned $integrity"
		mkdir "$tmp/out"
		tar -xzf "$tgz" -C "$tmp/out" || die "cannot unpack speedscope-$version.tgz"
		[ -f "$tmp/out/package/dist/release/index.html" ] ||
			die "speedscope-$version.tgz has no dist/release/index.html"
		rm -rf "$dir"
		mv "$tmp/out" "$dir"
		touch "$dir/.unpacked"
		# Other versions are dead weight now.
		find "$cache/speedscope" -mindepth 1 -maxdepth 1 ! -path "$dir" ! -path "$tmp" \
			-exec rm -rf {} + 2>/dev/null || true
	fi
	echo "$release"
	;;
*)
	die "usage: speedscope.sh fetch|dir"
	;;
esac

#!/usr/bin/env bash
# Sourced by kernel.sh and qemu.sh: apt-get/apt-cache on one Debian suite's
# package lists, kept in a folder of the cache with its own sources.list,
# lists and archive cache. The system's apt configuration is never read or
# changed; packages are downloaded, never installed.
#
#   debian_apt DIR SUITE apt-get|apt-cache ARGS...
#   debian_apt_refresh DIR SUITE    # update the lists, at most every 30 min
debian_apt() {
	local dir=$1 suite=$2 tool=$3
	shift 3
	mkdir -p "$dir/lists/partial" "$dir/archives/partial"
	[ -f "$dir/sources.list" ] ||
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
			>"$dir/sources.list"
	"$tool" -q -o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=/nonexistent \
		-o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir" -o Dir::Cache::archives="$dir/archives" \
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root "$@"
}

# One refresh of the lists serves the calls of one check run.
debian_apt_refresh() {
	local stamp=$1/updated
	[ -n "$(find "$stamp" -mmin -30 2>/dev/null)" ] && return 0
	debian_apt "$1" "$2" apt-get update >/dev/null 2>&1 || return 1
	touch "$stamp"
}

#!/usr/bin/env bash
# shellcheck disable=SC2034  # ccache_cmake is for the sourcing script
# Sourced by the user-space builds (build-user.sh, fuzz.sh): compile through
# ccache when it is installed, with its cache in $KRING_CACHE/ccache (default
# ~/.cache/kring/ccache), so that a fresh clone with a warm cache (CI, a
# second checkout) rebuilds user space from the cache. Paths are hashed
# relative to the tree ($1), so clones in different folders share entries.
# Sets ccache_cmake: the CMake arguments that put ccache in front of the
# compilers (empty without ccache).
#
#   . tools/dev/ccache.sh TOP
ccache_cmake=()
if command -v ccache >/dev/null; then
	export CCACHE_DIR=${CCACHE_DIR:-${KRING_CACHE:-$HOME/.cache/kring}/ccache}
	export CCACHE_BASEDIR=$1 CCACHE_NOHASHDIR=1
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-3G}
	ccache_cmake=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

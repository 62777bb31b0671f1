#!/usr/bin/env bash
# Configure and build libkring, the kring tool and the test binaries in
# $KRING_BUILD/user (default build/user); with arguments, only those
# CMake targets (e.g. kring_tool).
set -euo pipefail
# Variables given to the outer make travel in MAKEFLAGS into every make we
# start (and from there into the environment of test discovery): drop them.
unset MAKEFLAGS MAKEOVERRIDES MFLAGS
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
b=${KRING_BUILD:-$top/build}/user
cmake -S "$top" -B "$b" -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
targets=()
for t in "$@"; do
	targets+=(--target "$t")
done
cmake --build "$b" -j"$(nproc)" "${targets[@]}"

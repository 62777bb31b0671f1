#!/usr/bin/env bash
# Configure and build libkring, the kring tool and the test binaries in
# $KRING_BUILD/user (default build/user); with arguments, only those
# CMake targets (e.g. kring_tool).
#
#   tools/dev/build-user.sh [--arch ARCH] [TARGET...]
#
# --arch arm64: the programs an arm64 guest runs (libkring, the tool, the
# guest tests, fuzzer, stress, workloads and benchmarks), cross-built with
# g++-aarch64-linux-gnu and linked statically, in $KRING_BUILD/user-arm64.
# --arch amd64 (the host's) is the default. Prints the build directory.
set -euo pipefail
# Variables given to the outer make travel in MAKEFLAGS into every make we
# start (and from there into the environment of test discovery): drop them.
unset MAKEFLAGS MAKEOVERRIDES MFLAGS
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
arch=amd64
if [ "${1:-}" = --arch ]; then
	arch=${2:?build-user.sh: --arch needs an architecture}
	shift 2
fi
cfg=()
case $arch in
amd64) b=${KRING_BUILD:-$top/build}/user ;;
arm64)
	b=${KRING_BUILD:-$top/build}/user-arm64
	cfg=(-DCMAKE_TOOLCHAIN_FILE="$top/tools/dev/cmake/aarch64-linux-gnu.cmake" -DKRING_GUEST_ONLY=ON)
	;;
*) echo "build-user.sh: unknown architecture '$arch' (amd64, arm64)" >&2; exit 2 ;;
esac
# shellcheck source=tools/dev/ccache.sh
. "$top/tools/dev/ccache.sh" "$top"
cmake -S "$top" -B "$b" -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" \
	"${ccache_cmake[@]}" "${cfg[@]}" >/dev/null
targets=()
for t in "$@"; do
	targets+=(--target "$t")
done
cmake --build "$b" -j"$(nproc)" "${targets[@]}" >&2
echo "$b"

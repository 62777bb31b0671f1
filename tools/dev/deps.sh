#!/usr/bin/env bash
# Install what kring's build, tests and demo need, from Debian 12 packages.
# Idempotent and quiet when everything is present. Needs root (or sudo) only
# when something is missing.
set -euo pipefail

pkgs=(
	# module builds: the stock kernels' headers and the tools Kbuild runs
	build-essential bc flex bison libelf-dev libssl-dev kmod pahole
	linux-headers-amd64 linux-headers-6.12-amd64 linux-headers-6.12-rt-amd64
	# the kunit and kcsan kernels are built from this source (the debug
	# kernel from the newest Debian source, which kernel.sh downloads
	# with the archive keyring)
	linux-source-6.12 debian-archive-keyring xz-utils zstd cpio rsync python3
	# arm64 kernels and modules (make check-build, arm64-* kernels), and
	# the arm64 guests' programs (GoogleTest built from its source)
	gcc-aarch64-linux-gnu g++-aarch64-linux-gnu googletest
	# guests (an arm64 guest's busybox is fetched by tools/dev/vm/busybox.sh;
	# the guests' QEMU by tools/dev/vm/qemu.sh, and Debian 12's own brings
	# the firmware it boots, SeaBIOS and iPXE)
	qemu-system-x86 qemu-system-arm busybox-static file
	# static analysis of the module
	sparse
	# libkring, its tests and tools (ccache: a warm cache rebuilds them
	# from tools/dev/ccache.sh's cache)
	cmake ccache pkg-config libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev
	libcli11-dev nlohmann-json3-dev relacy-dev
	# the ring core's instruction counts (tools/dev/core-bench.sh)
	valgrind
	# one C++ style (tools/dev/lint.sh format), the scripts (lint.sh shellcheck)
	clang-format shellcheck
	# the functions' and files' sizes (tools/dev/lint.sh size)
	universal-ctags
	# libFuzzer (tools/dev/fuzz.sh): clang and its fuzzer runtime
	clang-14 libclang-rt-14-dev
	# perf.data written by kring record, read by perf's own tools in the
	# tests; man pages from --help; the report's SVG checked as XML
	linux-perf help2man libxml2-utils
	# the browser tests (tests/tool/browser_test.cpp): the SVG timeline and
	# speedscope with the Chrome JSON in headless Chromium, the screenshots
	# read with libpng
	chromium-headless-shell libpng-dev
	# kring export --pprof: google/pprof's profile.proto (protoc compiles
	# it at build time), libprotobuf, gzip, the mapped files' symbols;
	# go tool pprof reads the profiles in the tests
	golang-github-google-pprof-dev protobuf-compiler libprotobuf-dev zlib1g-dev libelf-dev
	golang-go
	# kring script: tracepoint fields decoded with libtraceevent
	libtraceevent-dev
)

# npm fetches speedscope (below); Debian's unless one is installed already.
command -v npm >/dev/null || pkgs+=(npm)

# The libraries of the guests' QEMU (fetched into the cache, not installed).
if libs=$("$(dirname "$0")/vm/qemu.sh" libs); then
	read -r -d '' -a qlibs <<<"$libs" || true
	pkgs+=("${qlibs[@]}")
else
	echo "deps.sh: the guests' QEMU could not be fetched (tools/dev/vm/qemu.sh)" >&2
fi

missing=()
for p in "${pkgs[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$p")
done
# The viewer of the browser tests, from the npm registry into the cache
# (tools/dev/speedscope.sh), once the packages are there. Without it the
# tests that open it say they were skipped, and why.
speedscope() {
	"$(dirname "$0")/speedscope.sh" fetch >/dev/null ||
		echo "deps.sh: speedscope could not be fetched (tools/dev/speedscope.sh)" >&2
}
[ ${#missing[@]} -eq 0 ] && { speedscope; exit 0; }

sudo=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null ||
		{ echo "deps.sh: missing packages (run as root): ${missing[*]}" >&2; exit 1; }
	sudo=sudo
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Package versions move with security updates: refresh the lists once, and
# again if an install fails on a stale list.
$sudo apt-get update -q >/dev/null
if ! $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/kring-deps.log 2>&1; then
	$sudo apt-get update -q >/dev/null
	$sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/kring-deps.log 2>&1 ||
		{ tail -20 /tmp/kring-deps.log >&2; echo "deps.sh: apt-get install failed" >&2; exit 1; }
fi
speedscope

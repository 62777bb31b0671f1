#!/usr/bin/env bash
# cmake --install the build tree into a temporary prefix, then build
# examples/ against it twice: with find_package(kring CONFIG) and with
# pkg-config (kring.pc).
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset MAKEFLAGS MAKEOVERRIDES MFLAGS
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/include/kring/kring.hpp"
test -f "$tmp/prefix/include/linux/kring.h"
cmake -S "$src/examples" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cmake" >/dev/null
test -x "$tmp/cmake/kring_consumer"
libdir=$(find "$tmp/prefix" -name kring.pc -printf '%h\n')
export PKG_CONFIG_PATH=$libdir
# shellcheck disable=SC2046
c++ -o "$tmp/pc_consumer" "$src/examples/consumer.cpp" $(pkg-config --cflags --libs kring)
test -x "$tmp/pc_consumer"
echo "installed libkring: example built with find_package and with pkg-config"

#!/usr/bin/env bash
# `make vm-shell KERNEL=NAME`: boot NAME with kring loaded and the kring tool
# and test binaries in /kring, and give the console to this terminal.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
k=${1:-stock-6.12}
# The programs of the kernel's architecture (cross-built for arm64).
ubuild=$("$top/tools/dev/build-user.sh" --arch "$("$top/tools/dev/vm/kernel.sh" arch "$k")")
mdir=$("$top/tools/dev/build-modules.sh" "$k")
image=$("$top/tools/dev/vm/kernel.sh" image "$k")
script=$(mktemp /tmp/kring-shell.XXXXXX.sh)
trap 'rm -f "$script"' EXIT
cat >"$script" <<'GUEST'
insmod /kring/kring.ko && echo "kring loaded: try /kring/kring info"
GUEST
files=(--file "$mdir/kmod/kring.ko" --file "$ubuild/tools/kring/kring")
[ -f "$mdir/tests/kunit/kring_kunit.ko" ] && files+=(--file "$mdir/tests/kunit/kring_kunit.ko")
for t in "$ubuild"/tests/vm/kring_vm_*; do
	[ -x "$t" ] && files+=(--file "$t:bin/$(basename "$t")")
done
exec "$top/tools/dev/vm/run.sh" --shell --image "$image" --script "$script" "${files[@]}"

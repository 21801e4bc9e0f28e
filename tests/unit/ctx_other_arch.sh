#!/bin/sh
# The sim's context switch for another architecture than the build machine's: cross-build
# tests/unit/ctx_selftest.c with framework/engine/sim/ctx.c and run it under qemu-user. ARCH is
# aarch64 (the assembly switch there cannot run on an x86-64 build machine otherwise).
# Skipped (77) when the cross compiler or qemu is not installed; CI installs both.
# usage: ctx_other_arch.sh SOURCE_ROOT ARCH
set -eu
src=$1
arch=$2
cc=$arch-linux-gnu-gcc
qemu=qemu-$arch
if [ "$(uname -m)" = "$arch" ]; then
	echo "the build machine is $arch: test_sim covers it"
	exit 77
fi
if ! command -v "$cc" >/dev/null || ! command -v "$qemu" >/dev/null; then
	echo "no $cc or $qemu: apt-get install gcc-$arch-linux-gnu qemu-user to run this test"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cc" -std=c11 -O2 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$src/framework" \
	"$src/tests/unit/ctx_selftest.c" "$src/framework/engine/sim/ctx.c" -o "$tmp/ctx_selftest"
"$qemu" -L "/usr/$arch-linux-gnu" "$tmp/ctx_selftest"

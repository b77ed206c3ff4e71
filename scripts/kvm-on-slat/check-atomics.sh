#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# libslat's __atomic builtins compiled to instructions in the kernel (LL/SC
# inline), not to calls of libgcc's out-of-line __aarch64_* helpers, which
# the kernel does not have: no object of libslat or the shim leaves one
# undefined, and vmlinux (when linked) has none.
#   check-atomics.sh BUILD   (the make O= folder of the libslat kernel)
set -euo pipefail
die() { echo "kvm-on-slat: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: check-atomics.sh BUILD"
objs=$(find "$1/arch/arm64/kvm/slat" -name '*.o' | sort)
[ -n "$objs" ] || die "no libslat objects under $1/arch/arm64/kvm/slat"
# shellcheck disable=SC2086
undef=$(aarch64-linux-gnu-nm -u $objs | grep -E ' __aarch64_' || true)
[ -z "$undef" ] || die "out-of-line atomics called: $undef"
if [ -e "$1/vmlinux" ] && aarch64-linux-gnu-nm "$1/vmlinux" | grep -q ' __aarch64_'; then
	die "vmlinux has __aarch64_* symbols"
fi
# shellcheck disable=SC2086
n=$(aarch64-linux-gnu-objdump -d $objs |
	grep -cE '\s(ldaxr|ldxr|stlxr|stxr|casa?l?|ldadda?l?)\s' || true)
[ "$n" -gt 0 ] || die "no atomic instruction in libslat's objects"
echo "kvm-on-slat: $(echo "$objs" | wc -l) libslat and shim objects," \
	"no __aarch64_* helper called, $n inline exclusive/atomic instructions" >&2

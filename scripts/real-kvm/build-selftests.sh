#!/usr/bin/env bash
# Build Linux's KVM selftests for arm64, statically linked, from Debian's
# linux-source-VERSION package, with linebuf.c linked in (their stdout line
# buffered; nothing else of them changes).
#   build-selftests.sh WORK [VERSION [TEST...]]
# VERSION defaults to 6.1, the tests to dirty_log_perf_test and
# kvm_page_table_test; an arm64-only test is named with its folder
# (aarch64/page_fault_test). The source tarball is extracted into WORK/src
# (once), the headers are installed into it (once) and the binaries are
# copied to WORK/bin, by their base names. A step whose result is already
# there is skipped.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "real-kvm: $*" >&2; }
die() { echo "real-kvm: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: build-selftests.sh WORK [VERSION [TEST...]]"
mkdir -p "$1/bin"
work=$(cd "$1" && pwd)
version=${2:-6.1}
tests=(dirty_log_perf_test kvm_page_table_test)
[ $# -le 2 ] || tests=("${@:3}")
done_all=1
for t in "${tests[@]}"; do
	[ -x "$work/bin/${t##*/}" ] || done_all=0
done
if [ $done_all = 1 ]; then
	exit 0
fi

command -v aarch64-linux-gnu-gcc >/dev/null ||
	die "no aarch64-linux-gnu-gcc: apt-get install gcc-aarch64-linux-gnu"
[ -e /usr/aarch64-linux-gnu/lib/libc.a ] ||
	die "no static arm64 libc: apt-get install libc6-dev-arm64-cross"
for c in make xz gcc; do
	command -v $c >/dev/null ||
		die "no $c: apt-get install make xz-utils gcc"
done

src=$work/src
if [ ! -e "$src/.extracted" ]; then
	tarball=$(ls "/usr/src/linux-source-$version.tar.xz" 2>/dev/null || true)
	[ -n "$tarball" ] ||
		die "no /usr/src/linux-source-$version.tar.xz: apt-get install linux-source-$version"
	say "extracting $tarball into $src (a few minutes)"
	rm -rf "$src" && mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1
	touch "$src/.extracted"
fi

cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
if [ ! -e "$src/.headers" ]; then
	say "installing the kernel's uapi headers into $src/usr"
	make -s -C "$src" "${cross[@]}" headers_install INSTALL_HDR_PATH=usr >&2
	touch "$src/.headers"
fi

say "building ${tests[*]} (arm64, static)"
kvm=$src/tools/testing/selftests/kvm
aarch64-linux-gnu-gcc -O2 -c "$here/linebuf.c" -o "$work/linebuf.o"
# Relink ours with linebuf.o.
rm -f "${tests[@]/#/$kvm/}"
# Only our targets (the directory's outputs are named by absolute path);
# -k: whatever else fails, ours are checked below. OUTPUT given: lib.mk
# sets it only in a top-level make, and under another make (make
# kvm-on-slat) the outputs would be named /TEST and ours left to make's
# built-in rule.
make -k -s -C "$kvm" "${cross[@]}" OUTPUT="$kvm" \
	LDFLAGS="-static -pthread -no-pie $work/linebuf.o" \
	-j"$(nproc)" "${tests[@]/#/$kvm/}" >&2 || true
for t in "${tests[@]}"; do
	b=$(find "$kvm" -name "${t##*/}" -type f -perm -u+x | head -n1)
	[ -n "$b" ] || die "$t did not build: see the make output above"
	cp "$b" "$work/bin/${t##*/}"
done
say "selftests in $work/bin"

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build arm64 kernels from Debian's linux-source-6.12 with the same
# trimmed configuration (kvm.config over allnoconfig): the stock one, and one
# whose KVM stage 2 is libslat's (docs/kvm-on-slat.md).
#   build.sh [--work DIR] [--jobs N] [stock|slat|slat-kasan|all]...
# slat-kasan is the libslat kernel with kasan.config added (KASAN); all is
# stock and slat, the default too.
# WORK (default build/kvm-on-slat under the repository) holds:
#   src/        the tarball, extracted once, never edited
#   slat-src/   a hard-linked copy of src/ with the edits of patch.sh
#   stock/ slat/ slat-kasan/  the build folders (make O=...), each with
#               arch/arm64/boot/Image
# Each kernel's build time is printed and kept in WORK/<kernel>.time.
set -euo pipefail
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"
jobs=2
kernels=()
while [ $# -gt 0 ]; do
	case $1 in
	--work) work=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	stock|slat|slat-kasan) kernels+=("$1"); shift ;;
	all) kernels+=(stock slat); shift ;;
	-h|--help) sed -n '3,14p' "$0"; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done
[ ${#kernels[@]} -gt 0 ] || kernels=(stock slat)
mkdir -p "$work"
work=$(cd "$work" && pwd)

command -v aarch64-linux-gnu-gcc >/dev/null ||
	die "no aarch64-linux-gnu-gcc: make kvm-on-slat installs it"
cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)

# The pristine source, once.
src=$work/src
if [ ! -e "$src/.extracted" ]; then
	tarball=/usr/src/linux-source-6.12.tar.xz
	[ -e $tarball ] || die "no $tarball: apt-get install linux-source-6.12"
	say "extracting $tarball into $src (a few minutes)"
	rm -rf "$src" && mkdir -p "$src"
	timeout 1800 tar -xJf $tarball -C "$src" --strip-components=1
	touch "$src/.extracted"
fi

# configure TREE OUT FRAGMENT...: allnoconfig with the fragments (kvm.config
# and any others, in this folder) forced, then a check that every symbol
# they set came out as asked.
configure() {
	local tree=$1 out=$2 missing
	shift 2
	mkdir -p "$out"
	(cd "$here" && cat "$@") >"$out/allconfig.frag"
	make -s -C "$tree" O="$out" "${cross[@]}" \
		KCONFIG_ALLCONFIG="$out/allconfig.frag" allnoconfig >&2
	missing=$(grep '^CONFIG_' "$out/allconfig.frag" | while read -r l; do
		grep -qx "$l" "$out/.config" || echo "$l"
	done)
	[ -z "$missing" ] || die "not set as asked in $out/.config: $missing"
}

# build NAME TREE FRAGMENT...: configure and make Image, timed (wall and
# CPU: the machine may be shared).
build() {
	local name=$1 tree=$2 out=$work/$1 rc=0
	shift 2
	configure "$tree" "$out" "$@"
	say "building the $name kernel in $out (make -j$jobs)"
	TIMEFORMAT="%0R s wall, %0U s user + %0S s sys CPU"
	{ time timeout 5400 make -s -C "$tree" O="$out" "${cross[@]}" \
		-j"$jobs" Image >"$work/$name.make.log" 2>&1; } \
		2>"$work/$name.time" || rc=$?
	[ $rc -eq 0 ] || { tail -n 30 "$work/$name.make.log" >&2
		die "the $name kernel did not build (log: $work/$name.make.log)"; }
	say "$name kernel built in $(cat "$work/$name.time"):" \
		"$out/arch/arm64/boot/Image"
}

for k in "${kernels[@]}"; do
	case $k in
	stock) build stock "$src" kvm.config ;;
	slat|slat-kasan)
		"$here/patch.sh" "$src" "$work/slat-src" "$repo"
		if [ "$k" = slat ]; then
			build slat "$work/slat-src" kvm.config
		else
			build slat-kasan "$work/slat-src" kvm.config kasan.config
		fi
		"$here/check-atomics.sh" "$work/$k"
		;;
	esac
done

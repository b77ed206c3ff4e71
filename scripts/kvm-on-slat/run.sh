#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Boot the stock and the libslat kernels (build.sh) at EL2 in QEMU, run the
# KVM selftests of tests.txt in each, and print a verdict table.
#   run.sh [--work DIR] [--tests FILE] [--timeout S] [--limit S]
#          [stock|slat|slat-kasan]...
# (default: stock slat; slat-kasan, the libslat kernel with KASAN, boots
# with kasan_multi_shot so that every report is printed, not the first.)
# --work DIR   build.sh's folder (default build/kvm-on-slat)
# --tests FILE the command lines to run (default tests.txt here)
# --timeout S  QEMU's time limit per kernel (default 5400)
# --limit S    each test's time limit inside the guest (default 900)
# The selftests are Linux 6.12's, built from the same source as the
# kernels (scripts/real-kvm/build-selftests.sh); busybox is Debian's
# (hyp/fetch.sh). Each kernel's console is kept in WORK/<kernel>.console.
# Exit status 0 when every test that passes on the first kernel passes on
# the others too and no kernel printed a KASAN report (verdict.py).
set -euo pipefail
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"
tests=$here/tests.txt
timeout_s=5400
limit=900
kernels=()
while [ $# -gt 0 ]; do
	case $1 in
	--work) work=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--limit) limit=$2; shift 2 ;;
	stock|slat|slat-kasan) kernels+=("$1"); shift ;;
	--tests) tests=$2; shift 2 ;;
	-h|--help) sed -n '3,17p' "$0"; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done
[ ${#kernels[@]} -gt 0 ] || kernels=(stock slat)
work=$(cd "$work" && pwd)
for c in qemu-system-aarch64 cpio gzip; do
	command -v $c >/dev/null || die "no $c: make kvm-on-slat installs it"
done

# 1. busybox, and the selftests from a copy of the pristine source (a
# copy: the selftests build writes into their tree).
flock "$work/.fetch.lock" "$repo/hyp/fetch.sh" "$work/guest" >&2 ||
	die "hyp/fetch.sh could not fetch busybox-static (arm64)"
mapfile -t lines < <(grep -v '^#' "$tests" | grep .)
names=$(printf '%s\n' "${lines[@]}" | awk '{ print $1 }' | sort -u)
targets=()
for n in $names; do
	# arm64's own tests live in the selftests' aarch64/ folder.
	if [ -e "$work/src/tools/testing/selftests/kvm/aarch64/$n.c" ]; then
		targets+=("aarch64/$n")
	else
		targets+=("$n")
	fi
done
st=$work/selftests
if [ ! -e "$st/src/.extracted" ]; then
	mkdir -p "$st"
	rm -rf "$st/src"
	cp -a "$work/src" "$st/src"
fi
"$repo/scripts/real-kvm/build-selftests.sh" "$st" 6.12 "${targets[@]}"

# 2. The initramfs: busybox, /init, the tests and their command lines.
img=$work/initramfs
rm -rf "$img"
mkdir -p "$img/bin" "$img/ks" "$img/proc" "$img/sys" "$img/dev"
cp "$work/guest/busybox" "$img/bin/busybox"
cp "$here/init.sh" "$img/init"
for n in $names; do
	cp "$st/bin/$n" "$img/ks/"
done
printf '%s\n' "${lines[@]}" >"$img/ks/tests"
echo "$limit" >"$img/ks/limit"
chmod 755 "$img/init" "$img/bin/busybox"
(cd "$img" && find . | cpio -o -H newc --quiet) | gzip -1 >"$work/initrd.gz"

# 3. Each kernel in QEMU, at EL2 (VHE), TCG.
for k in "${kernels[@]}"; do
	image=$work/$k/arch/arm64/boot/Image
	[ -e "$image" ] || die "no $image: run build.sh $k first"
	append="console=ttyAMA0 panic=-1"
	if grep -qx 'CONFIG_KASAN=y' "$work/$k/.config"; then
		append+=" kasan_multi_shot"
	fi
	say "booting the $k kernel (console in $work/$k.console)"
	timeout "$timeout_s" qemu-system-aarch64 \
		-M virt,virtualization=on,gic-version=3 \
		-cpu max,pauth-impdef=on -smp 2 -m 2G -nographic -no-reboot -nic none \
		-kernel "$image" -initrd "$work/initrd.gz" \
		-append "$append" </dev/null \
		>"$work/$k.console" 2>&1 || say "QEMU ended with status $?"
	tr -d '\r' <"$work/$k.console" >"$work/$k.log"
done

# 4. The verdict table.
python3 "$here/verdict.py" "$work" "${kernels[@]}"

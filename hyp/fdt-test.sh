#!/usr/bin/env bash
# slat-hyp's device-window parser against trees it did not write:
# QEMU's virt DTB (dumpdtb=), with 2 CPUs and with 200 (a second
# redistributor region), and fdt_windows_test.dts and a tree with more
# windows than fit (which must fail) compiled by dtc.
#   fdt-test.sh TEST_FDT_WINDOWS
# Exit 77 (skip) when neither qemu-system-aarch64 nor dtc is there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
checker=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ran=0
if command -v qemu-system-aarch64 >/dev/null; then
	for cpus in 2 200; do
		qemu-system-aarch64 -M "virt,virtualization=on,gic-version=3,dumpdtb=$tmp/virt-$cpus.dtb" \
			-cpu max -smp "$cpus" -m 2G -nographic -nic none \
			>"$tmp/qemu.log" 2>&1 || { cat "$tmp/qemu.log"; exit 1; }
		"$checker" virt "$tmp/virt-$cpus.dtb" "$cpus"
	done
	ran=1
else
	echo "qemu-system-aarch64 missing: QEMU's DTB not checked"
fi
if command -v dtc >/dev/null; then
	dtc -q -I dts -O dtb -o "$tmp/buses.dtb" "$here/fdt_windows_test.dts"
	"$checker" buses "$tmp/buses.dtb"
	# One device every other page, one more than fits.
	{
		echo '/dts-v1/; / { #address-cells = <1>; #size-cells = <1>;'
		for ((i = 0; i <= 32; i++)); do
			printf 'dev@%x { reg = <0x%x 0x1000>; };\n' $((i * 0x2000)) $((i * 0x2000))
		done
		echo '};'
	} >"$tmp/full.dts"
	dtc -q -I dts -O dtb -o "$tmp/full.dtb" "$tmp/full.dts"
	"$checker" full "$tmp/full.dtb"
	ran=1
else
	echo "dtc missing (device-tree-compiler): the bus tree not checked"
fi
[ $ran -eq 1 ] || { echo "SKIP: neither qemu-system-aarch64 nor dtc"; exit 77; }

#!/usr/bin/env bash
# slat-hyp's device-tree editor on a tree dtc compiles: test_fdt_edit
# edits fdt_edit_test.dts's blob and checks each edit through the reader
# and each refused edit byte for byte; dtc then decompiles the edited
# blob, which must be fdt_edit_expected.dts exactly.
#   fdt-edit-test.sh TEST_FDT_EDIT
# Exit 77 (skip) without dtc (Debian's device-tree-compiler).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
checker=$1
command -v dtc >/dev/null || { echo "SKIP: dtc missing (device-tree-compiler)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dtc -q -I dts -O dtb -o "$tmp/in.dtb" "$here/fdt_edit_test.dts"
dtc -q -I dts -O dtb -o "$tmp/want.dtb" "$here/fdt_edit_expected.dts"
"$checker" "$tmp/in.dtb" "$tmp/out.dtb"
dtc -q -I dtb -O dts -o "$tmp/out.dts" "$tmp/out.dtb"
dtc -q -I dtb -O dts -o "$tmp/want.dts" "$tmp/want.dtb"
if ! diff -u "$tmp/want.dts" "$tmp/out.dts"; then
	echo "FAIL: the edited tree, decompiled by dtc, is not fdt_edit_expected.dts"
	exit 1
fi
echo "ok: dtc reads the edited tree as fdt_edit_expected.dts"

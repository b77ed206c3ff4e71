#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Make the libslat kernel's source tree from the pristine one:
#   patch.sh SRC DEST REPO
# DEST is a hard-linked copy of SRC (made once); the three files edited
# here are replaced by new files, never written through a link, so SRC
# stays as extracted. The edits, all mechanical:
#   arch/arm64/kvm/Makefile      one line: include slat/kvm-slat.mk
#   arch/arm64/kvm/hyp/Makefile  one line: pgtable.c compiled with
#                                -include shim/stock-names.h
#   arch/arm64/include/asm/kvm_pgtable.h
#                                one member added to struct kvm_pgtable:
#                                void *slat, the shim's table
# and libslat (include/, src/) and the shim are copied into
# arch/arm64/kvm/slat/{lib,shim}.
set -euo pipefail
die() { echo "kvm-on-slat: $*" >&2; exit 1; }
[ $# -eq 3 ] || die "usage: patch.sh SRC DEST REPO"
src=$1 dest=$2 repo=$3
here=$(cd "$(dirname "$0")" && pwd)
marker='kvm-on-slat'

if [ ! -e "$dest/.linked" ]; then
	rm -rf "$dest"
	cp -al "$src" "$dest"
	touch "$dest/.linked"
fi

# replace FILE: FILE's new text from stdin, as a new file (breaks the link).
replace() {
	local tmp
	tmp=$(mktemp "$1.XXXXXX")
	cat >"$tmp"
	mv "$tmp" "$1"
}

mk=$dest/arch/arm64/kvm/Makefile
if ! grep -q "$marker" "$mk"; then
	{ cat "$src/arch/arm64/kvm/Makefile"
	  echo "include \$(srctree)/arch/arm64/kvm/slat/shim/kvm-slat.mk # $marker"
	} | replace "$mk"
fi

hmk=$dest/arch/arm64/kvm/hyp/Makefile
if ! grep -q "$marker" "$hmk"; then
	{ cat "$src/arch/arm64/kvm/hyp/Makefile"
	  echo "CFLAGS_pgtable.o += -include \$(srctree)/arch/arm64/kvm/slat/shim/stock-names.h # $marker"
	} | replace "$hmk"
fi

hdr=$dest/arch/arm64/include/asm/kvm_pgtable.h
if ! grep -q "$marker" "$hdr"; then
	sed 's|^\(\tkvm_pgtable_force_pte_cb_t\t*force_pte_cb;\)$|\1\n\tvoid\t*slat; /* '"$marker"' */|' \
		"$src/arch/arm64/include/asm/kvm_pgtable.h" | replace "$hdr"
	grep -q "$marker" "$hdr" ||
		die "struct kvm_pgtable not as expected in $hdr"
fi

# libslat and the shim, refreshed on every build (make sees what changed).
slat=$dest/arch/arm64/kvm/slat
mkdir -p "$slat/lib" "$slat/shim"
cp -a "$repo/include" "$repo/src" "$slat/lib/"
cp -a "$here/shim/." "$slat/shim/"

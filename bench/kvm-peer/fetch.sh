#!/usr/bin/env bash
# Extract KVM's arm64 stage-2 code from Debian's linux-source package into
# DIR, for slat-bench --kvm (bench/CMakeLists.txt, SLAT_KVM_SOURCE):
#   bench/kvm-peer/fetch.sh DIR [VERSION]
# VERSION is the package's kernel version (default 6.12, the first Debian
# 12 ships with shared stage-2 walkers). Installs linux-source-VERSION with
# apt-get when it is missing. Prints the source's full version on stdout.
# Nothing it extracts is part of slat: the files stay in DIR.
set -euo pipefail

dir=${1:?usage: fetch.sh DIR [VERSION]}
ver=${2:-6.12}
pkg=linux-source-$ver
tarball=/usr/src/$pkg.tar.xz
files=(arch/arm64/kvm/hyp/pgtable.c arch/arm64/include/asm/kvm_pgtable.h
       arch/arm64/include/asm/stage2_pgtable.h)

if [ ! -f "$tarball" ]; then
	sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	echo "fetch.sh: installing $pkg (about 150 MB) for $tarball" >&2
	"${sudo[@]}" apt-get install -y -q "$pkg" >&2 || {
		"${sudo[@]}" apt-get update -q >&2 &&
		"${sudo[@]}" apt-get install -y -q "$pkg" >&2
	} || {
		echo "fetch.sh: could not install $pkg: run apt-get update," \
			"or give another VERSION (apt-cache search" \
			"linux-source)" >&2
		exit 1
	}
fi
full=$(dpkg-query -W -f '${Version}' "$pkg")
stamp="$dir/.version"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$full" ]; then
	echo "$full"
	exit 0
fi
rm -rf "$dir"
mkdir -p "$dir"
tar -xJf "$tarball" -C "$dir" --strip-components=1 \
	"${files[@]/#/$pkg/}"
echo "$full" >"$stamp"
echo "$full"

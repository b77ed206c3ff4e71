#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian packages kvm-on-slat needs, if missing (as
# scripts/deps.sh does for the rest of slat):
#   linux-source-6.12            the kernel and selftests source
#   gcc-aarch64-linux-gnu, binutils-aarch64-linux-gnu, libc6-dev-arm64-cross
#                                the arm64 kernel, and the static selftests
#   make flex bison bc libssl-dev libelf-dev xz-utils
#                                the kernel's build
#   qemu-system-arm cpio gzip python3
#                                the runs and the verdict table
# and the arm64 architecture in apt, for busybox-static (hyp/fetch.sh).
set -euo pipefail
packages=(linux-source-6.12 gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu
	libc6-dev-arm64-cross make flex bison bc libssl-dev libelf-dev
	xz-utils qemu-system-arm cpio gzip python3)
missing=()
for p in "${packages[@]}"; do
	dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	echo "kvm-on-slat: adding the arm64 architecture (busybox-static)"
	"${sudo[@]}" dpkg --add-architecture arm64
	"${sudo[@]}" apt-get update
fi
[ "${#missing[@]}" -gt 0 ] || exit 0
echo "kvm-on-slat: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"

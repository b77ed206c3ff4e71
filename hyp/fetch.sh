#!/usr/bin/env bash
# Fetch the guest: Debian's arm64 kernel (linux-image-arm64's current
# flavour) and busybox-static, with apt-get download, into CACHE; extract
# the kernel's Image, the modules of a virtio-rng PCI device (run.sh
# --rng) and busybox. Idempotent: a filled cache is kept.
#   fetch.sh CACHE
# Exit 77 when the packages cannot be had (no arm64 architecture and no
# root to add it, or no network): the test then skips.
set -euo pipefail
cache=$1
mkdir -p "$cache"
cd "$cache"
# virtio_pci needs the other two; virtio-rng, virtio (built in).
modules="virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio-rng"
have_all() {
	[ -s Image ] && [ -s busybox ] || return 1
	for m in $modules; do
		[ -s "modules/$m.ko" ] || return 1
	done
}
if have_all; then
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	sudo=(sudo -n)
fi
have_arm64() {
	dpkg --print-foreign-architectures | grep -qx arm64 &&
		apt-cache show linux-image-arm64:arm64 >/dev/null 2>&1
}
if ! have_arm64; then
	echo "fetch: adding the arm64 architecture to apt"
	"${sudo[@]}" dpkg --add-architecture arm64 || exit 77
	"${sudo[@]}" apt-get update -q || exit 77
	have_arm64 || exit 77
fi
# The metapackage names the kernel package of the day.
kpkg=$(apt-cache depends linux-image-arm64:arm64 |
	awk '/Depends: linux-image-[0-9]/ { sub(":arm64", "", $2); print $2; exit }')
[ -n "$kpkg" ] || { echo "fetch: no kernel behind linux-image-arm64"; exit 77; }
rm -rf debs && mkdir debs
# apt's sandbox user may not write here: download as whoever we are.
(cd debs && apt-get download -q -o APT::Sandbox::User="$(id -un)" \
	"$kpkg:arm64" busybox-static:arm64) || exit 77
rm -rf x && mkdir x
dpkg-deb --fsys-tarfile debs/"$kpkg"_*.deb | tar -x -C x --wildcards './boot/vmlinuz-*' \
	'./lib/modules/*/kernel/drivers/virtio/virtio_pci*.ko' \
	'./lib/modules/*/kernel/drivers/char/hw_random/virtio-rng.ko'
dpkg-deb --fsys-tarfile debs/busybox-static_*.deb | tar -x -C x ./bin/busybox
# arm64's vmlinuz is the Image itself (older kernels: gzip'd).
img=$(ls x/boot/vmlinuz-*)
if gzip -t "$img" 2>/dev/null; then
	gzip -dc "$img" > Image.tmp
else
	cp "$img" Image.tmp
fi
cp x/bin/busybox busybox.tmp
mkdir -p modules
for m in $modules; do
	cp "$(find x/lib/modules -name "$m.ko")" "modules/$m.ko"
done
echo "$kpkg" > kernel-package
mv busybox.tmp busybox
mv Image.tmp Image
rm -rf x debs
echo "fetch: $(cat kernel-package), busybox-static into $cache"

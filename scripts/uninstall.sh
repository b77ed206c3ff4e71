#!/usr/bin/env bash
# Remove what `cmake --install` put, as its install_manifest.txt lists it,
# then slat's own directories if they are left empty (INCLUDEDIR/slat,
# LIBDIR/cmake/slat). The manifest has the paths without DESTDIR: give the
# same DESTDIR as to the install.
#   [DESTDIR=DIR] scripts/uninstall.sh BUILD_DIR/install_manifest.txt
set -euo pipefail

manifest=${1:?usage: scripts/uninstall.sh BUILD_DIR/install_manifest.txt}
if [ ! -f "$manifest" ]; then
	echo "uninstall: $manifest not found: nothing was installed from that build" >&2
	exit 1
fi
dirs=()
n=0
while IFS= read -r f || [ -n "$f" ]; do
	[ -n "$f" ] || continue
	f=${DESTDIR:-}$f
	if [ -e "$f" ] || [ -L "$f" ]; then
		rm -f -- "$f"
		n=$((n + 1))
	fi
	d=$(dirname -- "$f")
	if [ "$(basename -- "$d")" = slat ]; then
		dirs+=("$d")
	fi
done < "$manifest"
for d in "${dirs[@]}"; do
	if [ -d "$d" ]; then
		rmdir --ignore-fail-on-non-empty -- "$d"
	fi
done
rm -f -- "$manifest"
echo "uninstall: removed $n files"

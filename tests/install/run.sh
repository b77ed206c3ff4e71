#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Install a build of slat and use it as programs outside this tree do:
#
#   tests/install/run.sh [BUILD_DIR]      (default: build; make check runs it)
#
#  1. cmake --install BUILD_DIR --prefix TMP/prefix: the files of the
#     layout (docs/building.md), the SONAMEs, the exported symbols of the
#     installed shared libraries, the tools' --version;
#  2. DESTDIR=TMP/stage cmake --install ... --prefix /opt/slat: the same
#     files, staged, nothing outside the prefix;
#  3. an external CMake project (cmake-project/, find_package(slat) and
#     slat::hosted) and an external Makefile project (make-project/,
#     pkg-config slat-hosted), each built once with the shared libraries
#     (ldd must show libslat.so.0 and libslat-hosted.so.0 of the prefix) and
#     once static (no libslat*.so at all), against the prefix and the staged
#     tree; and a program linking the core's archive alone, as slat-core.pc's
#     archive variable names it (a hypervisor's build); every program maps
#     and looks up a page and exits 0;
#  4. a core-only build for bare-metal aarch64 (cmake/aarch64-none.cmake),
#     installed: libslat.a, the core headers and slat-core.pc alone; a
#     freestanding program (bare-metal/) linked against it with
#     aarch64-linux-gnu-gcc -ffreestanding -nostdlib, nothing undefined,
#     run under qemu-system-aarch64 when there is one;
#  5. scripts/uninstall.sh with the staged install's manifest (and the same
#     DESTDIR) leaves nothing behind.
# Everything happens in a temporary directory, removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
start=$(date +%s)

fail() {
	echo "install: FAILED: $*" >&2
	exit 1
}
say() { echo "install: $*"; }
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }

[ -f "$build/CMakeCache.txt" ] || fail "$build is not a CMake build directory"
[ "$(cache SLAT_BUILD_SHARED)" = ON ] ||
	fail "$build has no shared libraries (SLAT_BUILD_SHARED=OFF)"
[ "$(cache SLAT_CORE_ONLY)" != ON ] || fail "$build is a core-only build"
for tool in cmake make cc pkg-config readelf ldd; do
	command -v "$tool" >/dev/null 2>&1 || fail "$tool not found (scripts/deps.sh)"
done

version=$(sed -n 's/^#define SLAT_VERSION_STRING "\(.*\)"$/\1/p' \
	"$root/include/slat/version.h")
major=${version%%.*}
libdir=$(cache CMAKE_INSTALL_LIBDIR)
incdir=$(cache CMAKE_INSTALL_INCLUDEDIR)
bindir=$(cache CMAKE_INSTALL_BINDIR)
# GNUInstallDirs leaves MANDIR (and DATAROOTDIR) empty in the cache when
# they are the defaults.
dataroot=$(cache CMAKE_INSTALL_DATAROOTDIR)
mandir=$(cache CMAKE_INSTALL_MANDIR)
mandir=${mandir:-${dataroot:-share}/man}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/slat-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log=$tmp/log
# Run a command quietly; on failure show what it printed.
quiet() {
	if ! "$@" >"$log" 2>&1; then
		cat "$log" >&2
		fail "$*"
	fi
}

# ---- 1. Install into a prefix ----
prefix=$tmp/prefix
quiet cmake --install "$build" --prefix "$prefix"
expect=()
for lib in slat slat-hosted slat-sim; do
	expect+=("$libdir/lib$lib.a" "$libdir/lib$lib.so" "$libdir/lib$lib.so.$major"
		 "$libdir/lib$lib.so.$version")
	soname=$(readelf -d "$prefix/$libdir/lib$lib.so" |
		sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
	[ "$soname" = "lib$lib.so.$major" ] ||
		fail "lib$lib.so: SONAME '$soname', not lib$lib.so.$major"
	[ "$(readlink "$prefix/$libdir/lib$lib.so.$major")" = "lib$lib.so.$version" ] ||
		fail "lib$lib.so.$major is not a link to lib$lib.so.$version"
done
for h in types platform slat walk export version hosted sim twostage; do
	expect+=("$incdir/slat/$h.h")
done
for pc in slat-core slat-hosted slat-sim slat; do
	expect+=("$libdir/pkgconfig/$pc.pc")
done
for f in slatConfig slatConfigVersion slatTargets; do
	expect+=("$libdir/cmake/slat/$f.cmake")
done
expect+=("$bindir/slat-dump" "$bindir/slat-perf")
if [ "$(cache SLAT_INSTALL_BENCH)" = ON ]; then
	expect+=("$bindir/slat-bench" "$bindir/slat-bench-split"
		 "$bindir/slat-bench-scaling")
fi
man=no
if [ -f "$build/tools/slat-dump/slat-dump.1" ]; then
	man=yes
	expect+=("$mandir/man1/slat-dump.1" "$mandir/man1/slat-perf.1")
fi
# Every file expected, and nothing else (the build type's targets file
# slatTargets-CONFIG.cmake aside).
(cd "$prefix" && find . \( -type f -o -type l \) | sed 's|^\./||' |
	grep -v '^[^ ]*/cmake/slat/slatTargets-[a-z]*\.cmake$' | LC_ALL=C sort) \
	> "$tmp/installed"
printf '%s\n' "${expect[@]}" | LC_ALL=C sort > "$tmp/expected"
if ! diff -u "$tmp/expected" "$tmp/installed" >&2; then
	fail "the installed files differ from the layout (- expected, + installed)"
fi
for c in core hosted sim; do
	case $c in
	core) lib=slat; hs="types platform slat walk export version" ;;
	hosted) lib=slat-hosted; hs=hosted ;;
	sim) lib=slat-sim; hs="sim twostage" ;;
	esac
	headers=()
	for h in $hs; do headers+=("$prefix/$incdir/slat/$h.h"); done
	for f in "lib$lib.so" "lib$lib.a"; do
		quiet sh "$here/check-exports.sh" nm "$prefix/$libdir/$f" "${headers[@]}"
	done
done
for t in slat-dump slat-perf; do
	out=$("$prefix/$bindir/$t" --version)
	[ "$out" = "$t (slat) $version" ] || fail "$t --version printed '$out'"
	if [ "$man" = yes ]; then
		grep -q "^\.TH ${t^^} \"1\"" "$prefix/$mandir/man1/$t.1" ||
			fail "$t.1 is not a man page of section 1"
	fi
done
say "prefix: ${#expect[@]} files, SONAMEs lib*.so.$major, exports checked," \
    "man pages: $man"

# ---- 2. Install with DESTDIR ----
stage=$tmp/stage
staged=/opt/slat
DESTDIR=$stage quiet cmake --install "$build" --prefix "$staged"
cp "$build/install_manifest.txt" "$tmp/staged-manifest"
[ -d "$stage$staged" ] || fail "DESTDIR: nothing under $stage$staged"
outside=$(cd "$stage" && find . \( -type f -o -type l \) | grep -v "^\.$staged/" || true)
[ -z "$outside" ] || fail "DESTDIR: files outside the prefix: $outside"
(cd "$stage$staged" && find . \( -type f -o -type l \) | sed 's|^\./||' |
	grep -v '^[^ ]*/cmake/slat/slatTargets-[a-z]*\.cmake$' | LC_ALL=C sort) \
	> "$tmp/staged"
diff -u "$tmp/installed" "$tmp/staged" >&2 ||
	fail "DESTDIR installs other files than --prefix"
grep -q "^prefix=$staged\$" "$stage$staged/$libdir/pkgconfig/slat-hosted.pc" ||
	fail "DESTDIR: slat-hosted.pc does not say prefix=$staged"
say "DESTDIR: the same files under $staged, slat-hosted.pc prefix=$staged"

# ---- 3. External projects ----
src=$tmp/src
mkdir -p "$src"
cp -r "$here/stage2.c" "$here/cmake-project" "$here/make-project" "$src/"
# check_linked EXE shared|static PREFIX_LIBDIR
check_linked() {
	local exe=$1 kind=$2 dir=$3 deps
	deps=$(ldd "$exe" 2>&1 || true)
	if [ "$kind" = shared ]; then
		for lib in libslat.so.$major libslat-hosted.so.$major; do
			echo "$deps" | grep -q "^[[:space:]]*$lib => $dir/$lib " ||
				fail "$exe does not load $dir/$lib: $deps"
		done
	elif echo "$deps" | grep -q 'libslat'; then
		fail "$exe (static) loads a shared slat library: $deps"
	fi
	quiet "$exe"
}

# (a) CMake: shared libraries from the prefix, static ones from the staged
# tree (the package is relocatable).
quiet cmake -S "$src/cmake-project" -B "$tmp/a-shared" \
	-DCMAKE_PREFIX_PATH="$prefix"
quiet cmake --build "$tmp/a-shared"
check_linked "$tmp/a-shared/stage2" shared "$prefix/$libdir"
quiet cmake -S "$src/cmake-project" -B "$tmp/a-static" \
	-DCMAKE_PREFIX_PATH="$stage$staged" -DSLAT_USE_STATIC_LIBS=ON
quiet cmake --build "$tmp/a-static"
check_linked "$tmp/a-static/stage2" static ""
say "find_package(slat) + slat::hosted: shared (libslat.so.$major," \
    "libslat-hosted.so.$major) and static (SLAT_USE_STATIC_LIBS) programs ran"

# (b) pkg-config: shared from the prefix, static from the staged tree
# (PKG_CONFIG_SYSROOT_DIR, as for any staged install).
cp -r "$src/make-project" "$src/make-static"
PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig quiet make -C "$src/make-project"
check_linked "$src/make-project/stage2" shared "$prefix/$libdir"
PKG_CONFIG_PATH=$stage$staged/$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage \
	quiet make -C "$src/make-static" STATIC=1
check_linked "$src/make-static/stage2" static ""
say "pkg-config slat-hosted: shared and static (-static, --static) programs ran"
# (c) A hypervisor's build: the core's archive alone, named by slat-core.pc
# (its Libs would take libslat.so, installed beside it), hooks of its own.
archive=$(PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig \
	pkg-config --variable=archive slat-core)
[ "$archive" = "$prefix/$libdir/libslat.a" ] ||
	fail "slat-core.pc: archive=$archive, not $prefix/$libdir/libslat.a"
pc=$(PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig pkg-config --cflags slat-core)
# shellcheck disable=SC2086 # pkg-config's words
quiet cc -O2 -Wall -Wextra -Werror $pc -o "$tmp/core-static" \
	"$here/bare-metal/host.c" "$here/bare-metal/main.c" "$archive"
check_linked "$tmp/core-static" static ""
say "pkg-config slat-core: a program linking its archive alone ran"

# ---- 4. Core only, bare-metal aarch64 ----
cross=aarch64-linux-gnu-
command -v ${cross}gcc >/dev/null 2>&1 || fail "${cross}gcc not found (scripts/deps.sh)"
core=$tmp/core
quiet cmake -S "$root" -B "$tmp/core-build" -DSLAT_CORE_ONLY=ON \
	-DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-none.cmake" \
	-DCMAKE_INSTALL_PREFIX="$core"
quiet cmake --build "$tmp/core-build" -j2
quiet cmake --install "$tmp/core-build"
corelib=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$tmp/core-build/CMakeCache.txt")
(cd "$core" && find . \( -type f -o -type l \) | sed 's|^\./||' |
	grep -v '^[^ ]*/cmake/slat/slatTargets-[a-z]*\.cmake$' | LC_ALL=C sort) \
	> "$tmp/core-installed"
{
	echo "$corelib/libslat.a"
	echo "$corelib/pkgconfig/slat-core.pc"
	for f in slatConfig slatConfigVersion slatTargets; do
		echo "$corelib/cmake/slat/$f.cmake"
	done
	for h in types platform slat walk export version; do
		echo "$incdir/slat/$h.h"
	done
} | LC_ALL=C sort > "$tmp/core-expected"
diff -u "$tmp/core-expected" "$tmp/core-installed" >&2 ||
	fail "the core-only install differs from its layout (- expected, + installed)"
bm=$tmp/bare-metal
cp -r "$here/bare-metal" "$bm"
bmflags=(-ffreestanding -nostdlib -fno-builtin -fno-tree-loop-distribute-patterns
	 -static -mgeneral-regs-only -mstrict-align -mno-outline-atomics -O2
	 -Wall -Wextra -Werror -T "$bm/link.ld" -Wl,--build-id=none
	 -Wl,--no-warn-rwx-segments)
# Only the core's .pc file: no host package may leak in.
pc=$(PKG_CONFIG_LIBDIR=$core/$corelib/pkgconfig PKG_CONFIG_PATH= \
	pkg-config --cflags --libs slat-core) || fail "pkg-config slat-core (core-only)"
# shellcheck disable=SC2086 # pkg-config's words
quiet ${cross}gcc "${bmflags[@]}" -o "$bm/bm.elf" "$bm/start.S" "$bm/main.c" \
	"$bm/mem.c" $pc
undefined=$(${cross}nm -u "$bm/bm.elf")
[ -z "$undefined" ] || fail "bare-metal program: undefined symbols: $undefined"
memcalls=$(${cross}nm -u "$core/$corelib/libslat.a" |
	awk '$2 ~ /^mem(set|cpy|move|cmp)$/ {print $2}' | LC_ALL=C sort -u | tr '\n' ' ')
if [ -n "$memcalls" ]; then
	say "note: libslat.a calls ${memcalls}(bare-metal/mem.c provides them;" \
	    "scripts/freestanding-check.sh fails on it)"
fi
if command -v qemu-system-aarch64 >/dev/null 2>&1; then
	if ! timeout 60 qemu-system-aarch64 -M virt -cpu cortex-a57 -m 128M \
		-nographic -monitor none -serial none -nic none -semihosting \
		-kernel "$bm/bm.elf" >"$log" 2>&1; then
		cat "$log" >&2
		fail "bare-metal program under qemu-system-aarch64"
	fi
	ran="ran under qemu-system-aarch64 (MMU off, EL1): $(tr -d '\r\n' < "$log")"
else
	ran="linked, not run (no qemu-system-aarch64)"
fi
say "core only: libslat.a, 6 headers, slat-core.pc; freestanding aarch64 program $ran"

# ---- 5. Uninstall ----
DESTDIR=$stage quiet "$root/scripts/uninstall.sh" "$tmp/staged-manifest"
left=$(cd "$stage" && find . \( -type f -o -type l \))
[ -z "$left" ] || fail "uninstall left: $left"
say "uninstall: the staged install's manifest removed every file"

say "OK ($(($(date +%s) - start)) s)"

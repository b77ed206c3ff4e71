#!/usr/bin/env bash
# Prove that libslat's core (src/) is freestanding:
#  1. every file in src/ (and the public headers it may use) includes only
#     <stdint.h>, <stdbool.h>, <stddef.h>, <slat/...> core headers and local
#     headers of src/;
#  2. every src/**/*.c is listed in src/CMakeLists.txt;
#  3. every src/**/*.c compiles for aarch64 with the library's flags
#     (-ffreestanding -fno-builtin -fno-tree-loop-distribute-patterns) and
#     -nostdlib -mgeneral-regs-only -Wall -Wextra -Werror;
#  4. linked with scripts/freestanding-entry.c alone (no libc, no libgcc,
#     no start files), nothing is left undefined: the core calls no memset,
#     memcpy or any other function the platform does not pass it.
set -euo pipefail

cd "$(dirname "$0")/.."

CROSS=${CROSS:-aarch64-linux-gnu-}
CC="${CROSS}gcc"
LD="${CROSS}ld"
NM="${CROSS}nm"
# -mno-outline-atomics: GCC for aarch64-linux defaults to -moutline-atomics,
# which calls helpers in libgcc (__aarch64_cas8_acq_rel, ...) that select
# LSE at run time from HWCAP; bare metal has neither, so atomics are inline.
CFLAGS=(-ffreestanding -nostdlib -fno-builtin -fno-tree-loop-distribute-patterns
	-O2 -Wall -Wextra -Werror
	-mno-outline-atomics
	-mgeneral-regs-only -Iinclude -Isrc)

fail=0
err() { echo "freestanding-check: $*" >&2; fail=1; }

for tool in "$CC" "$LD" "$NM"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "freestanding-check: $tool not found (run scripts/deps.sh)" >&2
		exit 1
	fi
done

mapfile -t sources < <(find src -name '*.c' | LC_ALL=C sort)
mapfile -t headers < <(find src -name '*.h' | LC_ALL=C sort)
if [ "${#sources[@]}" -eq 0 ]; then
	echo "freestanding-check: no source in src/" >&2
	exit 1
fi

# 1. Includes.
core_public="types.h platform.h slat.h walk.h export.h version.h"
check_includes() {
	local file=$1 dir line target
	dir=$(dirname "$file")
	while IFS= read -r line; do
		if [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<([^>]+)\> ]]; then
			target=${BASH_REMATCH[1]}
			case "$target" in
			stdint.h|stdbool.h|stddef.h) ;;
			slat/*)
				if [[ " $core_public " != *" ${target#slat/} "* ]]; then
					err "$file: includes <$target>, not a core header"
				fi ;;
			*) err "$file: includes <$target>: only stdint.h, stdbool.h, stddef.h and slat headers are allowed" ;;
			esac
		elif [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
			target=${BASH_REMATCH[1]}
			if [ -f "$dir/$target" ]; then
				target=$(realpath --relative-to=. "$dir/$target")
			elif [ -f "src/$target" ]; then
				target=$(realpath --relative-to=. "src/$target")
			else
				err "$file: includes \"$target\", not a file of src/"
				continue
			fi
			case "$target" in
			src/*) ;;
			include/slat/*)
				if [[ " $core_public " != *" ${target#include/slat/} "* ]]; then
					err "$file: includes \"$target\", not a core header"
				fi ;;
			*) err "$file: includes \"$target\", outside src/" ;;
			esac
		elif [[ $line =~ ^[[:space:]]*#[[:space:]]*include ]]; then
			err "$file: computed include: $line"
		fi
	done < "$file"
}
for f in "${sources[@]}" "${headers[@]}"; do
	check_includes "$f"
done
for h in $core_public; do
	check_includes "include/slat/$h"
done

# 2. The build lists every source.
for f in "${sources[@]}"; do
	if ! grep -Eq "(^|[[:space:]])${f#src/}([[:space:]]|\)|$)" src/CMakeLists.txt; then
		err "$f is not listed in src/CMakeLists.txt"
	fi
done

if [ "$fail" -ne 0 ]; then
	echo "freestanding-check: FAILED (includes or source list)" >&2
	exit 1
fi

# 3. Compile.
out=$(mktemp -d "${TMPDIR:-/tmp}/slat-freestanding.XXXXXX")
trap 'rm -rf "$out"' EXIT
objs=()
for f in "${sources[@]}" scripts/freestanding-entry.c; do
	obj="$out/$(echo "${f%.c}" | tr '/' '_').o"
	if ! "$CC" "${CFLAGS[@]}" -c "$f" -o "$obj"; then
		err "$f does not compile freestanding"
		continue
	fi
	objs+=("$obj")
done
if [ "$fail" -ne 0 ]; then
	echo "freestanding-check: FAILED (compile)" >&2
	exit 1
fi

# 4. Nothing undefined: first over the relocatable whole (clear report),
# then in the linked bare-metal image.
"$LD" -r -o "$out/all.o" "${objs[@]}"
undefined=$("$NM" -u "$out/all.o" | awk '{print $NF}' | LC_ALL=C sort -u)
if [ -n "$undefined" ]; then
	echo "freestanding-check: the core needs symbols no bare-metal program has:" >&2
	echo "$undefined" | sed 's/^/  /' >&2
	for sym in $undefined; do
		# Which objects want it.
		for o in "${objs[@]}"; do
			if "$NM" -u "$o" | awk '{print $NF}' | grep -qx "$sym"; then
				echo "    $sym <- $(basename "$o" .o)" >&2
			fi
		done
	done
	if echo "$undefined" | grep -Eqx 'mem(set|cpy|move|cmp)'; then
		echo "  (GCC emits mem* calls for zeroing/copy loops and large struct" >&2
		echo "   copies or initialisers even with -ffreestanding -fno-builtin)" >&2
	fi
	echo "freestanding-check: FAILED (undefined symbols)" >&2
	exit 1
fi

if ! "$CC" -nostdlib -static -Wl,-e,_start -o "$out/slat-bare" "${objs[@]}"; then
	echo "freestanding-check: FAILED (bare-metal link)" >&2
	exit 1
fi
undefined=$("$NM" -u "$out/slat-bare")
if [ -n "$undefined" ]; then
	echo "freestanding-check: undefined symbols in the bare-metal image:" >&2
	echo "$undefined" | sed 's/^/  /' >&2
	echo "freestanding-check: FAILED (undefined symbols)" >&2
	exit 1
fi

echo "freestanding-check: OK (${#sources[@]} core files, aarch64, no undefined symbols)"

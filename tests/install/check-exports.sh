#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-exports.sh NM LIBRARY.so|LIBRARY.a HEADER...
#
# The dynamic symbols LIBRARY.so defines (NM -D --defined-only), or the
# global symbols LIBRARY.a defines (NM -g --defined-only: what a program
# linking it beside its own code meets), must be the functions HEADER...
# declare (public-functions.pl), all of them:
#  - a symbol no header declares is an internal function or variable that
#    leaks (mark it static, or rely on -fvisibility=hidden);
#  - a declared function the library does not export lost its SLAT_API
#    mark, or is not implemented;
#  - a declaration without SLAT_API is refused too.
set -eu

nm=$1
lib=$2
shift 2
here=$(dirname "$0")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/slat-exports.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

perl "$here/public-functions.pl" "$@" > "$tmp/decls"
awk '{print $1}' "$tmp/decls" | LC_ALL=C sort -u > "$tmp/declared"
case $lib in
*.a) scope=-g ;;
*) scope=-D ;;
esac
"$nm" "$scope" --defined-only "$lib" | awk 'NF >= 3 {print $3}' |
	LC_ALL=C sort -u > "$tmp/exported"

fail=0
noapi=$(awk '$2 == "noapi" {print $1}' "$tmp/decls")
if [ -n "$noapi" ]; then
	echo "declared without SLAT_API:" $noapi >&2
	fail=1
fi
extra=$(LC_ALL=C comm -23 "$tmp/exported" "$tmp/declared")
if [ -n "$extra" ]; then
	echo "$lib exports symbols no public header declares:" $extra >&2
	fail=1
fi
missing=$(LC_ALL=C comm -13 "$tmp/exported" "$tmp/declared")
if [ -n "$missing" ]; then
	echo "$lib does not export these public functions:" $missing >&2
	fail=1
fi
if [ "$fail" -ne 0 ]; then
	exit 1
fi
echo "$(basename "$lib"): $(wc -l < "$tmp/exported") symbols, all public"

#!/bin/sh
# prefix-symbols.sh NM OBJCOPY PREFIX IN.a OUT.a
# OUT.a is IN.a with every global symbol it defines renamed PREFIX<name>,
# in its definitions and in the references between its members; symbols
# it only uses (the sanitizers' runtime) keep their names.
set -eu
nm=$1 objcopy=$2 prefix=$3 in=$4 out=$5
"$nm" -g --defined-only "$in" |
	awk -v p="$prefix" 'NF == 3 { print $3, p $3 }' | sort -u >"$out.syms"
"$objcopy" --redefine-syms="$out.syms" "$in" "$out.tmp"
mv "$out.tmp" "$out"

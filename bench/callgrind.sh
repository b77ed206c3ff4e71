#!/bin/sh
# Instructions per leaf entry of each slat-bench scenario, and the functions
# that execute them, under callgrind (docs/PERFORMANCE.md). Deterministic:
# only the last timed run of each scenario is counted (--collect-atstart=no,
# slat-bench toggles collection around its timed region).
#
#   bench/callgrind.sh [path/to/slat-bench] [size-shift] [ids] [top]
#
# Defaults: build/bench/slat-bench, size shift 4 (1 GiB -> 64 MiB,
# 16 GiB -> 1 GiB), every scenario, the top 6 functions.
set -eu
BENCH=${1:-build/bench/slat-bench}
SHIFT=${2:-4}
IDS=${3:-1,2,3,4,5,6,7,8,9,10,11,12,13,14}
TOP=${4:-6}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind not found" >&2; exit 2; }
printf '%-4s %10s %14s %10s\n' id leaves Ir "Ir/leaf"
for id in $(echo "$IDS" | tr ',' ' '); do
	valgrind --tool=callgrind --collect-atstart=no \
		--callgrind-out-file="$OUT/cg.$id" \
		"$BENCH" --only "$id" --size-shift "$SHIFT" --reps 1 --json \
		>"$OUT/json.$id" 2>"$OUT/err.$id" || {
		echo "callgrind.sh: scenario $id failed:" >&2
		cat "$OUT/err.$id" >&2
		exit 1
	}
	leaves=$(sed -n 's/.*"leaves": \([0-9]*\),.*/\1/p' "$OUT/json.$id" | head -n1)
	if [ -z "$leaves" ]; then
		echo "$id: skipped in this configuration"
		continue
	fi
	ir=$(callgrind_annotate "$OUT/cg.$id" 2>/dev/null |
		sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
	printf '%-4s %10s %14s %10.1f\n' "$id" "$leaves" "$ir" \
		"$(echo "$ir $leaves" | awk '{ print $1 / $2 }')"
	callgrind_annotate --auto=no --inclusive=no "$OUT/cg.$id" 2>/dev/null |
		sed -n '/PROGRAM TOTALS/,$p' | grep -E '^ *[0-9,]+ \(' |
		grep -v 'PROGRAM TOTALS' | head -n "$TOP" |
		sed -e 's/ \[[^]]*\]$//' -e "s|$ROOT/||" -e 's/^/      /'
done

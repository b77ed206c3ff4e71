#!/bin/sh
# Instructions per leaf entry of each slat-bench scenario under callgrind,
# beside KVM's instructions per leaf as published in
# docs/PERFORMANCE.md ("KVM's figures of 2026-12-01"), with the ratio KVM/ours, the target and
# whether it is met; then the functions that execute them
# (docs/PERFORMANCE.md). Deterministic: only the last timed run of each
# scenario is counted (--collect-atstart=no, slat-bench toggles collection
# around its timed region). A target relative to the floor is judged
# against the floor's own instructions per entry, counted the same way
# (slat-bench --count-floor). A slat-bench built with KVM's code (make
# bench-kvm) also has KVM's instructions counted, in a third run of the
# scenario (--count-kvm, which runs KVM's code beside ours): the column
# "here".
#
#   bench/callgrind.sh [path/to/slat-bench] [size-shift] [ids] [top]
#
# Defaults: build/bench/slat-bench, size shift 4 (1 GiB -> 64 MiB,
# 16 GiB -> 1 GiB), every scenario, the top 6 functions. The exit status is
# 0 whether targets are met or not; 1 if a scenario fails its checks, 2 if
# valgrind is missing.
set -eu
BENCH=${1:-build/bench/slat-bench}
SHIFT=${2:-4}
IDS=${3:-}
TOP=${4:-6}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

command -v valgrind >/dev/null || {
	echo "callgrind.sh: valgrind not found (install it: scripts/deps.sh)" >&2
	exit 2
}
[ -x "$BENCH" ] || {
	echo "callgrind.sh: $BENCH is not an executable: build slat-bench" \
		"first (make bench), or give its path as the first argument" >&2
	exit 2
}
"$BENCH" --targets >"$OUT/targets"
KVM_HERE=
if "$BENCH" --kvm --list >/dev/null 2>&1; then
	KVM_HERE=yes
fi
[ -n "$IDS" ] || IDS=$(cut -f1 "$OUT/targets" | tr '\n' ',')

# count ID [--count-floor]: the scenario under callgrind; its JSON in
# $OUT/json.ID$2, its profile in $OUT/cg.ID$2.
count() {
	valgrind --tool=callgrind --collect-atstart=no \
		--callgrind-out-file="$OUT/cg.$1${2:-}" \
		"$BENCH" --only "$1" --size-shift "$SHIFT" --reps 1 --json \
		${2:+"$2"} \
		>"$OUT/json.$1${2:-}" 2>"$OUT/err.$1${2:-}" || {
		echo "callgrind.sh: scenario $1 failed:" >&2
		cat "$OUT/err.$1${2:-}" >&2
		exit 1
	}
}

total_ir() {
	callgrind_annotate "$1" 2>/dev/null |
		sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,
}

echo "instructions per leaf under callgrind (slat-bench --size-shift $SHIFT," \
	"the last timed run); KVM: instructions per leaf as published in"
echo "docs/PERFORMANCE.md, KVM 2026-12-01 (callgrind, full sizes; at 1/16 the size" \
	"the ratios were within about 10 %); KVM/ours = KVM's Ir/leaf / ours"
[ -z "$KVM_HERE" ] || echo "here: KVM's instructions per leaf counted on" \
	"this machine (slat-bench --count-kvm), and here/ours"
printf '%-4s %-28s %8s %12s %9s %8s %9s %7s %9s  %-38s %s\n' id scenario \
	leaves Ir Ir/leaf "KVM Ir" "KVM/ours" here here/ours target met
for id in $(echo "$IDS" | tr ',' ' '); do
	line=$(awk -F'\t' -v id="$id" '$1 == id' "$OUT/targets")
	[ -n "$line" ] || { echo "callgrind.sh: no scenario $id" >&2; exit 1; }
	key=$(echo "$line" | cut -f2)
	kvm=$(echo "$line" | cut -f3)
	kind=$(echo "$line" | cut -f4)
	value=$(echo "$line" | cut -f5)
	irmax=$(echo "$line" | cut -f6)
	count "$id"
	leaves=$(sed -n 's/.*"leaves": \([0-9]*\),.*/\1/p' "$OUT/json.$id" |
		head -n1)
	if [ -z "$leaves" ]; then
		printf '%-4s %-28s skipped in this configuration\n' "$id" "$key"
		continue
	fi
	ir=$(total_ir "$OUT/cg.$id")
	here=-
	if [ -n "$KVM_HERE" ]; then
		count "$id" --count-kvm
		# Scenarios KVM's code does not run have no kvm_here.
		if grep -q '"kvm_here": {' "$OUT/json.$id--count-kvm"; then
			here=$(total_ir "$OUT/cg.$id--count-kvm")
		fi
	fi
	floor_ir=-
	entries=1
	if [ "$kind" = floor-x ]; then
		count "$id" --count-floor
		floor_ir=$(total_ir "$OUT/cg.$id--count-floor")
		entries=$(sed -n 's/.*"entries": \([0-9]*\),.*/\1/p' \
			"$OUT/json.$id--count-floor" | head -n1)
	fi
	echo "$id $key $leaves $ir $kvm $kind $value $floor_ir $entries $here $irmax" |
		awk '{
		per = $4 / $3
		ratio = $5 == "-" ? "-" : sprintf("%.2fx", $5 / per)
		met = ""
		if ($6 == "peer-x" || $6 == "visited-peer-x") {
			max = $5 / $7
			tgt = sprintf(">= %gx KVM: <= %.2f", $7, max)
		} else if ($6 == "here-x") {
			# KVM counted in this run, and an absolute bound
			max = $11
			if ($10 != "-" && $10 / $3 / $7 < max)
				max = $10 / $3 / $7
			tgt = sprintf(">= %gx KVM here, <= %g: <= %.2f", $7, $11, max)
		} else if ($6 == "floor-x") {
			fl = $8 / $9
			max = $7 * fl
			tgt = sprintf("<= %gx floor (%.2f/entry): <= %.2f", $7, fl, max)
		} else {
			tgt = "-"
		}
		if (tgt != "-")
			met = per <= max ? "PASS" : "MISS"
		here = "-"; hratio = "-"
		if ($10 != "-") {
			here = sprintf("%.1f", $10 / $3)
			hratio = sprintf("%.2fx", $10 / $3 / per)
		}
		printf "%-4s %-28.28s %8d %12d %9.2f %8s %9s %7s %9s  %-38s %s\n",
		       $1, $2, $3, $4, per, $5, ratio, here, hratio, tgt, met
	}'
done

echo
echo "top functions (instructions, self) per scenario:"
for id in $(echo "$IDS" | tr ',' ' '); do
	[ -s "$OUT/cg.$id" ] || continue
	grep -q '"leaves"' "$OUT/json.$id" || continue
	echo "$id:"
	callgrind_annotate --auto=no --inclusive=no "$OUT/cg.$id" 2>/dev/null |
		sed -n '/PROGRAM TOTALS/,$p' | grep -E '^ *[0-9,]+ \(' |
		grep -v 'PROGRAM TOTALS' | head -n "$TOP" |
		sed -e 's/ \[[^]]*\]$//' -e "s|$ROOT/||" -e 's/^/      /'
done

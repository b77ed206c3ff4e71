#!/bin/sh
# Run every seed's experiment at the scale docs/REPRODUCING.md reports, each
# with its before/after comparison in one process. Writes OUT/NAME.txt (the
# selftest lines, the side-by-side table) and OUT/NAME.json for each.
#
#   scripts/reproduce.sh [OUT] [NAME ...]     (default OUT: reproduce-out)
#
# NAMEs: 000-anon 000-thp 000-hugetlb-1g 001 001-arm 002-enable-4k 002-enable-thp
# 002-enable-1g 002-clear-4k 002-clear-thp 002-clear-1g 003 004-map
# 004-flush. Synthetic backings stand in for host memory, so every run fits
# a 2-core, 24 GiB machine; all of them take about 23 minutes there.
# SLAT_PERF_COST=FILE passes --cost FILE to every run (scripts/seed_ratios.py
# --sensitivity uses it); scripts/seed_ratios.py OUT prints the seeds'
# elapsed ratios beside the modeled ones.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
perf=${SLAT_PERF:-$here/build/tools/slat-perf/slat-perf}
out=${1:-reproduce-out}
[ $# -gt 0 ] && shift
if [ ! -x "$perf" ]; then
	echo "reproduce.sh: $perf not found: run 'make demo' (or cmake --build build) first" >&2
	exit 1
fi
mkdir -p "$out"

run() {
	name=$1
	shift
	if [ -n "$only" ] && ! echo " $only " | grep -q " $name "; then
		return 0
	fi
	echo "== $name: slat-perf $*" >&2
	start=$(date +%s)
	if "$perf" "$@" ${SLAT_PERF_COST:+--cost "$SLAT_PERF_COST"} \
		--json "$out/$name.json" >"$out/$name.txt" 2>&1; then
		echo "   done in $(($(date +%s) - start)) s: $out/$name.txt" >&2
	else
		echo "   FAILED (exit $?), see $out/$name.txt" >&2
		failed="$failed $name"
	fi
}

only="$*"
failed=

# 000: where the D-cache clean happens in the fault path. The seed's three
# runs of kvm_page_table_test on Kunpeng 920 (its -m 4 is today's -m 6:
# 40-bit IPA, 4K granule). Cleans of synthetic memory take their modeled
# time (--clean-time=slept), so that vCPUs faulting on the same block
# overlap the winner's clean as they would on hardware.
for src in synthetic:anon:1G:80 synthetic_2mb:thp:20G:40 \
	   synthetic_1gb:hugetlb-1g:20G:40; do
	s=${src%%:*}; rest=${src#*:}
	n=${rest%%:*}; rest=${rest#*:}
	b=${rest%%:*}; v=${rest#*:}
	run "000-$n" page-table -m 6 -s "$s" -b "$b" -v "$v" \
		--clean-time=slept --compare cmo=in-walker,before-map
done

# 001: disabling dirty logging on 96 vCPUs x 1 GiB of 1G-backed memory that
# logging split to 4K pages: zap every leaf, zap whole tables, or promote
# back to blocks in place. EPT as the seed's (-m 9, PA-bits:ANY), then
# Armv8 stage 2.
run 001 dirty-log -m 9 -v 96 -b 1G -s synthetic_1gb -i 2 --flush=entry \
	--compare recover=zap-leaf,zap-table,promote
run 001-arm dirty-log -m 6 -v 96 -b 1G -s synthetic_1gb -i 2 --flush=entry \
	--compare recover=zap-leaf,zap-table,promote

# 002: eager splitting of one 16 GiB slot with and without level skipping:
# at enable (-g: no manual protect, the seed's scenario 1) and in each
# CLEAR_DIRTY_LOG (manual protect, the default: scenario 2), for memory
# already split (4K), THP (2M) and 1G hugetlb.
for src in synthetic:4k synthetic_2mb:thp synthetic_1gb:1g; do
	s=${src%%:*}
	n=${src##*:}
	run "002-enable-$n" dirty-log -m 6 -v 16 -b 1G -s "$s" -i 2 -g \
		--eager-split=enable --compare split-skip=off,on --repeat 2
	run "002-clear-$n" dirty-log -m 6 -v 16 -b 1G -s "$s" -i 2 \
		--eager-split=clear --compare split-skip=off,on --repeat 2
done

# 003: trapped guest TLB maintenance, the seed's 7 vCPUs.
run 003 tlbi-trap -v 7 -P 14 -n 4000000

# 004: 8 GiB of device MMIO: pages against blocks (per-entry invalidation,
# as before the seed), then one VM-wide invalidation against per entry.
run 004-map mmio -b 8G --flush=entry --compare mmio-map=page,block
run 004-flush mmio -b 8G --mmio-map=page --compare flush=entry,vm

if [ -n "$failed" ]; then
	echo "reproduce.sh: failed:$failed" >&2
	exit 1
fi

#!/usr/bin/env bash
# Run one of Linux's KVM selftests on a real KVM arm64 (Debian's arm64
# kernel at EL2 inside qemu-system-aarch64) and print the stage-2 faults of
# each phase beside slat-perf's for the same command line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

usage() {
	cat <<EOF
usage: run.sh [--work DIR] [--slat-perf PATH] [--timeout SECONDS]
              [--buffer-kb KB] [--smp N] [--no-slat] TEST [ARGS...]

Boot Debian's arm64 kernel (real KVM, VHE, at EL2) in qemu-system-aarch64,
run the selftest TEST (dirty_log_perf_test or kvm_page_table_test, Linux
6.1 from Debian's linux-source-6.1, arm64, static) with ARGS in it, count
the kernel's kvm:kvm_guest_fault events between the lines the test prints,
and print them beside slat-perf's faults for the same ARGS (slat-perf
dirty-log / page-table, its -m translated by mode string).

  --work DIR         cache and output folder (default ./build/real-kvm):
                     source tree, selftests, guest kernel, initramfs,
                     console log; each step is skipped when done
  --slat-perf PATH   slat-perf binary (default build/tools/slat-perf/slat-perf)
  --no-slat          only the real KVM's counts
  --timeout SECONDS  QEMU's time limit (default 1800)
  --buffer-kb KB     trace ring buffer per guest CPU (default 131072)
  --smp N            guest CPUs (default 2)
  -h, --help         this text

Example: run.sh dirty_log_perf_test -b 64M -v 2 -m 5
(mode 5 of Linux 6.1 is PA-bits:40, 4K pages; TCG is slow, keep -b small).
Needs (Debian bookworm): qemu-system-arm cpio gcc-aarch64-linux-gnu
libc6-dev-arm64-cross linux-source-6.1 python3, and the arm64 architecture
in apt (dpkg --add-architecture arm64 && apt-get update) for the kernel
and busybox-static, which hyp/fetch.sh downloads.
EOF
}
say() { echo "real-kvm: $*" >&2; }
die() { echo "real-kvm: $*" >&2; exit 1; }

work=build/real-kvm slat="" timeout_s=1800 buffer_kb=131072 smp=2 no_slat=0
while [ $# -gt 0 ]; do
	case $1 in
	-h|--help) usage; exit 0 ;;
	--work) work=$2; shift ;;
	--slat-perf) slat=$2; shift ;;
	--no-slat) no_slat=1 ;;
	--timeout) timeout_s=$2; shift ;;
	--buffer-kb) buffer_kb=$2; shift ;;
	--smp) smp=$2; shift ;;
	--) shift; break ;;
	-*) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] || { usage >&2; exit 2; }
test=$1
shift
case $test in
dirty_log_perf_test) sub=dirty-log ;;
kvm_page_table_test) sub=page-table ;;
*) echo "run.sh: TEST is dirty_log_perf_test or kvm_page_table_test, not $test" >&2; exit 2 ;;
esac
for a in "$@"; do
	case $a in
	*[!A-Za-z0-9_.,:=+-]*)
		echo "run.sh: argument '$a': only plain words (the guest's /init runs the line as it is)" >&2
		exit 2 ;;
	esac
done

for c in qemu-system-aarch64 cpio gzip python3; do
	command -v $c >/dev/null ||
		die "no $c: apt-get install qemu-system-arm cpio gzip python3"
done
if [ $no_slat = 0 ]; then
	[ -n "$slat" ] || slat=$root/build/tools/slat-perf/slat-perf
	[ -x "$slat" ] || die "no slat-perf at $slat: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2 (or --slat-perf PATH, or --no-slat)"
fi
mkdir -p "$work"
work=$(cd "$work" && pwd)

# 1. The guest kernel and busybox (hyp/fetch.sh), the selftests.
say "guest kernel and busybox-static into $work/guest"
rc=0
flock "$work/.fetch.lock" "$root/hyp/fetch.sh" "$work/guest" >&2 || rc=$?
[ $rc -eq 77 ] && die "cannot download Debian's arm64 kernel and busybox-static: as root, dpkg --add-architecture arm64 && apt-get update (and check the network)"
[ $rc -eq 0 ] || die "hyp/fetch.sh failed ($rc)"
"$here/build-selftests.sh" "$work"

# 2. The initramfs: busybox, /init, the test and its command line.
img=$work/initrd
rm -rf "$img" && mkdir -p "$img"/{bin,dev,proc,sys,real-kvm}
cp "$work/guest/busybox" "$img/bin/busybox"
cp "$here/init.sh" "$img/init"
cp "$here/count.awk" "$img/real-kvm/"
cp "$work/bin/$test" "$img/real-kvm/"
echo "$test $*" > "$img/real-kvm/cmd"
echo "$buffer_kb" > "$img/real-kvm/buffer_kb"
chmod 755 "$img/init" "$img/bin/busybox"
(cd "$img" && find . | cpio -o -H newc --quiet) | gzip -1 > "$work/initrd.gz"

# 3. Boot it. The console log keeps everything; RK lines are /init's.
log=$work/console.log
say "booting the real KVM under QEMU (TCG): $test $* (minutes; log: $log)"
start=$(date +%s)
rc=0
timeout "$timeout_s" qemu-system-aarch64 -M virt,virtualization=on,gic-version=3 \
	-cpu max,pauth-impdef=on -smp "$smp" -m 2G -accel tcg,thread=multi \
	-nographic -nic none -no-reboot -kernel "$work/guest/Image" \
	-initrd "$work/initrd.gz" -append "console=ttyAMA0 panic=-1 quiet" \
	</dev/null >"$log" 2>&1 || rc=$?
tr -d '\r' <"$log" >"$log.tmp" && mv "$log.tmp" "$log"
say "QEMU ran $(( $(date +%s) - start )) s"
[ $rc -eq 124 ] && die "QEMU did not finish in $timeout_s s: --timeout, or smaller -b; see $log"
[ $rc -eq 0 ] || die "QEMU failed ($rc): see $log"
grep -q '^RK end' "$log" || die "the guest did not finish its run: see $log"
if grep -q '^RK error' "$log"; then
	die "$(grep '^RK error' "$log" | sed 's/^RK error //'): see $log"
fi
lost=$(awk '/^RK lost/ { print $3 }' "$log")
[ "$lost" = 0 ] || say "warning: the trace lost $lost events (--buffer-kb larger)"
grep -a '^RK phase' "$log" >"$work/real-phases.tsv"
test_rc=$(awk '/^RK rc/ { print $3 }' "$log")
[ "$test_rc" = 0 ] || say "warning: $test exited $test_rc in the guest; its stderr is in $log"

json=()
if [ $no_slat = 0 ]; then
	json=("$work/slat-perf.json")
	line=$(python3 "$here/table.py" --slat-args "$slat" "$sub" \
		"$work/real-phases.tsv" "$@") ||
		die "cannot translate the command line for slat-perf"
	read -r -a sargs <<<"$line"
	say "slat-perf $sub ${sargs[*]}"
	"$slat" "$sub" "${sargs[@]}" --json "${json[0]}" >"$work/slat-perf.out" ||
		die "slat-perf failed: see $work/slat-perf.out"
fi

# 4. The test's own lines, then the table.
echo "### $test $* on $(awk '/^RK kernel/ { print $3 }' "$log"), $(grep -a '^RK kvm' "$log" | cut -d' ' -f3-) (exit $test_rc)"
cut -f15- "$work/real-phases.tsv" | grep -v '^(teardown)$'
echo
python3 "$here/table.py" --table "$sub" "$work/real-phases.tsv" "${json[@]}"

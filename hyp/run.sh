#!/usr/bin/env bash
# Boot Debian's arm64 kernel with a busybox initramfs as the guest of
# slat-hyp under qemu-system-aarch64 (TCG, multi-threaded).
#
#   run.sh --test|--demo --elf SLAT-HYP.ELF --mkcpio MKCPIO --cache DIR
#          [--smp N] [--mem SIZE] [--log wp|hw] [--poison-hpfar unknown|834220]
#          [--idle-states] [--rng]
#   run.sh -h|--help   (what each argument does)
#
# --demo: the console is yours, /init starts a shell. --test: /init runs
# its workload and powers off; the console is checked: the marker, both
# checksums against the host's, a clean PSCI SYSTEM_OFF (QEMU exits 0),
# every vCPU's stage-2 faults, the guest's MemTotal against the layout
# slat-hyp took from the DTB (--mem: QEMU's -m, 2G by default), guest RAM
# in blocks, device windows from the DTB and at least one of them mapped
# as a block. --log: slat-hyp's dirty-log check runs while the guest
# writes, by write protection (wp) or hardware dirty state (hw); 0
# differing bytes, at least 3 rounds, each with dirty pages, pre-copy
# ended by slat-hyp's stopping rule, each round's times and leaves, one
# kick per other vCPU and none seen by the guest (nor any kernel
# warning), recovery, and (wp: guest RAM aged between rounds)
# access-flag faults are checked too; the last line then gives the
# verdict of slat-hyp's "log check" line and its differing bytes.
# --poison-hpfar: slat-hyp hands its fault decoder a wrong HPFAR_EL2
# wherever the architecture leaves it UNKNOWN (or, 834220, for every
# abort outside a stage-1 walk, as on a core with that erratum); the run
# must pass all the same, with some HPFAR_EL2 poisoned and IPAs found
# through AT. --idle-states: the guest's CPUs get a standby and a
# power-down idle state, and slat-hyp emulates the power loss QEMU's PSCI
# does not; the test then also checks that the guest suspended to the
# power-down state and woke in slat-hyp, which kept its stage 2. Every
# run checks that the guest's redistributor offers no LPIs and keeps
# EnableLPIs clear, that EL2's own map holds the DTB's RAM, the UART and
# the redistributors only, that the CPUs came from the DTB's /cpus, and
# that the guest's PMU has every counter MDCR_EL2.HPMN gives it; with
# --log, that a second start during the migration was refused. --rng: a virtio-rng PCI device, whose driver would use
# MSI-X (LPIs through the ITS); the test checks that it gave bytes
# through a GICv3 wired interrupt instead. Exit
# 77 (skip) only when a prerequisite is missing: no cross compiler, no
# QEMU, no package.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

usage() {
	cat <<'EOF'
Usage: hyp/run.sh --test|--demo --elf FILE --mkcpio FILE --cache DIR
                  [--smp N] [--mem SIZE] [--log wp|hw]
                  [--poison-hpfar unknown|834220] [--idle-states] [--rng]

Boots Debian's arm64 kernel with a busybox initramfs as the guest of
slat-hyp under qemu-system-aarch64 (TCG) and, with --test, checks the
console (docs/hypervisor.md).

  --test         (default) /init runs its workload and powers off; the
                 console is checked, its last line says PASS or FAIL
  --demo         /init starts a shell on this console instead; 'poweroff -f'
                 ends the run (nothing is checked)
  --elf FILE     slat-hyp.elf, from the build (BUILD/hyp/slat-hyp.elf);
                 missing: the test skips (no cross compiler)
  --mkcpio FILE  the initramfs writer, from the build (BUILD/hyp/slat-mkcpio)
  --cache DIR    where hyp/fetch.sh puts Debian's kernel and busybox (once),
                 and where the initramfs and the console log are written
                 (BUILD/hyp/guest)
  --smp N        vCPUs, QEMU's -smp (default 2)
  --mem SIZE     RAM, QEMU's -m (default 2G)
  --log wp|hw    run slat-hyp's dirty-log check while the guest writes, by
                 write protection (wp) or hardware dirty state (hw); the
                 last line then gives the check's verdict and the bytes
                 that differ between the guest's memory and the copy
  --poison-hpfar unknown|834220
                 slat-hyp replaces HPFAR_EL2 with a wrong IPA (the same
                 page 2 MiB away) wherever the architecture leaves it
                 UNKNOWN (unknown: permission faults outside a stage-1
                 walk), or for every abort outside a stage-1 walk while
                 acting as on a core with erratum 834220 (834220); the
                 test then also checks that some were poisoned and that
                 slat-hyp found IPAs through AT S1E1R
  --idle-states  slat-hyp gives the guest's CPUs a standby and a power-down
                 idle state (PSCI CPU_SUSPEND) and, since QEMU's PSCI
                 only waits for an interrupt, wakes a CPU from power-down
                 at slat-hyp's entry with EL2's state wiped, as firmware
                 would; the test then also checks that the guest entered
                 the power-down state and woke in slat-hyp
  --rng          a virtio-rng PCI device (QEMU's virtio-rng-pci), whose
                 driver uses MSI-X where it can; slat-hyp offers no LPIs,
                 so the test checks that it works through a wired GICv3
                 interrupt instead
  -h, --help     this text

Environment: none is read; qemu-system-aarch64, flock and timeout are
found on PATH.

Exit status: 0 pass; 1 fail; 2 usage error; 77 skip (no slat-hyp.elf, no
qemu-system-aarch64, or the guest's packages cannot be fetched).
EOF
}
usage_error() {
	echo "run.sh: $* (see hyp/run.sh --help)" >&2
	exit 2
}

what=test elf="" mkcpio="" cache="" smp=2 mem=2G log=0 hpfar=0 idle=0 rng=0
while [ $# -gt 0 ]; do
	case $1 in
	--elf|--mkcpio|--cache|--smp|--mem|--log|--poison-hpfar)
		[ $# -ge 2 ] || usage_error "$1 needs a value" ;;
	esac
	case $1 in
	-h|--help) usage; exit 0 ;;
	--test) what=test ;;
	--idle-states) idle=1 ;;
	--rng) rng=1 ;;
	--demo) what=demo ;;
	--elf) elf=$2; shift ;;
	--mkcpio) mkcpio=$2; shift ;;
	--cache) cache=$2; shift ;;
	--smp) smp=$2; shift ;;
	--mem) mem=$2; shift ;;
	--log)
		case $2 in
		wp) log=1 ;;
		hw) log=2 ;;
		*) usage_error "--log $2: wp or hw" ;;
		esac
		shift ;;
	--poison-hpfar)
		case $2 in
		unknown) hpfar=1 ;;
		834220) hpfar=2 ;;
		*) usage_error "--poison-hpfar $2: unknown or 834220" ;;
		esac
		shift ;;
	*) usage_error "unknown argument $1" ;;
	esac
	shift
done
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ -n "$elf" ] && [ -f "$elf" ] || skip "no slat-hyp.elf (aarch64-linux-gnu-gcc missing)"
command -v qemu-system-aarch64 >/dev/null || skip "qemu-system-aarch64 missing"
[ -n "$cache" ] && [ -x "$mkcpio" ] || fail "--cache and --mkcpio are needed"
rc=0
mkdir -p "$cache"
# One fetch at a time into the cache, whoever runs.
flock "$cache/.fetch.lock" "$here/fetch.sh" "$cache" || rc=$?
[ $rc -eq 77 ] && skip "cannot fetch the guest's packages"
[ $rc -eq 0 ] || fail "fetch.sh: $rc"

initrd=$cache/initrd-$what-$log.cpio
modules=()
for m in "$cache"/modules/*.ko; do
	modules+=("f:lib/modules/${m##*/}:644:$m")
done
"$mkcpio" "$initrd" d:bin:755 d:dev:755 c:dev/console:600:5:1 \
	"f:bin/busybox:755:$cache/busybox" "f:init:755:$here/init.sh" \
	d:lib:755 d:lib/modules:755 "${modules[@]}"
demo=0
[ $what = demo ] && demo=1
qemu=(qemu-system-aarch64 -M virt,virtualization=on,gic-version=3
	-cpu max,pauth-impdef=on -smp "$smp" -m "$mem" -accel tcg,thread=multi
	-nographic -nic none -semihosting -no-reboot -kernel "$elf"
	-device "loader,file=$cache/Image,addr=0x40200000,force-raw=on"
	-device "loader,file=$initrd,addr=0x48000000,force-raw=on"
	-device "loader,addr=0x70200000,data=$(stat -c %s "$initrd"),data-len=8"
	-device "loader,addr=0x70200008,data=$log,data-len=8"
	-device "loader,addr=0x70200010,data=$demo,data-len=8"
	-device "loader,addr=0x70200018,data=$hpfar,data-len=8"
	-device "loader,addr=0x70200020,data=$idle,data-len=8")
[ $rng -eq 0 ] || qemu+=(-device virtio-rng-pci)
if [ $what = demo ]; then
	exec "${qemu[@]}"
fi

out=$cache/console-$log-$mem-$hpfar-$idle-$rng.log
start=$(date +%s)
rc=0
timeout 300 "${qemu[@]}" </dev/null >"$out" 2>&1 || rc=$?
elapsed=$(( $(date +%s) - start ))
tr -d '\r' <"$out" | grep -a 'slat-hyp' || true
echo "run.sh: QEMU exited $rc after ${elapsed} s (host wall)"
con=$(tr -d '\r' <"$out")

[ $rc -eq 0 ] || fail "QEMU exited $rc (124: timeout; 1: slat-hyp stopped)"
grep -q "slat-hyp: init up, $smp cpus" <<<"$con" || fail "no /init marker for $smp CPUs"
want=$( (yes 'slat-hyp workload' || true) | head -n 1048576 | sha256sum | cut -d' ' -f1)
n=$(grep -c "slat-hyp: sha256 $want" <<<"$con" || true)
[ "$n" -eq 2 ] || fail "checksums: $n of 2 match the host's $want"
grep -q "slat-hyp: workload done" <<<"$con" || fail "workload did not finish"
grep -q "reboot: Power down" <<<"$con" || fail "no power down"
grep -q "slat-hyp: guest asked to power off" <<<"$con" || fail "no PSCI SYSTEM_OFF seen by slat-hyp"
for ((cpu = 0; cpu < smp; cpu++)); do
	line=$(grep "slat-hyp: cpu$cpu " <<<"$con") || fail "no counters for vCPU $cpu"
	t=$(sed -n 's/.* s2_translation=\([0-9]*\).*/\1/p' <<<"$line")
	[ "${t:-0}" -gt 0 ] || fail "vCPU $cpu took no stage-2 translation fault"
done
# The guest's RAM is what slat-hyp's DTB says: its kernel counts all of
# it less its own image and reservations (tens of MiB).
ram=$(sed -n 's/.*guest RAM \(0x[0-9a-f]*\)-\(0x[0-9a-f]*\) but slat-hyp.s \(0x[0-9a-f]*\)-\(0x[0-9a-f]*\),.*/\1 \2 \3 \4/p' <<<"$con")
[ -n "$ram" ] || fail "no RAM layout from slat-hyp"
set -- $ram
ram_kb=$(( ($2 - $1 - ($4 - $3)) / 1024 ))
memtotal=$(sed -n 's/.*slat-hyp: guest MemTotal: *\([0-9]*\) kB.*/\1/p' <<<"$con")
[ "${memtotal:-0}" -le "$ram_kb" ] && [ "${memtotal:-0}" -ge $((ram_kb * 9 / 10)) ] ||
	fail "guest MemTotal ${memtotal:-none} kB for $ram_kb kB of guest RAM"
echo "run.sh: -m $mem: guest RAM $ram_kb kB, MemTotal $memtotal kB"
blocks=$(sed -n 's/.*guest RAM leaves 1G=[0-9]* 2M=\([0-9]*\).*/\1/p' <<<"$con" | tail -n1)
[ "${blocks:-0}" -gt 0 ] || fail "no guest RAM mapped in 2M blocks"
windows=$(sed -n 's/.*slat-hyp: device windows: \([0-9]*\) from the DTB.*/\1/p' <<<"$con")
[ "${windows:-0}" -gt 0 ] || fail "no device windows from the DTB"
dev=$(sed -n 's/.*device leaves 1G=\([0-9]*\) 2M=\([0-9]*\).*/\1 \2/p' <<<"$con" | tail -n1)
[ -n "$dev" ] && [ "$(( ${dev% *} + ${dev#* } ))" -gt 0 ] ||
	fail "no device window mapped as a block on first touch"
# EL2's own map holds the RAM slat-hyp took from the DTB and, as Device
# memory, the UART page and the redistributors, nothing else; every CPU
# came from the DTB's /cpus. The guest's PMU has every counter
# MDCR_EL2.HPMN can give it (its driver counts the cycle counter too).
el2map=$(grep "slat-hyp: EL2 map: " <<<"$con") || fail "no EL2 map"
ram_range=$(sed -n 's/.*slat-hyp: RAM \(0x[0-9a-f]*-0x[0-9a-f]*\), guest RAM.*/\1/p' <<<"$con")
[ "$(grep -o ' RAM 0x[0-9a-fx-]*' <<<"$el2map")" = " RAM ${ram_range:-none}" ] ||
	fail "EL2's map holds other RAM than ${ram_range:-none}: $el2map"
[ "$(grep -o ' device 0x[0-9a-fx-]*' <<<"$el2map" | wc -l)" -eq 2 ] &&
	grep -q ' device 0x9000000-0x9001000' <<<"$el2map" ||
	fail "EL2's map has other devices than the UART and the redistributors: $el2map"
ncpus=$(sed -n 's/.*slat-hyp: CPUs (MPIDR affinity, from the DTB):\(.*\);.*/\1/p' <<<"$con" | wc -w)
[ "$ncpus" -eq "$smp" ] || fail "$ncpus CPUs from the DTB, not $smp"
hpmn=$(sed -n 's/.*slat-hyp: MDCR_EL2 \(0x[0-9a-f]*\) HSTR_EL2 0x0 .*/\1/p' <<<"$con")
[ -n "$hpmn" ] || fail "no MDCR_EL2, or HSTR_EL2 not 0"
pmcr=$(sed -n 's/.*slat-hyp: MDCR_EL2 .* PMCR_EL0 \(0x[0-9a-f]*\).*/\1/p' <<<"$con")
[ -n "$pmcr" ] && [ $(( hpmn & 0x1f )) -eq $(( pmcr >> 11 & 0x1f )) ] ||
	fail "MDCR_EL2 $hpmn: HPMN is not PMCR_EL0.N (PMCR_EL0 ${pmcr:-not printed})"
counters=$(sed -n 's/.*slat-hyp: guest PMU: \([0-9]*\) counters available.*/\1/p' <<<"$con")
[ "${counters:-0}" -eq $(( (hpmn & 0x1f) + 1 )) ] ||
	fail "the guest's PMU has ${counters:-no} counters, MDCR_EL2 $hpmn gives it $(( (hpmn & 0x1f) + 1 ))"
echo "run.sh: $el2map; guest PMU: $counters counters (MDCR_EL2 $hpmn)"
# Before its MMU went on, each CPU invalidated to the PoC what it wrote
# with the MMU off (docs/hypervisor.md): the ranges slat-hyp printed must
# cover what its ELF's symbols say it wrote, the EL2 table TTBR0_EL2
# names, and each started CPU's own stack.
inval=$(grep "slat-hyp: invalidated to the PoC before the MMU went on:" <<<"$con") ||
	fail "no invalidation before the MMU went on"
range_of() { sed -n "s/.*$1\(0x[0-9a-f]*\)-\(0x[0-9a-f]*\).*/\1 \2/p" <<<"$2"; }
sym() { nm -S "$elf" | awk -v s="$1" '$NF == s { print "0x" $1, (NF == 4 ? "0x" $2 : "0x0") }'; }
# covers "START END" ADDR SIZE: [ADDR, ADDR + SIZE) lies in [START, END)
covers() {
	local r=($1)
	[ -n "${r[1]:-}" ] && [ $(( r[0] )) -le $(( $2 )) ] && [ $(( $2 + $3 )) -le $(( r[1] )) ]
}
image=$(range_of "stacks " "$inval")
for s in __bss_start hyp_stacks hyp_boot_stack hyp_cpus hyp_el2_regs; do
	read -r a n <<<"$(sym $s)"
	[ -n "${a:-}" ] || fail "no symbol $s in $elf"
	covers "$image" "$a" "$n" || fail "invalidation of the image ($image) misses $s"
done
read -r bss_end _ <<<"$(sym __bss_end)"
covers "$image" "$bss_end" 0 || fail "invalidation of the image ($image) misses .bss's end"
ttbr=$(sed -n 's/.* TTBR0_EL2 \(0x[0-9a-f]*\).*/\1/p' <<<"$con" | head -n1)
covers "$(range_of "EL2 table " "$inval")" "${ttbr:-0}" 32 ||
	fail "invalidation of the EL2 table misses its root at ${ttbr:-?}"
covers "$(range_of "parameters " "$inval")" 0x70200000 40 ||
	fail "invalidation misses the parameters"
read -r stacks _ <<<"$(sym hyp_stacks)"
for ((cpu = 1; cpu < smp; cpu++)); do
	got=$(range_of stack_inval= "$(grep "slat-hyp: cpu$cpu " <<<"$con")")
	want="$(printf '0x%x 0x%x' $((stacks + cpu * 16384)) $((stacks + (cpu + 1) * 16384)))"
	[ "$got" = "$want" ] || fail "vCPU $cpu invalidated ${got:-no} stack, not $want"
done
echo "run.sh: invalidated before the MMU went on: ${inval#*went on: }"
# No LPIs (docs/hypervisor.md): the guest's redistributor says it has
# none (GICR_TYPER.PLPIS, bit 0) and keeps GICR_CTLR.EnableLPIs (bit 0)
# clear when the guest sets it; the guest went on without an ITS.
gicr=$(sed -n 's/.*guest GICR_TYPER \(0x[0-9A-Fa-f]*\) GICR_CTLR \(0x[0-9A-Fa-f]*\), \(0x[0-9A-Fa-f]*\) after.*/\1 \2 \3/p' <<<"$con")
[ -n "$gicr" ] || fail "no GICR_TYPER and GICR_CTLR from the guest"
read -r typer ctlr ctlr_after <<<"$gicr"
[ $(( typer & 1 )) -eq 0 ] || fail "the guest's GICR_TYPER $typer offers LPIs"
[ $(( ctlr_after & 1 )) -eq 0 ] || fail "the guest set GICR_CTLR.EnableLPIs: $ctlr_after"
if [ $rng -ne 0 ]; then
	# The device's bytes came through a wired (SPI) interrupt.
	grep -q "slat-hyp: guest hwrng: virtio_rng.0, 64 bytes" <<<"$con" ||
		fail "no bytes from the virtio-rng device"
	irqs=$(grep "slat-hyp: guest irq: " <<<"$con") || fail "the virtio-rng device has no interrupt"
	grep -q GICv3 <<<"$irqs" && ! grep -q MSI <<<"$irqs" ||
		fail "the virtio-rng device's interrupts are not wired GICv3 ones: $irqs"
fi
verdict=""
# Sums of a per-vCPU counter of slat-hyp's "cpuN" lines.
cpu_sum() {
	grep "slat-hyp: cpu[0-9]* " <<<"$con" | sed -n "s/.* $1=\([0-9]*\).*/\1/p" |
		awk '{ n += $1 } END { print n + 0 }'
}
if [ $hpfar -ne 0 ]; then
	poisoned=$(cpu_sum hpfar_poisoned)
	at=$(cpu_sum ipa_from_at)
	[ "$poisoned" -gt 0 ] || fail "--poison-hpfar: no HPFAR_EL2 was poisoned"
	[ "$at" -ge "$poisoned" ] ||
		fail "--poison-hpfar: $poisoned poisoned, only $at IPAs through AT"
	verdict+="; HPFAR_EL2 poisoned $poisoned times, $at IPAs through AT S1E1R"
fi
if [ $idle -ne 0 ]; then
	# The guest went into the power-down state and came back through
	# slat-hyp's entry, every time (the rest of the checks show that
	# slat-hyp kept its stage 2 and its traps).
	down=$(cpu_sum psci_powerdown)
	resumed=$(cpu_sum resumed)
	[ "$down" -gt 0 ] || fail "--idle-states: no CPU_SUSPEND to the power-down state"
	[ "$resumed" -eq "$down" ] ||
		fail "--idle-states: $down power-down suspends, $resumed woke in slat-hyp"
	verdict+="; $down power-down CPU_SUSPENDs, each woken in slat-hyp"
	verdict+=", $(cpu_sum psci_standby) standby"
fi
if [ $log -ne 0 ]; then
	# slat-hyp's verdict, printed once when it compared the guest's RAM
	# with the copy: "slat-hyp: log check mode=M rounds=R
	# pages_compared=P differing_bytes=B differing_pages=D".
	kv() { sed -n "s/.* $1=\([0-9][0-9]*\).*/\1/p" <<<"$2"; }
	check=$(grep "slat-hyp: log check " <<<"$con") ||
		fail "no dirty-log check line (slat-hyp: log check ...) on the console"
	[ "$(wc -l <<<"$check")" -eq 1 ] || fail "more than one log check line: $check"
	bytes=$(kv differing_bytes "$check")
	pages=$(kv differing_pages "$check")
	compared=$(kv pages_compared "$check")
	rounds=$(kv rounds "$check")
	[ -n "$bytes" ] && [ -n "$pages" ] && [ -n "$compared" ] ||
		fail "the log check line lacks its counts: $check"
	[ "$(kv mode "$check")" = $log ] || fail "the log check ran in another mode: $check"
	[ "$bytes" -eq 0 ] && [ "$pages" -eq 0 ] ||
		fail "dirty-log check: $bytes bytes differ in $pages pages: $check"
	[ "$compared" -gt 0 ] || fail "the log check compared no page: $check"
	summary=$(grep "slat-hyp: log summary " <<<"$con") || fail "no log summary"
	[ "$(kv checked "$summary")" = 1 ] &&
		[ "$(kv differing_bytes "$summary")" = "$bytes" ] ||
		fail "the log summary disagrees with the check: $summary"
	[ "${rounds:-0}" -ge 3 ] || fail "fewer than 3 pre-copy rounds"
	verdict+="; dirty-log check ($([ $log -eq 1 ] && echo wp || echo hw)) passed:"
	verdict+=" $bytes differing bytes in $compared pages compared, $rounds rounds"
	grep -q "slat-hyp: log pre-copy ends: " <<<"$con" ||
		fail "pre-copy did not end by its stopping rule"
	busy=$(grep "slat-hyp: log pre-copy round=" <<<"$con" | grep -vc " dirty=0 " || true)
	[ "$busy" -ge 3 ] || fail "fewer than 3 rounds saw the guest write"
	grep "slat-hyp: log pre-copy round=" <<<"$con" |
		grep -v " us=[0-9]* harvest_us=[0-9]* copy_us=[0-9]* age_us=[0-9]* blocks=[0-9]* pages=[0-9]* " &&
		fail "a round's line lacks its times or leaves"
	grep -q "slat-hyp: doorbell: 0x00000000 bytes differ" <<<"$con" ||
		fail "the guest did not go on after the check"
	grep -q "slat-hyp: log recovered" <<<"$con" || fail "no recovery"
	# A second start while the migration ran was refused, and counted
	# once: the check above is what "changed nothing" means.
	grep -qi "slat-hyp: doorbell: second start 0xfffffffe" <<<"$con" ||
		fail "a second start during the migration was not refused"
	[ "$(kv refused_running "$summary")" = 1 ] ||
		fail "the log summary counts no refused start: $summary"
	# Each vCPU but the one that rang was kicked once, and the guest saw
	# none of the kicks (nor any kernel warning).
	kicks=$(sed -n 's/.* kicks=\([0-9]*\) kicks_seen=\([0-9]*\).*/\1 \2/p' <<<"$con" |
		awk '{ k += $1; s += $2 } END { print k + 0, s + 0 }')
	[ "$kicks" = "$((smp - 1)) 0" ] || fail "kicks sent and seen: $kicks"
	grep -q "slat-hyp: kernel warnings: 0" <<<"$con" || fail "the kernel warned"
fi
if [ $log -eq 1 ]; then
	# Aged between rounds, without hardware access flags: the guest's
	# next touches fault and slat_mkyoung() sets the flags again.
	af=$(sed -n 's/.* s2_access_flag=\([0-9]*\).*/\1/p' <<<"$con" |
		awk '{ n += $1 } END { print n + 0 }')
	[ "$af" -gt 0 ] || fail "no access-flag fault after aging"
fi
echo "PASS: Debian's kernel booted on $smp vCPUs over libslat's stage 2$verdict"

#!/bin/busybox sh
# The guest's /init: a marker, a workload over tmpfs on every CPU, the
# checksums of its data, then PSCI SYSTEM_OFF (poweroff -f). With
# SLAT_HYP_DEMO=1 on the kernel command line, a shell instead; with
# SLAT_HYP_LOG=1, slat-hyp's dirty-log check runs while it works.
/bin/busybox mkdir -p /proc /sys /tmp
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o size=512m tmpfs /tmp
uptime_s() { cut -d' ' -f1 /proc/uptime; }
echo "slat-hyp: init up, $(grep -c ^processor /proc/cpuinfo) cpus, $(uptime_s) s"
echo "slat-hyp: guest $(grep MemTotal /proc/meminfo)"
# Its PMU's counters: MDCR_EL2.HPMN leaves it all of them (the cycle
# counter is one more).
echo "slat-hyp: guest PMU: $(dmesg | grep -o '[0-9]* counters available')"
# The guest gets no LPIs (docs/hypervisor.md): its first redistributor
# (RD_base: the second reg entry of the GIC's node) says it has none,
# and keeps GICR_CTLR.EnableLPIs clear when asked to set it.
rd=0x$(od -An -tx1 -j16 -N8 /sys/firmware/devicetree/base/intc@*/reg | tr -d ' \n')
typer=$(devmem $((rd + 8)) 64)
ctlr=$(devmem $rd 32)
devmem $rd 32 $((ctlr | 1))
echo "slat-hyp: guest GICR_TYPER $typer GICR_CTLR $ctlr, $(devmem $rd 32) after EnableLPIs written"
# A PCI device that would use MSI-X (run.sh --rng: virtio-rng-pci): its
# drivers, then some bytes from it, through the interrupt it was given.
# No hardware RNG thread (quality 0): the device writes memory only when
# asked, never behind the dirty log's back.
if grep -qs 0x1af4 /sys/bus/pci/devices/*/vendor; then
	echo 0 > /sys/module/rng_core/parameters/default_quality
	for m in virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio-rng; do
		insmod /lib/modules/$m.ko
	done
	n=$(dd if=/dev/hwrng bs=64 count=1 2>/dev/null | wc -c)
	echo "slat-hyp: guest hwrng: $(cat /sys/class/misc/hw_random/rng_current), $n bytes"
	grep virtio /proc/interrupts | while read -r line; do
		echo "slat-hyp: guest irq: $line"
	done
fi
if [ "$SLAT_HYP_DEMO" = 1 ]; then
	echo "slat-hyp: a shell; 'poweroff -f' ends the run"
	# cttyhack finds the console's tty in sysfs and makes it the
	# shell's controlling terminal (job control, ^C).
	setsid cttyhack sh
	poweroff -f
fi

# 18 bytes doubled 20 times: 18 MiB, the output of
# yes 'slat-hyp workload' | head -n 1048576 on the host. Two copies at
# once, so that both CPUs write fresh memory; their checksums last.
workload() {
	echo 'slat-hyp workload' > /tmp/a
	i=0
	while [ $i -lt 20 ]; do
		cat /tmp/a /tmp/a > /tmp/t
		mv /tmp/t /tmp/a
		i=$((i + 1))
	done
	dd if=/tmp/a of=/tmp/b bs=1M 2>/dev/null &
	dd if=/tmp/a of=/tmp/c bs=1M 2>/dev/null &
	wait
	for f in /tmp/b /tmp/c; do
		set -- $(sha256sum $f)
		echo "slat-hyp: sha256 $1"
	done
}

if [ "$SLAT_HYP_LOG" = 1 ]; then
	# A writer whose pages change all the time (random data over the
	# same 16 MiB): a write the dirty log lost leaves the shadow behind.
	dd if=/dev/urandom of=/tmp/w bs=1M count=16 2>/dev/null
	( while [ ! -e /tmp/stop ]; do
		dd if=/dev/urandom of=/tmp/w bs=64k count=256 conv=notrunc \
			2>/dev/null
	done ) &
	workload > /tmp/sums &
	work=$!
	sleep 1
	# Each phase of the check runs in slat-hyp while this CPU reads
	# the doorbell: logging on and a copy, pre-copy rounds with the
	# writers running in between, then stop, compare, recovery.
	echo "slat-hyp: doorbell: $(devmem 0x0b000008 32) pages copied"
	# A second start while this migration runs is refused (0xFFFFFFFE)
	# and changes nothing.
	echo "slat-hyp: doorbell: second start $(devmem 0x0b000008 32)"
	# slat-hyp ends the rounds: bit 31 of a round's count says that
	# it stopped every vCPU, compared and recovered in that trap.
	r=1
	while :; do
		usleep 300000
		v=$(devmem 0x0b000000 32)
		echo "slat-hyp: doorbell: round $r, $v dirty"
		[ $((v & 0x80000000)) -eq 0 ] || break
		r=$((r + 1))
	done
	echo "slat-hyp: doorbell: $(devmem 0x0b000004 32) bytes differ"
	# The stop's kick must not reach the kernel as an interrupt of its.
	echo "slat-hyp: kernel warnings: $(dmesg | grep -c -e 'Unexpected interrupt' -e 'WARNING:')"
	wait $work
	touch /tmp/stop
	wait
	cat /tmp/sums
else
	workload
fi
echo "slat-hyp: workload done, $(uptime_s) s"
# The idle states the guest entered (run.sh --idle-states), per CPU.
for d in /sys/devices/system/cpu/cpu[0-9]*/cpuidle; do
	[ -d "$d/state1" ] || continue
	c=${d%/cpuidle}
	line=""
	for s in "$d"/state[0-9]*; do
		line="$line $(cat "$s/name")=$(cat "$s/usage")"
	done
	echo "slat-hyp: guest cpuidle ${c##*/}:$line"
done
poweroff -f

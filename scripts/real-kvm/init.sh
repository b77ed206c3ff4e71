#!/bin/busybox sh
# shellcheck shell=dash
# /init of the real-KVM guest: run one selftest command line (from
# /real-kvm/cmd) under tracing and print, per line the test printed, the
# stage-2 events that happened since the line before.
#
# The test's stdout is written straight into trace_marker (the selftests
# leave stdout unbuffered), so each of its lines is a marker in the ring
# buffer at the moment the test printed it, between the events of the phase
# it ends and those of the next. The events recorded: kvm:kvm_guest_fault
# (every stage-2 abort KVM handles, MMIO included), kvm:kvm_mmio (to take
# the MMIO aborts of the test's ucalls out again) and kvm:kvm_exit.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
mount -t tracefs tracefs /sys/kernel/tracing
T=/sys/kernel/tracing
out() { echo "RK $*"; }

if [ ! -e /dev/kvm ]; then
	out "error no /dev/kvm in the guest (KVM did not initialize at EL2)"
	dmesg | grep -i kvm
	poweroff -f
fi
out "kvm $(dmesg | grep -o 'kvm \[1\]: [A-Za-z]* mode initialized successfully' | head -n1)"
out "kernel $(uname -r)"

echo 0 > $T/tracing_on
echo global > $T/trace_clock
echo 0 > $T/options/overwrite
cat /real-kvm/buffer_kb > $T/buffer_size_kb
echo > $T/trace
for e in kvm_guest_fault kvm_mmio kvm_exit; do
	echo 1 > $T/events/kvm/$e/enable
done
# KVM's stage-2 operations, by kprobes (VHE: the TLB flushes run in the
# kernel and can be probed). One that cannot be probed is left out.
for p in map:kvm_pgtable_stage2_map unmap:kvm_pgtable_stage2_unmap \
	wrprotect:kvm_pgtable_stage2_wrprotect \
	relax:kvm_pgtable_stage2_relax_perms \
	tlbi_ipa:__kvm_tlb_flush_vmid_ipa tlbi_vmid:__kvm_tlb_flush_vmid; do
	if echo "p:rk/rk_${p%%:*} ${p#*:}" >> $T/kprobe_events 2>/dev/null; then
		echo 1 > $T/events/rk/rk_${p%%:*}/enable
	else
		out "note no kprobe on ${p#*:}"
	fi
done
echo 1 > $T/tracing_on
echo "real-kvm: start" > $T/trace_marker

cd /real-kvm || poweroff -f
rc=0
sh -c "exec ./$(cat cmd)" > $T/trace_marker || rc=$?
echo 0 > $T/tracing_on
out "rc $rc"
lost=0
for s in "$T"/per_cpu/cpu*/stats; do
	n=$(awk '/^(overrun|dropped events):/ { s += $NF } END { print s + 0 }' "$s")
	lost=$((lost + n))
done
out "lost $lost"

# Per marker: the events since the marker before (count.awk).
awk -f /real-kvm/count.awk $T/trace
out "end"
poweroff -f

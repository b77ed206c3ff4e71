#!/bin/busybox sh
# SPDX-License-Identifier: MIT
# shellcheck shell=dash
# /init of the kvm-on-slat guest: check that KVM came up in VHE mode, run
# every command line of /ks/tests (NAME ARGS..., one a line), each under a
# time limit, and print lines that run.sh reads back from the console:
#   KS kvm <the kernel's KVM line>     KS begin NAME
#   KS end NAME rc=N secs=S            KS dmesg <warning or splat lines>
#   KS trace NAME event=hits...        KS counts_before|counts_after NAME k=v...
# (trace: the hits of KVM's own tracepoints during the test, counted by
# hist triggers, which fire without writing the ring buffer; counts: the
# shim's counters around the test, on the libslat kernel only.)
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
out() { echo "KS $*"; }

T=/sys/kernel/tracing
EVENTS="kvm_guest_fault kvm_access_fault kvm_mmio_emulate kvm_unmap_hva_range kvm_age_hva"
mount -t tracefs nodev $T 2>/dev/null
# trace_arm: a hit count on each event; trace_read NAME: print and drop them.
trace_arm() {
	for e in $EVENTS; do
		echo 'hist:keys=common_pid' >"$T/events/kvm/$e/trigger" 2>/dev/null
	done
}
trace_read() {
	line=""
	for e in $EVENTS; do
		hits=$(sed -n 's/^ *Hits: *//p' "$T/events/kvm/$e/hist" 2>/dev/null)
		line="$line ${e#kvm_}=${hits:--}"
		echo '!hist:keys=common_pid' >"$T/events/kvm/$e/trigger" 2>/dev/null
	done
	out "trace $1$line"
}
counts=/sys/module/kvm/parameters/slat_counts

out "kernel $(uname -r) $(cat /proc/cmdline)"
out "kvm $(dmesg | grep -o 'kvm \[[0-9]*\]: [A-Za-z]* mode initialized successfully' | head -n1)"
if [ ! -e /dev/kvm ]; then
	out "error no /dev/kvm"
	poweroff -f
fi
limit=$(cat /ks/limit)
cd /ks || poweroff -f
while read -r name args; do
	[ -n "$name" ] || continue
	out "begin $name $args"
	[ -r $counts ] && out "counts_before $name $(cat $counts)"
	trace_arm
	t0=$(date +%s)
	rc=0
	# shellcheck disable=SC2086
	timeout "$limit" "./$name" $args || rc=$?
	out "end $name rc=$rc secs=$(($(date +%s) - t0))"
	trace_read "$name"
	[ -r $counts ] && out "counts_after $name $(cat $counts)"
done < /ks/tests
dmesg | grep 'kvm-on-slat' | sed 's/^/KS dmesg /'
dmesg | grep -E 'WARNING|BUG|INFO: |circular locking|sleeping function|Call trace' |
	sed 's/^/KS splat /'
out "done"
poweroff -f

#!/bin/busybox sh
# SPDX-License-Identifier: MIT
# shellcheck shell=dash
# /init of the kvm-on-slat guest: check that KVM came up in VHE mode, run
# every command line of /ks/tests (NAME ARGS..., one a line), each under a
# time limit, and print lines that run.sh reads back from the console:
#   KS kvm <the kernel's KVM line>     KS begin NAME
#   KS end NAME rc=N secs=S            KS dmesg <warning or splat lines>
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
out() { echo "KS $*"; }

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
	t0=$(date +%s)
	rc=0
	# shellcheck disable=SC2086
	timeout "$limit" "./$name" $args || rc=$?
	out "end $name rc=$rc secs=$(($(date +%s) - t0))"
done < /ks/tests
dmesg | grep 'kvm-on-slat' | sed 's/^/KS dmesg /'
dmesg | grep -E 'WARNING|BUG|INFO: |circular locking|sleeping function|Call trace' |
	sed 's/^/KS splat /'
out "done"
poweroff -f

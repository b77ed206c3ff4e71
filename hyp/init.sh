#!/bin/busybox sh
# The guest's /init: a marker, a workload over tmpfs on every CPU, the
# checksums of its data, then PSCI SYSTEM_OFF (poweroff -f). With
# SLAT_HYP_DEMO=1 on the kernel command line, a shell instead.
/bin/busybox mkdir -p /proc /sys /tmp
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o size=512m tmpfs /tmp
echo "slat-hyp: init up, $(grep -c ^processor /proc/cpuinfo) cpus," \
	"$(cut -d' ' -f1 /proc/uptime) s"
if [ "$SLAT_HYP_DEMO" = 1 ]; then
	echo "slat-hyp: a shell; 'poweroff -f' ends the run"
	setsid cttyhack sh
	poweroff -f
fi
# 18 bytes doubled 20 times: 18 MiB, the output of
# yes 'slat-hyp workload' | head -n 1048576 on the host.
echo 'slat-hyp workload' > /tmp/a
i=0
while [ $i -lt 20 ]; do
	cat /tmp/a /tmp/a > /tmp/t
	mv /tmp/t /tmp/a
	i=$((i + 1))
done
# Two copies at once, so that both CPUs write fresh memory.
dd if=/tmp/a of=/tmp/b bs=1M 2>/dev/null &
dd if=/tmp/a of=/tmp/c bs=1M 2>/dev/null &
wait
for f in /tmp/b /tmp/c; do
	set -- $(sha256sum $f)
	echo "slat-hyp: sha256 $1"
done
echo "slat-hyp: workload done, $(cut -d' ' -f1 /proc/uptime) s"
poweroff -f

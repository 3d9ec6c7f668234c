#!/bin/sh
# /init of the Dom0 initramfs (tests/xen, see XEN-IN-QEMU.md section 4).
# Knobs arrive on the Dom0 kernel command line: xt_n= xt_maxf= xt_wd=
# xt_scale= (XT_SCALE: the timeouts' factor, xt-lib.sh) xt_pvh_migrate=
# (XT_PVH_MIGRATE: nf-migrate.sh pvh migrates too)
# (xt_bench=1: make bench-xen, bench/xen/tcg/scenario.sh instead of the tests;
# xt_only=doorbell: nf-scenario.sh's doorbell part alone, xt_only=driver:
# nf-driver.sh alone, xt_only=migrate: nf-migrate.sh alone, xt_only=pvh:
# nf-pvh.sh and nf-migrate.sh pvh; XT_ONLY)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm /dev/hugepages; mount -t devpts devpts /dev/pts
# PVH Dom0 (xt_pvh=1): hugepages reserved on the kernel command line
grep -q xt_pvh=1 /proc/cmdline && mount -t hugetlbfs hugetlbfs /dev/hugepages
N=512; MAXF=16; WD=150
for a in $(cat /proc/cmdline); do
	case $a in
	xt_n=*) N=${a#xt_n=} ;;
	xt_maxf=*) MAXF=${a#xt_maxf=} ;;
	xt_wd=*) WD=${a#xt_wd=} ;;
	xt_scale=*) export XT_SCALE=${a#xt_scale=} ;;
	xt_pvh_migrate=*) export XT_PVH_MIGRATE=${a#xt_pvh_migrate=} ;;
	esac
done
up() { cut -d' ' -f1 /proc/uptime; }
echo "XT: t=$(up)s dom0 /init up (pages=$N gnttab_max_frames=$MAXF watchdog=${WD}s)"
dump() {
	timeout 10 xl list
	for f in /var/log/xen/console/*; do [ -f "$f" ] && { echo "== $f"; tail -n 40 "$f"; }; done
	dmesg | grep -iE 'gntshare|grant' | tail -n 20
	for f in /tmp/core*.log /run.log; do [ -f "$f" ] && { echo "== $f"; grep -v '^EAL' "$f" | tail -n 30; }; done
}
( sleep "$WD"; echo "XT: watchdog fired after ${WD}s"; dump; echo "XT-DONE rc=watchdog"; poweroff -f ) &
for m in xen-privcmd xenfs xen-evtchn xen-gntdev; do insmod /lib/modules/$m.ko; done
insmod /lib/modules/xen-gntalloc.ko limit=4096
if ! insmod /lib/modules/gntshare.ko; then
	echo "XT-CHECK FAIL module-loads: insmod gntshare.ko failed"; dump
	echo "XT-DONE rc=1"; poweroff -f
fi
echo "XT-CHECK ok module-loads (gntshare.ko on $(uname -r), grant_table.free_per_iteration=$(cat /sys/module/grant_table/parameters/free_per_iteration 2>/dev/null || echo n/a))"
mount -t xenfs xenfs /proc/xen
mkdir -p /etc/xen /var/run/xen /var/run/xenstored /var/lib/xen /var/lib/xenstored \
	/var/log/xen/console /var/lock
touch /etc/xen/xl.conf
xenstored --pid-file=/var/run/xen/xenstored.pid
xenconsoled --pid-file=/var/run/xen/xenconsoled.pid --log=guest --log-dir=/var/log/xen/console
xen-init-dom0 >/dev/null
head -c1 /dev/random >/dev/null         # CRNG ready before xl (libuuid), XEN-IN-QEMU.md 12
echo "XT: t=$(up)s xenstored, xenconsoled, CRNG ready"
RC=0
if grep -q xt_bench=1 /proc/cmdline; then	# make bench-xen
	xb-scenario || RC=1
	echo "XT: t=$(up)s bench finished rc=$RC"
	[ $RC = 0 ] || dump
	echo "XT-DONE rc=$RC"
	poweroff -f
fi
# XT_ONLY: one phase alone (XT_ONLY=doorbell: nf-scenario.sh's part of it)
only=$(sed -n 's/.*xt_only=\([a-z]*\).*/\1/p' /proc/cmdline)
if [ -n "$only" ]; then
	case $only in
	migrate) nf-migrate.sh pv || RC=1 ;;
	driver) nf-driver.sh || RC=1 ;;
	pvh)	# as on a real Xen host: tests/xen/real-host/run.sh's run stage
		# (nf-pvh.sh, nf-migrate.sh pvh) on what run.sh built into /
		mig=--no-migrate
		[ "${XT_PVH_MIGRATE:-0}" = 1 ] && mig=""
		bash /usr/bin/real-host/run.sh --run-only --out / $mig || RC=1
		cat /run.log ;;
	*) nf-scenario.sh || RC=1 ;;
	esac
	echo "XT: t=$(up)s xt-dom0 finished rc=$RC"
	[ $RC = 0 ] || dump
	echo "XT-DONE rc=$RC"
	poweroff -f
fi
xl create -q /domU/guest1.cfg && xl create -q /domU/guest2.cfg || RC=$?
D1=$(xl domid guest1 2>/dev/null); D2=$(xl domid guest2 2>/dev/null)
if [ $RC = 0 ] && [ -n "$D1" ] && [ -n "$D2" ]; then
	echo "XT-CHECK ok domains-created (guest1=dom$D1 guest2=dom$D2 at t=$(up)s)"
	xt-dom0 "$N" "$MAXF" "$D1" "$D2"; RC=$?
	echo "XT: t=$(up)s grant tests finished rc=$RC"
	nf-scenario.sh || RC=1
	nf-driver.sh || RC=1
	nf-migrate.sh pv || RC=1
else
	echo "XT-CHECK FAIL domains-created: xl create rc=$RC"; RC=1
fi
echo "XT: t=$(up)s xt-dom0 finished rc=$RC"
[ $RC = 0 ] || dump
echo "XT-DONE rc=$RC"
poweroff -f

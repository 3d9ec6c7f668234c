#!/bin/sh
# /init of the driver domain's initramfs (tests/xen, nf-driver.sh): a PV
# DomU that runs xnv-core --backend xen with the gntshare module, instead
# of Dom0.  NF domains name it with nfv_backend = "drv".  It talks to
# Dom0 through its own XenStore directory (relative paths: data/...):
#   data/core       "up ..." once the core takes NFs, or "down: why"
#   data/forwarded  the counters once port out sent every packet
#   data/cmd        Dom0 writes "stop" when its checks are done
#   data/done       the core's exit status and the output compared
# and prints the core's log on its console (Dom0's xenconsoled log).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm /var/run/dpdk /tmp
for m in xen-evtchn xen-gntdev; do insmod /lib/modules/$m.ko; done
insmod /lib/modules/xen-gntalloc.ko limit=4096
insmod /lib/modules/gntshare.ko || echo "drv: insmod gntshare.ko failed"
for a in $(cat /proc/cmdline); do
	case $a in xt_scale=*) export XT_SCALE=${a#xt_scale=} ;; esac
done
N=$(cat /nf/count)
LOG=/tmp/core.log
. /usr/bin/xt-lib.sh
port_out_done() { snap; [ "$(col out 3)" = "$N" ]; }

xnv-core --no-huge -m 128 -l 0 -- --config /nf/xnv-drv.ini --backend xen >$LOG 2>&1 &
CORE=$!
# its log on the console as it goes (Dom0: /var/log/xen/console/guest-drv.log)
# (not its statistics tables: SIGUSR1, below, prints one per sample)
tail -f $LOG | grep -v -e '^EAL' -e '^ ' -e 'xnv-core statistics' &
if wait_for 90 grep -q "NFs attach from Xen domains" $LOG; then
	xenstore-write data/core "up: $(grep -o 'running in domain [0-9]*, a driver domain' $LOG); $(grep -o 'NFs attach from Xen domains.*' $LOG | cut -c1-120)"
else
	xenstore-write data/core "down: $(grep -v '^EAL' $LOG | tail -n 3 | tr '\n' ' ' | cut -c1-300)"
fi
if wait_for 300 grep -q "NF nf-db.0 attached" $LOG && wait_for 300 port_out_done; then
	xenstore-write data/forwarded "out $(col out 3) nf-da.0 $(col nf-da.0 3)/$(col nf-da.0 4) nf-db.0 $(col nf-db.0 3)/$(col nf-db.0 4) copied-in $(grp blue 8)"
else
	xenstore-write data/forwarded "stuck: out $(col out 3) of $N"
fi
wait_for 600 sh -c 'xenstore-read data/cmd 2>/dev/null | grep -q stop'
snap
pool="blue $(grp blue 6)/$(grp blue 4) free"
kill -TERM $CORE
wait $CORE
rc=$?
cmp=$(xt-pcapcmp /nf/in.pcap /tmp/out.pcap 2>&1)
cmprc=$?
xenstore-write data/done "core exit $rc; $pool; pcap $cmprc: $cmp; $(grep -o 'drops: .*' $LOG | tail -n 1 | cut -c1-200)"
# not poweroff: this domain's XenStore tree, data/done with it, would go
# before Dom0 read it; Dom0 destroys it
sleep 3600
